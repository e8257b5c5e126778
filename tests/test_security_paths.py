"""Security: every parameter that names a server file or folder, Gradio's file route, and oversized requests.

One real app under the password policy, launched with the app's own launch
options (served and blocked folders, the request cap), downloads in their own
folder as in production. Path attempts are made by a signed-in admin (anyone
else is refused before any path is looked at: tests/test_security_endpoints.py),
except the Probe's, which anyone may call. Each is refused with a message saying
why, and nothing appears outside the workspace. `bench/oversized_requests.py`
times the oversized requests.
"""
from __future__ import annotations

import json
import os

import httpx
import pytest
from gradio_client import handle_file

from backend.annotate import mirror
from backend.annotate.campaigns import CampaignConfig
from backend.core.auth import ADMIN, Actor
from backend.core.store import Store
from backend.jobs.kinds import get_kind
from backend.jobs.service import confine_config
from tests.support.admin import ADMIN_LOGIN
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.clients import TIMEOUT, local_client
from tests.support.security_support import (
    LARGE,
    Page,
    Visitor,
    oversized_bodies,
    oversized_calls,
    served_app,
)
from tests.support.tiny import solid_image

OUTSIDE = "outside the allowed folders"
SLUG = "is not allowed: use 1-100 letters"
NUL = "contains a NUL byte"
MISSING = "does not exist"
TRAVERSALS = ["/etc/passwd", "../../etc/passwd", "{outside}/x", "~/x", "data/etc-link/passwd", "/etc/passwd\x00.csv"]
EXPECTED = [OUTSIDE, OUTSIDE, OUTSIDE, OUTSIDE, OUTSIDE, NUL]
BAD_NAMES = ["../owned", "owned/x", "..", "/etc/owned", "a\x00b", "%2e%2e%2fowned", "{outside}"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The app; an admin signed in; a campaign; a symlink to /etc inside the served data folder; a sweep to export
    from; a run's checkpoint, a patched model and a campaign export on disk; a folder outside every root."""
    workspace, outside = tmp_path_factory.mktemp("lab"), tmp_path_factory.mktemp("outside")
    env = {"COMPLAB_DOWNLOADS_DIR": str(workspace / "downloads"), **ADMIN_LOGIN}
    seed = workspace_settings(workspace, **env)
    store = Store(seed.db)
    toy_campaign(seed.db, seed.data_dir, "study", 2, CampaignConfig.from_dict({"gold_rate": 0}))
    (seed.data_dir / "etc-link").symlink_to("/etc")
    (seed.data_dir / "campaigns" / "study" / "passwd.png").symlink_to("/etc/passwd")
    (seed.data_dir / "items.csv").write_text("image,caption,negative_caption\nx.png,a cat,a dog\n")
    (seed.data_dir / "probe.json").write_text(json.dumps({"rows": []}))
    for folder in (seed.runs_dir / "r1" / "best", seed.models_dir / "patched" / "p1", seed.downloads_dir / "study"):
        folder.mkdir(parents=True)
    (seed.runs_dir / "r1" / "best" / "open_clip_model.safetensors").write_bytes(b"weights")
    (seed.models_dir / "patched" / "p1" / "open_clip_model.safetensors").write_bytes(b"weights")
    (seed.downloads_dir / "study" / "answers.csv").write_text("campaign,annotator\nstudy,5f1a2b3c4d5e6f7a8b9c0d1e\n")
    mirror.tables_folder(seed).mkdir(parents=True)  # the Space backup's tables, beside the served campaign images
    (mirror.tables_folder(seed) / "answers-20261123T000000-1-ab12.jsonl").write_text('{"external_id": "5f1a2b"}\n')
    store.create_job("sweep", {"pretrained": "toyworld", "finetuned": "toyworld:random"}, actor="admin")
    with served_app(workspace, ["toyworld"], **env) as (url, settings):
        admin = local_client(url, download_files=False)
        admin.predict("admin", "s3cret pass", api_name="/login")
        admin.predict(api_name="/list_campaigns")  # the campaign menus of this session now list "study"
        yield url, settings, Visitor(url, admin.session_hash), outside
        assert not any(outside.iterdir()), f"created outside the workspace: {list(outside.iterdir())}"
        assert not [name for name in os.listdir("/etc") if name.startswith("owned")]


# (handler, the form's other fields by label, the field attacked, the values tried, what each must say)
ATTACKS = [
    ("launch", {"Data": "manifest"}, "Run name", BAD_NAMES, [SLUG] * len(BAD_NAMES)),
    ("launch", {"Data": "manifest"}, "Manifest (CSV/JSONL, for data = manifest)",
     [*TRAVERSALS, "..%2F..%2Fetc%2Fpasswd"], [*EXPECTED, MISSING]),
    ("launch", {}, "Base model", ["local-dir:../../etc", "ViT-B-32:/etc/passwd", "ViT-B-32:../../workspace/lab.db",
                                  "local-dir:data/etc-link", "ViT-B-32:{outside}/x.pt", "ViT-B-32:/etc/x\x00.pt"],
     [OUTSIDE] * 5 + [NUL]),
    ("launch_sweep", {"Finetuned model (alpha = 1)": "toyworld"}, "Pretrained model (alpha = 0)",
     ["local-dir:../../etc", "ViT-B-32:/etc/passwd", "local-dir:data/etc-link"], [OUTSIDE] * 3),
    ("launch_evaluate", {}, "Models", [["local-dir:../../etc"], ["ViT-B-32:/etc/passwd"]], [OUTSIDE] * 2),
    ("launch_evaluate", {}, "Benchmarks", [["campaign:../../etc"], ["campaign:../downloads/study"]], [SLUG] * 2),
    ("export_patched", {"Sweep": 1, "Alpha": 0.5}, "Patched model name", BAD_NAMES, [SLUG] * len(BAD_NAMES)),
    ("create_campaign", {"Items from": "file", "File": "data/items.csv"}, "Name", BAD_NAMES,
     [SLUG] * len(BAD_NAMES)),
    ("create_campaign", {"Items from": "file", "Name": "c1"}, "File", TRAVERSALS, EXPECTED),
    ("create_campaign", {"Items from": "file", "Name": "c2", "File": "data/items.csv"}, "Images folder",
     ["/etc", "../..", "{outside}", "data/etc-link", "/etc\x00"], [OUTSIDE] * 4 + [NUL]),
    ("create_campaign", {"Items from": "probe", "Name": "c3"}, "File", TRAVERSALS, EXPECTED),
    ("create_campaign", {"Items from": "probe", "Name": "c4", "File": "data/probe.json"}, "Probed image",
     TRAVERSALS, EXPECTED),
    ("export_campaign", {"Campaign": "study"}, "Folder (optional)",
     ["/etc/owned", "../../owned", "{outside}/export", "data/etc-link/owned", "/tmp/x\x00"], [OUTSIDE] * 4 + [NUL]),
    ("launch_generation", {"Campaign": "study", "Image generator": "custom"}, "Model (custom)",
     ["/etc", "../../etc", "{outside}", "data/etc-link", "x/../../../etc"], [OUTSIDE] * 5),
]


@pytest.mark.system
@pytest.mark.parametrize("handler, form, field, values, expected", ATTACKS,
                         ids=[f"{a[0]}:{a[2]}" for a in ATTACKS])
def test_every_path_an_admin_types_stays_inside_the_allowed_folders(lab, handler, form, field, values, expected):
    url, settings, admin, outside = lab
    page = Page(url)
    dependency = page.handler(handler)
    jobs_before = len(Store(settings.db).list_jobs(limit=1000))
    for value, message in zip(values, expected):
        value = json.loads(json.dumps(value).replace("{outside}", str(outside)))
        outcome = admin.call(dependency, page.arguments(dependency, {**form, field: value}))
        assert outcome.error is not None and message in outcome.error, f"{field}={value!r}: {outcome.text}"
    assert len(Store(settings.db).list_jobs(limit=1000)) == jobs_before


@pytest.mark.system
def test_anyone_probing_names_no_server_file(lab, tmp_path):
    url, settings, _, _ = lab
    image = tmp_path / "red.png"
    solid_image((200, 30, 30)).save(image)
    client = local_client(url, download_files=False)
    for spec in ("local-dir:../../etc", "ViT-B-32:/etc/passwd", "ViT-B-32:../../workspace/lab.db",
                 f"local-dir:{settings.data_dir / 'etc-link'}", f"ViT-B-32:{settings.db}"):
        with pytest.raises(Exception, match="names a file on the server"):
            client.predict(handle_file(str(image)), "a red square", [spec], ["replace"], 0, "", api_name="/probe")
    page = Page(url)
    probe = page.handler("probe")
    for path in ("/etc/passwd", str(settings.db), "../../etc/passwd"):  # an "upload" that was never uploaded
        upload = {"path": path, "orig_name": "x.png", "meta": {"_type": "gradio.FileData"}}
        outcome = Visitor(url).call(probe, [upload, "a red square", *page.arguments(probe)[2:]])
        # Gradio refuses it before the handler runs ("Cannot move ... it was not uploaded by a user", in the
        # server's log); the caller gets an error without details.
        assert outcome.data is None and outcome.error is not None, outcome.text


@pytest.mark.system
def test_the_file_route_serves_no_campaign_file(lab):
    url, settings, _, _ = lab
    workspace, data = settings.workspace, settings.data_dir
    image = next((data / "campaigns" / "study" / "originals").glob("*.png"))
    refused = [image, settings.db, f"{settings.db}-wal", "/etc/passwd", "lab.db", workspace / "runs" / "r1" / "best" /
               "open_clip_model.safetensors", workspace / "models" / "patched" / "p1" / "open_clip_model.safetensors",
               settings.downloads_dir / "study" / "answers.csv", data / "etc-link" / "passwd",
               mirror.tables_folder(settings) / "answers-20261123T000000-1-ab12.jsonl",
               data / "campaigns" / "study" / "passwd.png", f"{data}/%2e%2e/lab.db", f"{data}/..%2Flab.db",
               "..%2F..%2F..%2F..%2Fetc%2Fpasswd", f"{data}/items.csv%00.png", f"{image}%00"]
    for path in refused:
        response = httpx.get(f"{url}gradio_api/file={path}", timeout=TIMEOUT)
        assert response.status_code in (403, 404), f"{path}: {response.status_code} {response.text[:80]}"


@pytest.mark.system
def test_a_database_backup_is_offered_to_its_admin_only(lab):
    url, settings, _, _ = lab
    admin = local_client(url, download_files=False)
    admin.predict("admin", "s3cret pass", api_name="/login")
    offered = admin.predict(api_name="/backup_database")
    written = sorted(settings.downloads_dir.glob("lab-backup-*.db"))
    assert written and offered != str(written[-1])  # handed out as a copy in Gradio's cache
    assert httpx.get(f"{url}gradio_api/file={written[-1]}", timeout=TIMEOUT).status_code == 403


@pytest.mark.system
def test_oversized_requests_are_refused_and_the_server_answers_the_next_one(lab, tmp_path):
    url, _, _, _ = lab
    image = tmp_path / "red.png"
    solid_image((200, 30, 30)).save(image)
    client = local_client(url, download_files=False)
    token = task_token(client.predict("study", "ann", api_name="/start"))
    for _what, arguments, api_name, message in oversized_calls(image, token):
        with pytest.raises(Exception, match=message):
            client.predict(*arguments, api_name=api_name)
    shown = client.predict(token, LARGE, api_name="/answer")  # an answer that is no answer: named, not echoed
    assert len(json.dumps(shown)) < 20_000 and any("is not an answer to this" in str(value) for value in shown)
    for what, body, statuses in oversized_bodies(Page(url).handler("answer")["id"]):
        response = httpx.post(f"{url}gradio_api/queue/join", content=body,
                              headers={"content-type": "application/json"}, timeout=TIMEOUT)
        assert response.status_code in statuses, f"{what}: {response.status_code} {response.text[:200]}"
        assert response.status_code != 413 or "Request too large" in response.json()["detail"]
    assert task_token(client.predict(token, "1", api_name="/answer")) != token  # and the next answer is served


def test_a_hub_repo_id_never_climbs_a_folder(tmp_path):
    """`owner/name` is fetched from the Hub by the job unless it is a folder; 'x/..' is no repo id (the Hub
    forbids '..'): it is a path, resolved and confined here, not left for the job to read from its own folder."""
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    admin = Actor("admin", ADMIN, "password")
    for model, kept in (("org/model-name", "org/model-name"), ("x/..", str(settings.workspace.resolve()))):
        config = confine_config(get_kind("generate"), {"model": model, "db": str(settings.db)}, admin, settings)
        assert config["model"] == kept
