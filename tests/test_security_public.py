"""Security: what an anonymous visitor of a public deployment can make the server load, read, store or do.

Each test repeats an attempt of the red-team pass (docs/SECURITY.md, "Anonymous visitors") against a real
server on 127.0.0.1 running the app's own launch options, and checks the refusal (or the correct result).
The module's app runs as a public Space does: password policy, behind a proxy that names the client in
X-Forwarded-For, so each visitor here has an address of their own.
"""
from __future__ import annotations

import os
import re
import resource
import socket
import threading
import time
from pathlib import Path

import httpx
import open_clip
import pytest
from gradio_client import Client, handle_file

import app as app_module
from backend import jobs
from backend.annotate.campaigns import CampaignConfig
from backend.core import limits
from backend.core.auth import ADMIN, Actor
from backend.jobs.base import job_dir
from tests.support.annotate_fixtures import toy_campaign
from tests.support.clients import local_client
from tests.support.admin import ADMIN_LOGIN
from tests.support.public_support import SPACE, config_only, hub_repo, public_app
from tests.support.security_support import Page, Visitor
from tests.support.tiny import MODEL_CFG, solid_image
from tests.support.waiting import wait_for

pytestmark = pytest.mark.system

NOT_FOR_VISITORS = "is not a model this server lets visitors probe"


def visitor(url: str, address: str) -> Client:
    return local_client(url, download_files=False, headers={"X-Forwarded-For": address})


def probe(client: Client, image: Path, models: list[str], caption: str = "a red square", extra: str = ""):
    return client.predict(handle_file(str(image)), caption, models, ["replace"], 0, extra, False, api_name="/probe")


def at_the_door(space: dict, address: str) -> tuple[httpx.Response, httpx.Response]:
    """What `address` gets for an image upload and for a probe's queue join, sent as raw HTTP (gradio_client shows
    a refusal at the door as its status only)."""
    headers = {"X-Forwarded-For": address}
    upload = httpx.post(space["url"] + "gradio_api/upload", headers=headers,
                        files=[("files", ("red.png", space["image"].read_bytes(), "image/png"))])
    join = httpx.post(space["url"] + "gradio_api/queue/join", headers=headers,
                      json={"fn_index": min(space["ctx"].guards.probe_events), "data": [], "session_hash": "door"})
    return upload, join


def raw_post(url: str, path: str, declared: int) -> bytes:
    """A POST that declares `declared` bytes of JSON and sends a few: the server's first answer line."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {declared}\r\n\r\n{{\"data\": [".encode())
        return sock.recv(4096)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture(scope="module")
def space(tmp_path_factory, hub_cache):
    """The public app; a campaign; a hub repo whose config declares ViT-bigG (2.5 billion parameters) and holds no
    weights, one that declares the tiny model without weights, and a local folder of the same kind."""
    workspace = tmp_path_factory.mktemp("space")
    huge = hub_repo(hub_cache, "attacker/huge", config_only(open_clip.get_model_config("ViT-bigG-14")))
    empty = hub_repo(hub_cache, "attacker/no-weights", config_only(MODEL_CFG))
    folder = workspace / "models" / "no-weights"
    folder.mkdir(parents=True)
    for name, data in config_only(MODEL_CFG).items():
        (folder / name).write_bytes(data)
    image = workspace / "red.png"
    solid_image((200, 30, 30)).save(image)
    with public_app(workspace, **ADMIN_LOGIN, **SPACE) as (url, ctx):
        toy_campaign(ctx.store.path, ctx.settings.data_dir, "study", 2, CampaignConfig.from_dict({"gold_rate": 0}))
        admin = visitor(url, "192.0.2.1")
        admin.predict("admin", "s3cret pass", api_name="/login")
        yield {"url": url, "ctx": ctx, "image": image, "admin": admin, "huge": huge, "empty": empty,
               "folder": f"local-dir:{folder}"}


def test_a_visitor_probes_the_models_on_disk_and_nothing_that_downloads_or_builds(space):
    url, ctx, image = space["url"], space["ctx"], space["image"]
    guest = visitor(url, "198.51.100.1")
    summary, *_ = probe(guest, image, ["toyworld"])
    assert "toyworld" in summary and "not loaded" not in summary
    before = peak_rss_mb()
    for spec in (space["huge"], "hf-hub:laion/CLIP-ViT-bigG-14-laion2B-39B-b160k", "ViT-L-14-quickgelu:openai",
                 "catalog:negclip"):
        with pytest.raises(Exception, match=NOT_FOR_VISITORS):
            probe(guest, image, [spec])
    assert set(ctx.registry.loaded()) == {"toyworld"}
    assert peak_rss_mb() - before < 200  # before: +1.8 GB for a config of 300 bytes
    summary, *_ = probe(guest, image, ["toyworld", space["huge"]])  # the allowed one scores, the other is named
    assert "toyworld" in summary and NOT_FOR_VISITORS in summary


def test_an_admin_gets_the_parameter_budget_before_anything_is_built(space):
    admin, image, ctx = space["admin"], space["image"], space["ctx"]
    before, started = peak_rss_mb(), time.perf_counter()
    with pytest.raises(Exception, match="declares a model of 2,539,567,105 parameters; this server loads models "
                                        "of at most 500,000,000"):
        probe(admin, image, [space["huge"]])
    assert peak_rss_mb() - before < 300 and time.perf_counter() - started < 60
    assert space["huge"] not in ctx.registry.loaded()


def test_no_weights_is_an_error_never_a_model_with_random_weights(space):
    admin, image, ctx = space["admin"], space["image"], space["ctx"]
    with pytest.raises(Exception, match="none of its weights could be loaded, and a model with random weights "
                                        "scores by chance"):
        probe(admin, image, [space["empty"]])
    with pytest.raises(Exception, match="holds no weights file .* so the model would have random weights"):
        probe(admin, image, [space["folder"]])
    assert not {space["empty"], space["folder"]} & set(ctx.registry.loaded())


def test_a_visitor_gets_a_few_probes_a_minute_and_a_refused_probe_costs_none(space):
    guest = visitor(space["url"], "198.51.100.2")
    for _ in range(3):  # refused before any work: not counted
        with pytest.raises(Exception, match=NOT_FOR_VISITORS):
            probe(guest, space["image"], ["hf-hub:attacker/huge"])
    for _ in range(limits.GUEST_PROBES_PER_MINUTE):
        probe(guest, space["image"], ["toyworld"])
    # The next is refused at the door (`ui.limits.ProbeGate`): its upload, before Gradio stores it.
    with pytest.raises(Exception, match=r"429 Too Many Requests' for url '\S+/gradio_api/upload'"):
        probe(guest, space["image"], ["toyworld"])
    spent = r"Visitors may run 6 probes a minute: wait \d+ s \(or sign in as an admin\)\."
    for refused in at_the_door(space, "198.51.100.2"):
        assert refused.status_code == 429 and re.fullmatch(spent, refused.json()["detail"]), refused.text
        assert 0 < int(refused.headers["retry-after"]) <= 60
    assert guest.predict(api_name="/model_choices")  # the visitor's other calls go through
    summary, *_ = probe(visitor(space["url"], "198.51.100.3"), space["image"], ["toyworld"])  # another visitor
    assert "toyworld" in summary
    summary, *_ = probe(space["admin"], space["image"], ["toyworld"])  # admins are not counted
    assert "toyworld" in summary


def test_probes_wait_in_a_short_line_and_the_rest_are_told_the_server_is_busy(space):
    line, holding, release = space["ctx"].guards.probe_line, [], threading.Event()

    def hold():
        with line.slot():
            holding.append(1)
            release.wait(60)

    holders = [threading.Thread(target=hold) for _ in range(line.running + line.waiting)]
    for holder in holders:
        holder.start()
    try:
        wait_for(lambda: line.admitted == line.running + line.waiting, what="the line to fill")
        started = time.perf_counter()
        with pytest.raises(Exception, match=r"429 Too Many Requests' for url '\S+/gradio_api/queue/join"):
            probe(visitor(space["url"], "198.51.100.4"), space["image"], ["toyworld"])  # at the door, not queued
        assert time.perf_counter() - started < 30
        upload, join = at_the_door(space, "198.51.100.4")
        assert upload.status_code == 200  # an image may be for a later probe
        assert join.status_code == 429 and join.json()["detail"].startswith("The server is busy with other probes: "
                                                                            "try again in a minute")
    finally:
        release.set()
        for holder in holders:
            holder.join()
    summary, *_ = probe(visitor(space["url"], "198.51.100.4"), space["image"], ["toyworld"])
    assert "toyworld" in summary


def test_the_body_cap_has_no_hole_but_gradios_upload_route(space):
    url = space["url"]
    two_mb = b'{"data": ["' + b"a" * 2_000_000 + b'"]}'
    for path in ("gradio_api/call/upload", "gradio_api/upload/", "gradio_api/x/upload", "gradio_api/queue/join"):
        response = httpx.post(url + path, content=two_mb, headers={"content-type": "application/json"})
        assert response.status_code == 413 and "Request too large" in response.json()["detail"], path
    assert raw_post(url, "/gradio_api/call/upload", 300 * 2**20).startswith(b"HTTP/1.1 413")  # before it is read


def test_uploads_are_one_file_at_a_time(space):
    url = space["url"]
    files = [("files", (f"part{k}.png", b"x" * (15 * 2**20), "image/png")) for k in range(2)]
    response = httpx.post(url + "gradio_api/upload", files=files, headers={"X-Forwarded-For": "198.51.100.5"})
    assert response.status_code == 413 and "One upload at a time" in response.json()["detail"]
    chunked = httpx.post(url + "gradio_api/upload", content=(b"x" * 1024 for _ in range(4)),
                         headers={"content-type": "multipart/form-data; boundary=x"})
    assert chunked.status_code == 411
    small = httpx.post(url + "gradio_api/upload", files=[("files", ("ok.png", b"x" * 1000, "image/png"))])
    assert small.status_code == 200 and Path(small.json()[0]).is_file()


def test_a_probe_leaves_no_file_on_the_server(space):
    settings = space["ctx"].settings
    _, _, _, csv_file, json_file = probe(space["admin"], space["image"], ["toyworld"])
    cache = Path(os.environ.get("GRADIO_TEMP_DIR") or app_module.gradio_utils.get_upload_folder()).resolve()
    for offered in (csv_file, json_file):
        assert Path(offered["path"]).resolve().is_relative_to(cache)  # handed out from Gradio's cache
    assert not list(settings.downloads_dir.glob("probe-*")) and not list(settings.workspace.rglob("probe-*.csv"))


def test_an_upload_budget_per_visitor_and_for_everyone(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "UPLOAD_BYTES_PER_CLIENT", 3 * 2**20)
    monkeypatch.setattr(limits, "UPLOAD_BYTES_TOTAL", 5 * 2**20)
    with public_app(tmp_path, **ADMIN_LOGIN, **SPACE) as (url, _):
        def upload(address: str) -> httpx.Response:
            return httpx.post(url + "gradio_api/upload", headers={"X-Forwarded-For": address},
                              files=[("files", (f"{time.time_ns()}.png", os.urandom(2**20), "image/png"))])

        assert [upload("203.0.113.1").status_code for _ in range(2)] == [200, 200]
        refused = upload("203.0.113.1")
        assert refused.status_code == 429 and "Too many uploads for now" in refused.json()["detail"]
        assert [upload("203.0.113.2").status_code for _ in range(3)] == [200, 200, 429]  # everyone's 5 MB


def test_uploads_are_deleted_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(app_module, "CLEAN_CACHE", (1, 1))
    with public_app(tmp_path, **ADMIN_LOGIN) as (url, _):
        stored = Path(httpx.post(url + "gradio_api/upload", files=[("files", ("x.png", b"x" * 1000, "image/png"))]
                                 ).json()[0])
        assert stored.is_file()
        wait_for(lambda: not stored.exists(), timeout=30, what="Gradio's delete_cache to remove the upload")


def test_the_annotation_app_takes_no_upload(tmp_path):
    with public_app(tmp_path, annotate_only=True, **ADMIN_LOGIN) as (url, ctx):
        response = httpx.post(url + "gradio_api/upload", files=[("files", ("x.png", b"x" * 1000, "image/png"))])
        assert response.status_code == 404 and response.json()["detail"] == "This server takes no uploads."


def test_dns_rebinding_reaches_nothing_on_the_open_local_app(tmp_path):
    """No credentials, loopback only: everyone who reaches the app is admin, so the Host must be this machine."""
    with public_app(tmp_path) as (url, ctx):
        port = url.rstrip("/").rsplit(":", 1)[1]
        page = Page(url)
        backup = page.handler("backup_database")
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{int(port) + 1}", f"127.0.0.1.nip.io:{port}"):
            assert httpx.get(url, headers={"host": host}).status_code == 403
            outcome = Visitor(url, headers={"host": host}).call(backup, [None])
            assert outcome.error is not None and "HTTP 403" in outcome.error and "answers only to" in outcome.error
        assert not list(ctx.settings.downloads_dir.glob("lab-backup-*"))
        for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
            outcome = Visitor(url, headers={"host": host}).call(backup, [None])
            assert outcome.error is None and outcome.data[0]["path"].endswith(".db")


def served(url: str, path: Path) -> int:
    return httpx.get(f"{url}gradio_api/file={path}").status_code


def test_only_examples_are_served_of_everything_the_workspace_holds(tmp_path):
    """A generate job run as the app runs it (its config and log go where the job system puts them), a manifest
    and a campaign file in the data folder, the store, the backup's tables, a run's checkpoint, a download:
    every file under the workspace is fetched; only images of examples come back (campaign images go to
    annotators under opaque names only: `test_annotate_images.py`)."""
    with public_app(tmp_path, **ADMIN_LOGIN) as (url, ctx):
        settings = ctx.settings
        toy_campaign(ctx.store.path, settings.data_dir, "study", 2, CampaignConfig.from_dict({"gold_rate": 0}))
        admin = Actor("admin", ADMIN, "password")
        job_id = jobs.submit(admin, "generate", {"campaign": "study", "preset": "toyworld", "db": str(settings.db),
                                                 "data_dir": str(settings.data_dir), "images_per_item": 4},
                             store=ctx.store, settings=settings)
        wait_for(lambda: ctx.store.get_job(job_id)["status"] in ("done", "failed"), timeout=240, what="the job")
        folder = job_dir(ctx.store.get_job(job_id), settings)
        assert (folder / "job.yaml").is_file() and (folder / "job.log").is_file()
        assert not folder.is_relative_to(settings.data_dir)
        (settings.data_dir / "manifest.csv").write_text("image,caption\nx.png,a cat\n")
        (settings.data_dir / "campaigns" / "study" / "job.yaml").write_text("db: lab.db\nseed: 7\n")  # left by old code
        (settings.data_dir / "campaigns" / "_tables").mkdir(exist_ok=True)
        (settings.data_dir / "campaigns" / "_tables" / "answers-1.jsonl").write_text('{"choice": "1"}\n')
        (settings.data_dir / "campaigns" / "_tables" / "look.png").write_bytes(b"not served either")
        (settings.runs_dir / "r1").mkdir(parents=True)
        (settings.runs_dir / "r1" / "open_clip_model.safetensors").write_bytes(b"weights")
        (settings.workspace / "examples").mkdir(exist_ok=True)
        solid_image((0, 0, 200)).save(settings.workspace / "examples" / "blue.png")
        (settings.workspace / "examples" / "notes.txt").write_text("not an image")
        campaigns = settings.data_dir / "campaigns"
        expected, got = {}, {}
        for path in sorted(p for p in settings.workspace.rglob("*") if p.is_file()):
            public = path.suffix == ".png" and path.is_relative_to(settings.workspace / "examples")
            expected[str(path)], got[str(path)] = 200 if public else 403, served(url, path)
        assert got == expected
        assert sum(path.is_relative_to(campaigns) and path.suffix in (".png", ".webp") for path in
                   settings.workspace.rglob("*")) >= 10  # originals, candidates, display copies: all refused
        assert {"job.yaml", "job.log", "manifest.csv", "lab.db"} <= {Path(p).name for p, s in got.items() if s == 403}
        assert httpx.get(f"{url}gradio_api/file=https://example.com/x.png").status_code == 403
        assert served(url, Path("/etc/passwd")) == 403
