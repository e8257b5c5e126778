"""The Space-build script's checks, run against the app served in this process: they pass on Gradio's real OAuth
path as a Space takes it, and they fail on an app that is not configured as the Space it claims to be.

The build itself (fresh venv, a few minutes) runs in CI as `make space-check`. Gradio reads the
Space's OAuth variables once, at import, so they are set on its `gradio.oauth` module here.
(Its local mock of the sign-in needs a Hugging Face token and the network, so it cannot be served here.)
One app as the Space serves it, for both OAuth checks.
"""
from pathlib import Path

import gradio.http_server
import gradio.oauth
import pytest

from tests.support.appserver import running_app
from tests.support.space_build_script import space_build


@pytest.fixture(scope="module")
def provider():
    server = space_build.FakeProvider()
    yield server
    server.shutdown()


def test_card_as_the_script_reads_it():
    card = space_build.card()
    assert card["sdk"] == "gradio" and card["python_version"] == "3.11"
    assert card["hf_oauth_scopes"] == ["read-memberships"]


@pytest.mark.system
def test_page_check_refuses_an_app_without_the_hugging_face_sign_in(tmp_path):
    with running_app(tmp_path, ["toyworld"], tmp_path) as url:  # loopback, no Space: the open-local policy
        with pytest.raises(space_build.CheckFailed, match="no 'Sign in with Hugging Face' button"):
            space_build.check_page(url.rstrip("/"))


def _no_reload_server(reloader) -> None:
    """Gradio's Spaces dev-mode hot reload, which every launch with SYSTEM=spaces starts in a thread: its import
    walks every object of this (test) process for half a minute, and `close` waits for it. Not a check's subject."""


@pytest.fixture(scope="module")
def space(tmp_path_factory, provider):
    """The environment of the Space build, applied to this process's Gradio; yields (base URL, environment)."""
    home = tmp_path_factory.mktemp("space")
    env = space_build.space_env(Path("/usr/bin/python3"), home, 7860, provider, ["read-memberships"])
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name in ("SYSTEM", "SPACE_ID", "SPACE_HOST"):
            monkeypatch.setenv(name, env[name])
        for name in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
            monkeypatch.setattr(gradio.oauth, name, env[name])
        monkeypatch.setattr(gradio.http_server, "watchfn_spaces", _no_reload_server)
        with running_app(home, ["toyworld"], home, SPACE_ID=env["SPACE_ID"],
                         COMPLAB_ADMINS=env["COMPLAB_ADMINS"], GRADIO_SERVER_NAME="0.0.0.0") as url:
            yield url.rstrip("/"), env


@pytest.mark.system
def test_checks_pass_on_the_oauth_path_a_space_takes(space, provider):
    base, env = space
    assert space_build.check_page(base) == "Compositionality Lab"
    location = space_build.check_oauth(base, env, provider)
    assert location.startswith(provider.authorize + "?")
    assert "/.well-known/openid-configuration" in provider.requests


@pytest.mark.system
def test_oauth_check_refuses_a_sign_in_that_goes_elsewhere(space):
    base, env = space
    other = space_build.FakeProvider()  # the app was configured with the first provider, not this one
    try:
        with pytest.raises(space_build.CheckFailed, match=r"not the provider's authorization endpoint.*never read"):
            space_build.check_oauth(base, env, other)
    finally:
        other.shutdown()
