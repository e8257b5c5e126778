"""The Space-build script's checks, run against the app served in this process: they pass on Gradio's real OAuth
path as a Space takes it, and they fail on an app that is not configured as the Space it claims to be.

The build itself (fresh venv, a few minutes) runs in CI as `make space-check`. Gradio reads the
Space's OAuth variables once, at import, so they are set on its `gradio.oauth` module here.
(Its local mock of the sign-in needs a Hugging Face token and the network, so it cannot be served here.)
"""
import importlib.util
from pathlib import Path

import gradio.oauth
import pytest

from tests.support.appserver import running_app

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("space_build", ROOT / "scripts" / "space_build.py")
space_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(space_build)


@pytest.fixture
def provider():
    server = space_build.FakeProvider()
    yield server
    server.shutdown()


def test_card_as_the_script_reads_it():
    card = space_build.card()
    assert card["sdk"] == "gradio" and card["python_version"] == "3.11"
    assert card["hf_oauth_scopes"] == ["read-memberships"]


@pytest.fixture
def space(tmp_path, provider, monkeypatch):
    """The environment of the Space build, applied to this process's Gradio; yields (base URL, environment)."""
    env = space_build.space_env(Path("/usr/bin/python3"), tmp_path, 7860, provider, ["read-memberships"])
    for name in ("SYSTEM", "SPACE_ID", "SPACE_HOST"):
        monkeypatch.setenv(name, env[name])
    for name in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
        monkeypatch.setattr(gradio.oauth, name, env[name])
    with running_app(tmp_path, ["toyworld"], tmp_path, SPACE_ID=env["SPACE_ID"],
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
        with pytest.raises(space_build.CheckFailed, match="not the provider's authorization endpoint.*never read"):
            space_build.check_oauth(base, env, other)
    finally:
        other.shutdown()


@pytest.mark.system
def test_page_check_refuses_an_app_without_the_hugging_face_sign_in(tmp_path):
    with running_app(tmp_path, ["toyworld"], tmp_path) as url:  # loopback, no Space: the open-local policy
        with pytest.raises(space_build.CheckFailed, match="no 'Sign in with Hugging Face' button"):
            space_build.check_page(url.rstrip("/"))
