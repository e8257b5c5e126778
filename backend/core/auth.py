"""Who is asking: admin or anyone. Checked at the backend's choke points, not only by hiding a tab.

Admin-only: launching and cancelling jobs, viewing them, naming any server path,
the Hugging Face Jobs target. Anyone may probe. How someone becomes admin
depends on the settings (`policy`):

- ``password``: ``COMPLAB_ADMIN_USER`` and ``COMPLAB_ADMIN_PASSWORD`` are set; the app has a sign-in form.
- ``hf-oauth``: on a Space with ``COMPLAB_ADMINS`` set; "Sign in with Hugging Face", and the user (or
  one of their organisations) must be listed.
- ``open-local``: no credentials and the app is bound to loopback: everyone who can reach it is on this
  machine, so everyone is admin (what a researcher running ``python app.py`` expects).
- ``disabled``: no credentials and bound to another address: admin features are off, and the page says why.

The command line is its own admin: whoever runs ``python -m backend`` already has the machine.

A sign-in (password or Hugging Face) gives the browser a signed credential (`backend.core.credentials`) that
names the admin, the address it signed in from and when it expires (`SESSION_HOURS`); every request is
judged by it anew (`session_actor`), so a reload keeps it, sign-out revokes it everywhere, and a Gradio session
id that leaked is worth nothing from another address or after it ends.
"""
from __future__ import annotations

import getpass
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from backend.core.credentials import Credentials
from backend.core.settings import Settings

ADMIN, GUEST = "admin", "guest"
SESSION_HOURS = 8


class PermissionDenied(PermissionError):
    """An action this actor may not take; the message says what would allow it."""


@dataclass(frozen=True)
class Actor:
    """Someone acting on the app: a name (recorded with what they launch), a role, and how they were identified."""

    name: str
    role: str = GUEST
    via: str = "anonymous"  # anonymous | password | hf-oauth | open-local | cli

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN

    @property
    def trusted_paths(self) -> bool:
        """Whether paths this actor names may lie anywhere (only the machine's own shell user)."""
        return self.via == "cli"


ANONYMOUS = Actor("anonymous")


def cli_actor() -> Actor:
    return Actor(f"{getpass.getuser()} (command line)", ADMIN, "cli")


@dataclass(frozen=True)
class Policy:
    mode: str  # password | hf-oauth | open-local | disabled
    reason: str  # one sentence for the page

    @property
    def admin_possible(self) -> bool:
        return self.mode != "disabled"


def policy(settings: Settings) -> Policy:
    """How admins are recognised with these settings, and a sentence saying so."""
    if settings.admin_user and settings.admin_password:
        return Policy("password", "Sign in as the admin to launch and watch jobs.")
    if settings.on_space and settings.admins:
        return Policy("hf-oauth", "Sign in with Hugging Face to launch and watch jobs (admins only).")
    if settings.loopback_only:
        return Policy("open-local", f"Admin features are on for everyone: the app listens on {settings.server_name} "
                                    "only and no admin credentials are set.")
    return Policy("disabled", f"Admin features (training, jobs) are off: the app listens on {settings.server_name} "
                              "and no admin credentials are set. Set COMPLAB_ADMIN_USER and COMPLAB_ADMIN_PASSWORD "
                              "(or COMPLAB_ADMINS on a Space) and restart.")


def default_actor(settings: Settings) -> Actor:
    """Who a visitor is before signing in: admin only under the open-local policy."""
    if policy(settings).mode == "open-local":
        return Actor("local user", ADMIN, "open-local")
    return ANONYMOUS


def password_login(settings: Settings, user: str, password: str) -> Actor:
    """The admin, if the credentials match (compared in constant time); else `PermissionDenied`."""
    if policy(settings).mode != "password":
        raise PermissionDenied("Password sign-in is not configured on this server (COMPLAB_ADMIN_USER and "
                               "COMPLAB_ADMIN_PASSWORD are not both set).")
    user_ok = hmac.compare_digest((user or "").encode(), settings.admin_user.encode())
    password_ok = hmac.compare_digest((password or "").encode(), settings.admin_password.encode())
    if not (user_ok and password_ok):
        raise PermissionDenied("Wrong user name or password.")
    return Actor(settings.admin_user, ADMIN, "password")


def oauth_actor(settings: Settings, username: str | None, organisations: Callable[[], Iterable[str]]) -> Actor:
    """The actor for a Hugging Face sign-in: admin when the user or one of their organisations is listed.

    `organisations` is called only when the user name alone does not decide (it asks the Hub).
    """
    if not username:
        return default_actor(settings)
    admins = {name.lower() for name in settings.admins}
    if username.lower() in admins or admins & {org.lower() for org in organisations()}:
        return Actor(username, ADMIN, "hf-oauth")
    return Actor(username, GUEST, "hf-oauth")


def admin_sessions() -> Credentials:
    """The issuer of this process's admin credentials (a fresh key: a restart signs admins out)."""
    return Credentials("admin", SESSION_HOURS * 3600)


def open_session(sessions: Credentials, actor: Actor, client: str) -> str:
    """The credential of a signed-in actor, bound to the address (`backend.core.ratelimit.client_key`) it signed
    in from."""
    return sessions.issue(actor.name, role=actor.role, via=actor.via, client=client)


def session_actor(settings: Settings, sessions: Credentials, token: object, client: str | None) -> Actor:
    """Who holds `token`: its actor while it is genuine, unexpired, unrevoked and used from the address it was
    issued to (`client` None: no request to compare, e.g. a call from the command line); else who a visitor
    is before signing in."""
    claims = sessions.verify(token)
    if claims is None or (client is not None and claims.get("client") != client):
        return default_actor(settings)
    return Actor(str(claims["sub"]), str(claims.get("role") or GUEST), str(claims.get("via") or "password"))


def hub_organisations(token: str) -> list[str]:
    """The Hugging Face organisations of a signed-in user (one call to the Hub)."""
    from huggingface_hub import whoami
    return [org["name"] for org in whoami(token=token).get("orgs", [])]


def require_admin(actor: Actor, action: str) -> None:
    """Raise `PermissionDenied` unless `actor` is an admin; the message names the action and how to get access."""
    if not actor.is_admin:
        raise PermissionDenied(f"{action[:1].upper()}{action[1:]} needs an admin; you are {actor.name}. "
                               "Sign in as an admin (see the top of the page).")
