"""Roles: admin vs anyone, decided by the settings and enforced at the backend's choke points.

The endpoint tests drive a real app on 127.0.0.1 with gradio_client: every endpoint
not meant for everyone must refuse an anonymous caller, and the list of endpoints
is read from the running app, so a new endpoint cannot slip past this test.
"""
import httpx
import pytest
from gradio_client import handle_file

from backend.core import auth
from backend.core.auth import Actor, PermissionDenied
from tests.support.admin import ADMIN_LOGIN
from tests.support.appserver import running_app, workspace_settings
from tests.support.clients import local_client
from tests.support.tiny import solid_image

# Annotators are not admins: /start, /answer and /undo serve anyone, each annotator only their own tasks
# (tests/test_annotate_app.py).
# The Benchmarks tab's reading side (leaderboard, failure browser, Send to Probe): for everyone.
READING = {"/leaderboard", "/leaderboard_csv", "/evaluate_status", "/failure_results", "/failure_subtypes",
           "/failures", "/failure_item", "/disagreements", "/paired_test", "/send_to_probe"}
PUBLIC = {"/probe", "/model_choices", "/login", "/logout", "/start", "/answer", "/undo", *READING}


@pytest.mark.parametrize("env, mode", [
    ({}, "open-local"),
    ({"GRADIO_SERVER_NAME": "0.0.0.0"}, "disabled"),
    ({"GRADIO_SERVER_NAME": "0.0.0.0", **ADMIN_LOGIN}, "password"),
    ({"GRADIO_SERVER_NAME": "0.0.0.0", "SPACE_ID": "lab/app", "COMPLAB_ADMINS": "alice,lab-org"}, "hf-oauth"),
    ({"GRADIO_SERVER_NAME": "0.0.0.0", "SPACE_ID": "lab/app"}, "disabled"),
])
def test_policy_follows_the_settings(tmp_path, env, mode):
    settings = workspace_settings(tmp_path, **env)
    assert auth.policy(settings).mode == mode
    assert auth.default_actor(settings).is_admin == (mode == "open-local")


def test_password_login_and_hugging_face_admins(tmp_path):
    settings = workspace_settings(tmp_path, **ADMIN_LOGIN)
    assert auth.password_login(settings, "admin", "s3cret pass") == Actor("admin", "admin", "password")
    for user, password in (("admin", "wrong"), ("root", "s3cret pass"), ("", "")):
        with pytest.raises(PermissionDenied, match="Wrong user name or password"):
            auth.password_login(settings, user, password)
    space = workspace_settings(tmp_path, SPACE_ID="lab/app", COMPLAB_ADMINS="Alice,lab-org")
    asked = []

    def orgs(names):
        return lambda: asked.append(1) or names
    assert auth.oauth_actor(space, "alice", orgs([])).is_admin and asked == []  # the name decides: no Hub call
    assert auth.oauth_actor(space, "bob", orgs(["lab-org"])).is_admin
    assert not auth.oauth_actor(space, "mallory", orgs(["other"])).is_admin
    assert auth.oauth_actor(space, None, orgs([])) == auth.ANONYMOUS
    with pytest.raises(PermissionDenied, match="Password sign-in is not configured"):
        auth.password_login(space, "admin", "s3cret pass")


@pytest.fixture(scope="module")
def guarded(tiny_checkpoints, tmp_path_factory):
    """An app with the password policy, as a public deployment would run."""
    workspace = tmp_path_factory.mktemp("guarded")
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec], workspace, **ADMIN_LOGIN) as url:
        yield url, workspace


def _example_arguments(endpoint: dict) -> list:
    return [parameter.get("example_input") for parameter in endpoint["parameters"]]


@pytest.mark.system
def test_every_admin_endpoint_refuses_an_anonymous_caller(guarded):
    url, workspace = guarded
    client = local_client(url)
    endpoints = client.view_api(return_format="dict")["named_endpoints"]
    admin_only = sorted(set(endpoints) - PUBLIC)
    assert {"/launch", "/cancel", "/run_status", "/list_runs", "/launch_evaluate", "/launch_sweep", "/sweep_status",
            "/export_patched"} <= set(admin_only)
    for name in admin_only:
        with pytest.raises(Exception, match="needs an admin; you are anonymous"):
            client.predict(*_example_arguments(endpoints[name]), api_name=name)
    assert not (workspace / "runs").exists()


@pytest.mark.system
def test_an_admin_signs_in_and_may_act_in_that_session_only(guarded):
    url, _ = guarded
    admin, stranger = local_client(url), local_client(url)
    with pytest.raises(Exception, match="Wrong user name or password"):
        admin.predict("admin", "guess", api_name="/login")
    status, *_ = admin.predict("admin", "s3cret pass", api_name="/login")
    assert "Signed in as **admin** (admin)" in status
    _choices, table = admin.predict(api_name="/list_runs")
    assert table["data"] == [] or table["headers"][0] == "id"
    with pytest.raises(Exception, match="needs an admin; you are anonymous"):
        stranger.predict(api_name="/list_runs")
    admin.predict(api_name="/logout")
    with pytest.raises(Exception, match="needs an admin; you are anonymous"):
        admin.predict(api_name="/list_runs")


@pytest.mark.system
def test_anyone_may_probe_listed_models_but_not_name_a_server_path(guarded, tiny_checkpoints, tmp_path):
    url, _ = guarded
    image = tmp_path / "red.png"
    solid_image((200, 30, 30)).save(image)
    client = local_client(url)
    summary, table, *_ = client.predict(handle_file(str(image)), "a red square", [tiny_checkpoints.dir_spec],
                                        ["replace"], 0, "", api_name="/probe")
    assert "accuracy vs negatives" in summary and table["data"]
    with pytest.raises(Exception, match="names a file on the server"):
        client.predict(handle_file(str(image)), "a red square", [tiny_checkpoints.file_spec], ["replace"], 0,
                       "", api_name="/probe")


@pytest.mark.system
def test_without_credentials_on_a_public_address_admin_features_are_absent_and_the_page_says_why(
        tiny_checkpoints, tmp_path):
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec], tmp_path,
                     GRADIO_SERVER_NAME="0.0.0.0") as url:
        endpoints = local_client(url).view_api(return_format="dict")["named_endpoints"]
        assert set(endpoints) == {"/probe", "/model_choices", "/start", "/answer", "/undo", *READING}
        config = httpx.get(url + "config").json()
    texts = [c["props"].get("value") for c in config["components"] if c["type"] == "markdown"]
    assert any("Admin features (training, jobs) are off: the app listens on 0.0.0.0" in (t or "") for t in texts)
    assert not any(c["type"] == "tab" and c["props"].get("label") == "Train" for c in config["components"])
