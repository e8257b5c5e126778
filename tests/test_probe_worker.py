"""The app's probes run in a worker process of their own (`backend.probe.runner.InWorker`), as a public Space runs
them: `python app.py` with admin credentials, so visitors are anonymous guests.

A guest's probe scores as it does in-process; the web process, which answers the crowd, never loads torch or spaCy
(its memory maps hold neither library); the worker is niced. A worker killed while idle is replaced without a word;
one killed during a probe is replaced, and its visitor reads why instead of a traceback.
"""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe import run_probe
from tests.support.appprocess import app_process
from tests.support.clients import local_client
from tests.support.crowd_server import cpu_seconds
from tests.support.tiny import solid_image
from tests.support.waiting import wait_for

pytestmark = pytest.mark.system

CREDENTIALS = {"COMPLAB_ADMIN_USER": "admin", "COMPLAB_ADMIN_PASSWORD": "worker test"}
CAPTION = "a red circle to the left of a blue square"
STOPPED = "The process that runs probes stopped before it finished"


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc), zombies left out."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and int(parent) == pid and state != "Z":
            found.append(int(entry.name))
    return found


def command(pid: int) -> str:
    return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()


def probe_worker(server: int) -> int | None:
    """The server's probe worker (multiprocessing also starts a resource tracker beside it), if one runs."""
    workers = [pid for pid in children(server) if "spawn_main" in command(pid)]
    return workers[0] if len(workers) == 1 else None


def maps(pid: int) -> str:
    return (Path("/proc") / str(pid) / "maps").read_text()


def probe(client: Client, image: Path) -> tuple:
    return client.predict(handle_file(str(image)), CAPTION, ["toyworld"], ["replace"], 0, "", False,
                          api_name="/probe")


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("worker-space")
    image = workspace / "red.png"
    solid_image((200, 30, 30), size=64).save(image)
    with app_process(workspace, CREDENTIALS) as (url, output):
        server = next(pid for pid in children(os.getpid()) if "app.py" in command(pid))
        yield {"url": url, "output": output, "server": server, "image": image,
               "guest": local_client(url, download_files=False)}


def test_a_guest_probes_in_a_niced_worker_and_the_web_process_loads_no_model_code(space):
    summary, *_, json_file = probe(space["guest"], space["image"])
    assert "toyworld" in summary
    rows = json.loads(Path(json_file["path"]).read_text())["rows"]
    here = run_probe(str(space["image"]), CAPTION, ["toyworld"], ModelRegistry(device="cpu"), EmbeddingCache(),
                     families=["replace"])
    assert [row["text"] for row in rows] == [item.text for item in here.texts]
    assert [row["toyworld score"] for row in rows] == pytest.approx(here.scores["toyworld"], abs=1e-6)

    server, worker = space["server"], probe_worker(space["server"])
    assert worker is not None
    assert os.getpriority(os.PRIO_PROCESS, worker) == min(19, os.getpriority(os.PRIO_PROCESS, server) + 10)
    for library in ("libtorch_cpu", "/spacy/"):  # loaded where the probe ran, never where the crowd is answered
        assert library in maps(worker) and library not in maps(server), library


def test_a_dead_worker_is_replaced_and_the_visitor_of_the_probe_it_was_running_reads_why(space):
    server, guest, image = space["server"], space["guest"], space["image"]
    first = wait_for(lambda: probe_worker(server), what="the probe worker")
    os.kill(first, signal.SIGKILL)  # idle: the next probe runs in a new worker, and nobody is told anything
    wait_for(lambda: probe_worker(server) != first, what="the dead worker to be reaped")
    job = guest.submit(handle_file(str(image)), CAPTION, ["toyworld"], ["replace"], 0, "", False, api_name="/probe")
    # The new worker loads the model code and the perturbation engine in this probe: seconds of CPU. Kill it then.
    second = wait_for(lambda: (pid := probe_worker(server)) and pid != first and cpu_seconds(pid) > 1.0 and pid,
                      timeout=120, what="a new worker, busy with the probe")
    os.kill(second, signal.SIGKILL)
    with pytest.raises(Exception, match=STOPPED):
        job.result(timeout=120)
    summary, *_ = probe(guest, image)  # a third worker
    assert "toyworld" in summary and probe_worker(server) not in (first, second)
    assert "Traceback" not in space["output"].read_text()
