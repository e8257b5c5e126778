"""Security: admin sessions that end. Signed, expiring credentials that a reload keeps, sign-out revokes, another
address cannot use, and a password that cannot be guessed at speed; no admin name in the page.

Against a real server on 127.0.0.1 (the app's own launch options), behind a (simulated) Space proxy so that each
caller has an address of its own (X-Forwarded-For). The browser test at the end is what an admin sees.
"""
from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from gradio_client import Client

from backend.core.credentials import Credentials
from tests.support.clients import local_client
from tests.support.admin import ADMIN_LOGIN
from tests.support.public_support import SPACE, public_app
from tests.support.security_support import Page, Visitor
from ui.context import Guards

pytestmark = pytest.mark.system

REFUSED = "needs an admin; you are anonymous"
SIGNED_IN = "Signed in as **admin** (admin)."


def caller(url: str, address: str) -> Client:
    return local_client(url, download_files=False, headers={"X-Forwarded-For": address})


def sign_in(client: Client, password: str = "s3cret pass") -> str:
    """Sign in; returns the credential the browser keeps (the login's outputs: the status line, the browser's
    copy of the credential, the emptied password box)."""
    status, stored, _ = client.predict("admin", password, api_name="/login")
    assert status == SIGNED_IN
    return stored


def page_load(url: str, stored: str, address: str) -> tuple[Visitor, str]:
    """A fresh page (a reload) that hands the server what the browser stored; (its session, its status line)."""
    page = Visitor(url, headers={"X-Forwarded-For": address})
    outcome = page.call(Page(url).handler("_restore"), [stored, None])
    assert outcome.error is None, outcome.error
    return page, outcome.data[1]  # (the state, which the page never sees, the status line, ...)


def admin_call(url: str, session: Visitor) -> str | None:
    """A call only an admin may make (list the campaigns) in `session`: None if it was allowed, else the refusal."""
    return session.call(Page(url).handler("list_campaigns"), [None]).error


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    with public_app(tmp_path_factory.mktemp("sessions"), **ADMIN_LOGIN, **SPACE) as (url, ctx):
        yield url, ctx


def test_a_reload_keeps_the_admin_signed_in(space):
    url, _ = space
    stored = sign_in(caller(url, "192.0.2.10"))
    reloaded, status = page_load(url, stored, "192.0.2.10")
    assert status == SIGNED_IN and admin_call(url, reloaded) is None
    stranger, status = page_load(url, "", "192.0.2.10")  # a page with nothing stored
    assert SIGNED_IN not in status and REFUSED in admin_call(url, stranger)


def test_a_page_load_handled_after_a_sign_in_keeps_the_admin_signed_in(space):
    """A busy server may handle a page's load after the sign-in its visitor made meanwhile (seen in CI: the load
    put back the empty credential the page was loaded with, and the visitor was signed out under their eyes)."""
    url, _ = space
    page = Visitor(url, headers={"X-Forwarded-For": "192.0.2.12"})
    signed_in = page.call(Page(url).handler("login"), ["admin", "s3cret pass"])
    assert signed_in.error is None and signed_in.data[1] == SIGNED_IN
    late_load = page.call(Page(url).handler("_restore"), ["", None])
    assert late_load.error is None and late_load.data[1] == SIGNED_IN
    assert admin_call(url, page) is None


def test_sign_out_revokes_the_credential_in_every_tab(space):
    url, _ = space
    first = caller(url, "192.0.2.11")
    stored = sign_in(first)
    second, _ = page_load(url, stored, "192.0.2.11")  # another tab of the same browser
    assert admin_call(url, second) is None
    first.predict(api_name="/logout")
    assert REFUSED in admin_call(url, second)
    with pytest.raises(Exception, match=REFUSED):
        first.predict(None, api_name="/list_campaigns")
    _, status = page_load(url, stored, "192.0.2.11")  # the copy in the browser is worth nothing now
    assert SIGNED_IN not in status


def test_a_session_id_used_from_another_address_carries_no_rights(space):
    url, _ = space
    admin = caller(url, "192.0.2.12")
    sign_in(admin)
    thief = Visitor(url, session_hash=admin.session_hash, headers={"X-Forwarded-For": "203.0.113.66"})
    assert REFUSED in admin_call(url, thief)
    same_place = Visitor(url, session_hash=admin.session_hash, headers={"X-Forwarded-For": "192.0.2.12"})
    assert admin_call(url, same_place) is None


def test_sign_in_attempts_are_limited_per_address(space):
    url, _ = space
    guesser = caller(url, "203.0.113.9")
    for _ in range(5):
        with pytest.raises(Exception, match="Wrong user name or password"):
            guesser.predict("admin", "guess", api_name="/login")
    with pytest.raises(Exception, match=r"Too many failed sign-ins: wait \d+ s"):
        guesser.predict("admin", "s3cret pass", api_name="/login")  # even the right one, from there, for now
    sign_in(caller(url, "192.0.2.13"))  # the admin elsewhere is not locked out


def test_a_credential_expires(tmp_path):
    """The server's clock is the test's: however slow the machine, the credential is fresh until the clock
    passes its lifetime, then refused."""
    now = [time.time()]
    guards = Guards(sessions=Credentials("admin", lifetime_s=3, clock=lambda: now[0]))
    with public_app(tmp_path, guards=guards, **ADMIN_LOGIN) as (url, _):
        admin = local_client(url, download_files=False)
        sign_in(admin)
        session = Visitor(url, session_hash=admin.session_hash)
        assert admin_call(url, session) is None
        now[0] += 3.5
        assert REFUSED in admin_call(url, session)


def test_the_page_names_no_admin(tmp_path, monkeypatch):
    """On a Space with Hugging Face sign-in (Gradio's real OAuth path, against the Space build's fake provider)."""
    import gradio.oauth

    from tests.support.space_build_script import space_build

    provider = space_build.FakeProvider()
    try:
        env = space_build.space_env(Path("/usr/bin/python3"), tmp_path, 7860, provider, ["read-memberships"])
        for name in ("SYSTEM", "SPACE_ID", "SPACE_HOST"):
            monkeypatch.setenv(name, env[name])
        for name in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
            monkeypatch.setattr(gradio.oauth, name, env[name])
        with public_app(tmp_path, SPACE_ID=env["SPACE_ID"], COMPLAB_ADMINS="alice-the-admin,secret-lab-org",
                        COMPLAB_BACKUP_REPO="off") as (url, _):
            page = httpx.get(url).text + httpx.get(url + "config").text
    finally:
        provider.shutdown()
    assert "Sign in with Hugging Face" in page
    assert "alice-the-admin" not in page and "secret-lab-org" not in page


@pytest.mark.browser
def test_an_admin_who_reloads_the_page_still_sees_the_admin_tabs_until_signing_out(tmp_path, browser):
    from tests.support.browser import new_page, screenshot

    with public_app(tmp_path, **ADMIN_LOGIN) as (url, _), new_page(browser, 60_000) as page:
        page.goto(url)
        train_tab = page.get_by_role("tab", name="Train")
        assert train_tab.count() == 0 or not train_tab.is_visible()
        page.get_by_text("Admin sign-in").click()
        page.get_by_label("Admin user").fill("admin")
        page.get_by_label("Password").fill("s3cret pass")
        page.locator("#sign-in").click()
        page.get_by_text("Signed in as admin (admin).").wait_for()
        page.reload()
        page.get_by_text("Signed in as admin (admin).").wait_for()
        page.get_by_role("tab", name="Train").wait_for()
        screenshot(page, "after-reload.png")
        page.get_by_text("Admin sign-in").click()
        page.locator("#sign-out").click()
        page.get_by_text("Sign in as the admin to launch and watch jobs.").wait_for()
        page.reload()
        page.get_by_text("Sign in as the admin to launch and watch jobs.").wait_for()
        assert not page.get_by_role("tab", name="Train").is_visible()
