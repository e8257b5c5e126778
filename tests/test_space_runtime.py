"""What the app does differently on a Hugging Face Space: ZeroGPU and the campaign backup by default.

The ZeroGPU server is the real `python app.py` in its own process with the
variables a ZeroGPU Space sets (SPACES_ZERO_GPU, SPACE_ID) and no HF_TOKEN, with
tests/fake_spaces in front of the repository on PYTHONPATH as the `spaces`
package: the fake records each `spaces.GPU` decoration and call (with the
pickled size of its arguments, as ZeroGPU pickles them) in a file. The backup
runs against the fake Hub of tests/support/fake_hub.py.
"""
from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
from gradio_client import handle_file

from backend.annotate import assign, assist, campaigns, db, mirror
from backend.annotate.campaigns import CampaignConfig, ItemSpec
from backend.core.settings import Settings
from backend.core.store import Store
from backend.models.encoder import GPU_SECONDS
from backend.models.loading import load_model
from tests.support.appprocess import app_process
from tests.support.appserver import running_app
from tests.support.clients import local_client
from tests.support.fake_hub import TOKEN, FakeHfApi, FakeHub
from tests.support.forms import form
from tests.support.tiny import solid_image
from tests.support.waiting import wait_for

SPACE = "lab/compositionality"
FAKE_SPACES = Path(__file__).parent / "fake_spaces"
WARNING = "Campaign data will be lost at restart: set the HF_TOKEN secret with write access"
ZERO_GPU_NOTE = "runs on the CPU"


@pytest.fixture(scope="module")
def zero_gpu_space(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("zero-gpu-space")
    log = workspace / "spaces-events.jsonl"
    env = {"SYSTEM": "spaces", "SPACES_ZERO_GPU": "true", "SPACE_ID": SPACE, "FAKE_SPACES_LOG": str(log)}
    with app_process(workspace, env, pythonpath=(FAKE_SPACES,)) as (url, output):
        yield SimpleNamespace(client=local_client(url), url=url, output=output, log=log,
                              store=Store(workspace / "lab.db"))


def events(space, kind: str | None = None) -> list[dict]:
    lines = space.log.read_text().splitlines() if space.log.exists() else []
    return [event for event in map(json.loads, lines) if kind in (None, event["event"])]


def page_components(url: str) -> dict[str, dict]:
    """The page's components with an elem_id, by elem_id (what /config tells the browser to draw)."""
    with urllib.request.urlopen(url + "config", timeout=30) as response:
        config = json.load(response)
    return {c["props"]["elem_id"]: c["props"] for c in config["components"] if c.get("props", {}).get("elem_id")}


@pytest.mark.system
def test_the_probe_scores_inside_spaces_gpu(zero_gpu_space, tmp_path):
    image = tmp_path / "red.png"
    solid_image((200, 30, 30), size=64).save(image)
    # An extra caption rather than a perturbation family: the same scoring path into the GPU function, without
    # waiting for spaCy (the perturbation engine runs on the CPU, outside it, and loads in the background).
    summary, *_ = zero_gpu_space.client.predict(handle_file(str(image)), "a red square", ["toyworld"], [],
                                                0, "a blue square", api_name="/probe")
    assert "toyworld" in summary
    # One GPU function, declared at import with its duration; Gradio's auto-wrap (which would decorate every
    # event handler, a training launch included, without a duration: the fake refuses that) is off.
    [declared] = events(zero_gpu_space, "decorate")
    assert (declared["function"], declared["duration"]) == ("backend.models.encoder.embed_on_device", GPU_SECONDS)
    calls = events(zero_gpu_space, "call")
    assert calls and {call["function"] for call in calls} == {"backend.models.encoder.embed_on_device"}
    assert max(call["arg_bytes"] for call in calls) < 1_000_000  # a handle, pixels and texts: never the model


@pytest.mark.system
def test_a_training_launch_is_a_job_and_never_a_gpu_call(zero_gpu_space):
    before = events(zero_gpu_space)
    message, *_ = zero_gpu_space.client.predict(*form(name="zero-gpu-run", loss="negclip", steps=2, eval_every=2),
                                                api_name="/launch")
    assert "Launched run" in message
    store = zero_gpu_space.store
    [job] = [job for job in store.list_jobs("train") if job["name"] == "zero-gpu-run"]
    assert job["target"] == "local" and job["pid"]
    finished = wait_for(lambda: (row := store.get_job(job["id"]))["status"] not in ("queued", "running") and row,
                        timeout=300, what="the training job to end")
    assert finished["status"] == "done", finished.get("error")
    # Nothing at all: not the launch, and the job's own process (it evaluated, so it imported the encoder)
    # neither imported `spaces` nor decorated anything: it got no ZeroGPU variables.
    assert events(zero_gpu_space) == before


@pytest.mark.system
def test_the_page_and_the_log_tell_admins_what_a_restart_loses(zero_gpu_space):
    shown = page_components(zero_gpu_space.url)
    banner = shown["backup-warning"]
    assert WARNING in banner["value"] and f"`{SPACE}-backup`" in banner["value"] and banner["visible"] is not False
    assert WARNING in shown["campaign-backup-warning"]["value"]
    for note in ("train-zero-gpu-note", "bench-zero-gpu-note", "sweep-zero-gpu-note", "campaign-zero-gpu-note"):
        assert ZERO_GPU_NOTE in shown[note]["value"]
    assert shown["train-target"]["value"] == "hf"  # where a training run gets a GPU on ZeroGPU
    assert WARNING in zero_gpu_space.output.read_text()  # said in the log at start


@pytest.mark.system
def test_the_warning_is_for_admins_only(tmp_path):
    """Under the password policy a visitor does not see the banner; signing in as the admin shows it."""
    with running_app(tmp_path, ["toyworld"], tmp_path, SPACE_ID=SPACE, COMPLAB_ADMIN_USER="admin",
                     COMPLAB_ADMIN_PASSWORD="pw") as url:
        assert page_components(url)["backup-warning"]["visible"] is False
        signed_in = local_client(url).predict("admin", "pw", api_name="/login")
    assert {"visible": True, "__type__": "update"} in list(signed_in)


def backed_up(hub: FakeHub, repo: str) -> dict[str, list[dict]]:
    """The repo's backup rows by table, the latest version of each row."""
    tables: dict[str, dict] = {}
    for name, blob in sorted(hub.repos[repo]["files"].items()):
        if name.endswith(".jsonl"):
            table = Path(name).name.split("-")[0]
            for row in map(json.loads, blob.decode().splitlines()):
                tables.setdefault(table, {})[row["id"]] = row
    return {table: list(rows.values()) for table, rows in tables.items()}


def test_on_a_space_with_a_token_campaigns_go_to_the_default_private_repo(tmp_path):
    hub = FakeHub()
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), "SPACE_ID": SPACE, "HF_TOKEN": TOKEN})
    assert settings.backup_repo == f"{SPACE}-backup" and mirror.warning(settings) == ""
    Store(settings.db)
    backup = mirror.start(settings, api=FakeHfApi(hub), every_minutes=0.002)
    try:
        folder = campaigns.campaign_dir(settings.data_dir, "c1")
        (folder / "display").mkdir(parents=True)
        campaigns.create(settings.db, "c1", [ItemSpec("a red circle", "a blue circle")],
                         CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0}), "test")
        item_id = db.rows(settings.db, "select id from items")[0]["id"]
        for slot, colour in enumerate([(200, 0, 0), (0, 0, 200), (0, 200, 0), (90, 90, 90)]):
            solid_image(colour, size=32).save(folder / "display" / f"{slot}.png")
            campaigns.add_candidate(settings.db, item_id, slot, {"path": f"display/{slot}.png", "seed": slot})
        assist.score_candidates(settings.db, "c1", folder, load_model("toyworld", device="cpu"))
        me = assign.join(settings.db, db.rows(settings.db, "select id from campaigns")[0]["id"], "annotator-1")
        assign.submit(settings.db, me, assign.next_task(settings.db, me).assignment_id, "2")
        backup.flush()
    finally:
        mirror.stop(backup)
    repo = hub.repos[f"{SPACE}-backup"]
    assert repo["private"] is True and "backup/c1/display/1.png" in repo["files"]
    rows = backed_up(hub, f"{SPACE}-backup")
    assert [row["name"] for row in rows["campaigns"]] == ["c1"]
    assert [row["choice"] for row in rows["answers"]] == ["2"]
    assert len(rows["candidates"]) == 4 and all(row["clip_negative"] is not None for row in rows["candidates"])


@pytest.mark.parametrize("env", [{}, {"SPACE_ID": SPACE, "COMPLAB_BACKUP_REPO": "off"}],
                         ids=["not-on-a-space", "turned-off-on-a-space"])
def test_no_backup_off_a_space_or_when_turned_off(tmp_path, env):
    hub = FakeHub()
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), "HF_TOKEN": TOKEN, **env})
    Store(settings.db)
    assert settings.backup_repo == "" and mirror.start(settings, api=FakeHfApi(hub)) is None
    assert hub.repos == {} and mirror.warning(settings) == ""


class RefusingHfApi(FakeHfApi):
    """A token without write access to the namespace: the Hub refuses to create the repo."""

    def create_repo(self, repo_id, **kwargs):
        raise PermissionError(f"403 Forbidden: you cannot create {repo_id}")


def test_a_refused_token_is_a_warning_not_a_crash(tmp_path):
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), "SPACE_ID": SPACE, "HF_TOKEN": TOKEN})
    Store(settings.db)
    assert mirror.start(settings, api=RefusingHfApi(FakeHub())) is None
    try:
        assert "403 Forbidden" in mirror.warning(settings) and "lost at restart" in mirror.warning(settings)
        campaigns.create(settings.db, "c1", [ItemSpec("a red circle", "a blue circle")], CampaignConfig(), "test")
    finally:
        mirror.start(Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path)}))  # forget the failure
    assert db.rows(settings.db, "select name from campaigns") == [{"name": "c1"}]  # the app works without it
