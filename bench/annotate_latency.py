"""Annotation page latency: how long "submit an answer and get the next task" takes with a crowd at work.

The annotation-only app (`app.build_annotate_app`, queued and launched as
``python app.py --mode annotate`` does) serves a toy campaign (overlap 2, the
"third annotator" rule, gold rate 0.1 with gold items, real 256 px candidate
PNGs) from a temporary workspace, in a process of its own. N simulated
annotators, each its own `gradio_client.Client` (its own Gradio session, so
its own server-side state), call /start once, then /answer (submit and get
the next task) with no pause until the server ends their session.

Clients are threads of ONE process, the server another: on 2 cores that
gives the server a core of its own (a Python server runs on one core anyway,
its GIL) and keeps the load generator from taking the server's CPU. Client
processes would be 20 interpreters fighting the server for 2 cores. The
price: the client's own work (SSE parsing, JSON, downloads) shares a GIL, so
the client and server CPU time per call are printed too; when the client
process is far from a full core, the latency measured is the server's.

Measured: the wall time of each /answer call as the client sees it, over
HTTP on 127.0.0.1: queue join, the handler (the submit and the next
assignment, each one SQLite transaction), Gradio's postprocessing (the four
candidate images are copied into Gradio's cache) and the SSE result.
gradio_client downloads output files by default; a browser does not wait
for images before showing the response (it fetches them afterwards, in
parallel), so the run is made twice, on two identical campaigns with fresh
annotators: once with ``download_files=False`` (what the server costs; the
number the PASS/FAIL check reads) and once with the downloads (what a client
that also fetches the four images waits for). Zero think time makes this a
worst case: 20 annotators answering every few milliseconds are far more load
than 20 people reading a caption and looking at four images.

Not measured: a browser's rendering and image decoding, network beyond
loopback, the first page load (/config, JS bundles) and /start (printed
separately, not checked).

After each run the SQLite store is checked: no (item, task) has more answers
than overlap + its extra answers, nobody answered an (item, task) twice, and
every annotator's session ended after exactly --tasks answers.

    .venv/bin/python bench/annotate_latency.py [--annotators 20] [--tasks 25] [--port 0] [--profile server.prof]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

BUDGET_MS = 300.0
SELECT_ANSWERS = ["1", "2", "3", "4", "1", "2", "3", "4", "none"]  # mostly an image, sometimes none
AMBIGUITY_ANSWERS = ["1", "1", "1", "2", "both"]  # answer button values; the layout shuffles sides
# Positions in the outputs of /start and /answer alike (they differ at the front): ..., keys, token, message,
# and the end-of-session text 11th from the end (see `probe_outputs`).
TOKEN, KEYS, DONE = -2, -3, -11


# ---------------------------------------------------------------- server process
def serve(workspace: Path, port: int, profile: Path | None) -> None:
    """Run the annotation app as `app.main(["--mode", "annotate"])` does, until SIGTERM."""
    from app import build_annotate_app, launch_options
    from backend.encoder import EmbeddingCache
    from backend.models import ModelRegistry
    from backend.store import Store
    from tests.appserver import workspace_settings
    from ui.context import AppContext

    settings = workspace_settings(workspace)
    ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                     model_choices=[], default_models=[], store=Store(settings.db))
    profiles = _profile_all_threads() if profile else []
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    options = launch_options(ctx) | {"server_name": "127.0.0.1", "server_port": port, "quiet": True,
                                     "prevent_thread_lock": True}
    demo = build_annotate_app(ctx).queue(default_concurrency_limit=2)
    demo.launch(**options)
    print("serving", flush=True)
    stop.wait()
    demo.close()
    if profile:
        _dump_profiles(profiles, profile)


def _profile_all_threads() -> list:
    """cProfile sees one thread; Gradio runs handlers on worker threads and postprocessing on its event
    loop thread. Every thread started from now on gets a profiler of its own; they are merged at the end."""
    import cProfile

    profiles = []

    def start(*_):
        sys.setprofile(None)
        profiler = cProfile.Profile()
        profiles.append(profiler)
        profiler.enable()

    threading.setprofile(start)
    return profiles


def _dump_profiles(profiles: list, path: Path) -> None:
    import pstats

    stats = None
    for profiler in profiles:
        profiler.disable()
        try:
            stats = pstats.Stats(profiler) if stats is None else stats.add(profiler)
        except TypeError:  # a thread that never ran Python code under the profiler
            continue
    if stats is not None:
        stats.dump_stats(str(path))
        stats.sort_stats("cumulative").print_stats(40)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields_ = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields_[11]) + int(fields_[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- set-up
def build_campaigns(workspace: Path, names: list[str], items: int, tasks: int) -> Path:
    from backend.annotate import campaigns
    from backend.store import Store
    from tests.annotate_fixtures import toy_campaign
    from tests.appserver import workspace_settings

    settings = workspace_settings(workspace)
    store = Store(settings.db)
    config = {"overlap": 2, "resolution": "third", "gold_rate": 0.1, "gold_items": 10, "tasks_per_session": tasks,
              "reclaim_after_s": 3600.0}
    for seed, name in enumerate(names):
        toy_campaign(store.path, settings.data_dir, name, items, campaigns.CampaignConfig.from_dict(config), seed)
    return Path(store.path)


def wait_until_up(url: str, server: subprocess.Popen, timeout: float = 120.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode}")
        try:
            if httpx.get(url + "config", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server did not answer at {url} within {timeout:.0f}s")


# ---------------------------------------------------------------- annotators
@dataclass
class Annotator:
    name: str
    client: object
    answers: list[float] = field(default_factory=list)  # seconds per /answer
    start_s: float = 0.0
    finished: bool = False
    error: str = ""


def probe_outputs(outputs: tuple) -> None:
    """Fail loudly if the page's outputs moved (the positions above are what the client reads)."""
    if not str(outputs[TOKEN]).isdigit() or "Keys:" not in str(outputs[KEYS]):
        raise SystemExit(f"unexpected /start outputs (did ui/annotate.py change?): {outputs!r:.400}")


def annotate(annotator: Annotator, campaign: str, think_s: float, go: threading.Barrier) -> None:
    rng = random.Random(annotator.name)
    try:
        go.wait()
        started = time.perf_counter()
        outputs = annotator.client.predict(campaign, annotator.name, api_name="/start")
        annotator.start_s = time.perf_counter() - started
        probe_outputs(outputs)
        while outputs[TOKEN]:
            answer = rng.choice(SELECT_ANSWERS if "1-4" in outputs[KEYS] else AMBIGUITY_ANSWERS)
            if think_s:
                time.sleep(think_s)
            started = time.perf_counter()
            outputs = annotator.client.predict(outputs[TOKEN], answer, api_name="/answer")
            annotator.answers.append(time.perf_counter() - started)
        annotator.finished = isinstance(outputs[DONE], dict) and outputs[DONE].get("visible") is True
    except Exception as error:  # noqa: BLE001 - reported with the results, not swallowed
        annotator.error = f"{type(error).__name__}: {error}"


def run_crowd(url: str, campaign: str, count: int, download: bool | Path, think_s: float,
              server_pid: int) -> dict:
    from gradio_client import Client

    annotators = [Annotator(f"{campaign}-annotator-{k:02d}",
                            Client(url, verbose=False, download_files=download, ssl_verify=False)) for k in range(count)]
    go = threading.Barrier(count + 1)
    threads = [threading.Thread(target=annotate, args=(a, campaign, think_s, go)) for a in annotators]
    for thread in threads:
        thread.start()
    server_cpu, client_cpu = cpu_seconds(server_pid), time.process_time()
    go.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {"annotators": annotators, "wall": wall, "server_cpu": cpu_seconds(server_pid) - server_cpu,
            "client_cpu": time.process_time() - client_cpu}


# ---------------------------------------------------------------- report
def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def report(label: str, result: dict) -> float:
    """Print the latency table of one run; returns its p95 in ms."""
    times = [t * 1000 for a in result["annotators"] for t in a.answers]
    starts = [a.start_s * 1000 for a in result["annotators"] if a.start_s]
    errors = [f"{a.name}: {a.error}" for a in result["annotators"] if a.error]
    print(f"\n/answer latency, {label}")
    if not times:
        print("  no answers recorded")
        return math.inf
    p95 = percentile(times, 95)
    print(f"  n={len(times)}  p50={statistics.median(times):.1f} ms  p95={p95:.1f} ms  "
          f"p99={percentile(times, 99):.1f} ms  max={max(times):.1f} ms  mean={statistics.fmean(times):.1f} ms")
    print(f"  throughput {len(times) / result['wall']:.1f} answers/s over {result['wall']:.1f} s wall; "
          f"/start p50 {statistics.median(starts):.0f} ms, max {max(starts):.0f} ms")
    print(f"  CPU per answer: server {1000 * result['server_cpu'] / len(times):.1f} ms "
          f"({100 * result['server_cpu'] / result['wall']:.0f}% of a core), client "
          f"{1000 * result['client_cpu'] / len(times):.1f} ms ({100 * result['client_cpu'] / result['wall']:.0f}%)")
    for error in errors:
        print(f"  ERROR {error}")
    return p95


def _over_collected(conn: sqlite3.Connection, campaign_id: int, overlap: int) -> tuple[list, int, int]:
    """(item, task)s with more answers than allowed, how many were decided, how many answered at all.

    `extra_answers` (a tie's third annotator) belongs to the task an item is at, and is reset when the
    item moves on; a decided task's allowance is what its decision counted: the votes in its outcome,
    which must also be every answer it has (an answer stored after the decision is one too many)."""
    items = {row[0]: (row[1], row[2], json.loads(row[3] or "{}")) for row in conn.execute(
        "select id, stage, extra_answers, outcome from items where campaign_id = ? and gold = 0", (campaign_id,))}
    counts = conn.execute("select item_id, stage, count(*) from answers where campaign_id = ? and source = "
                          "'annotator' group by item_id, stage", (campaign_id,)).fetchall()
    over, complete = [], 0
    for item_id, task, count in counts:
        if item_id not in items:
            continue  # a gold item: every annotator may answer it
        stage, extra, outcome = items[item_id]
        if task in outcome:
            allowed = sum(outcome[task]["votes"].values())
            complete += 1
            ok = count == allowed <= overlap + 2  # the "third" rule asks for at most overlap + 2
        else:
            allowed = overlap + extra
            ok = count <= allowed
        if not ok:
            over.append((item_id, task, stage, count, allowed))
    return over, complete, sum(1 for item_id, _, _ in counts if item_id in items)


def check_store(db_path: Path, campaign: str, annotators: list[Annotator], tasks: int) -> bool:
    """The assignment guarantees, read back from the SQLite file itself."""
    conn = sqlite3.connect(db_path)
    campaign_id = conn.execute("select id from campaigns where name = ?", (campaign,)).fetchone()[0]
    overlap = 2
    over, complete, answered = _over_collected(conn, campaign_id, overlap)
    twice = conn.execute(
        "select item_id, stage, annotator_id, count(*) from answers where campaign_id = ? and source = "
        "'annotator' group by item_id, stage, annotator_id having count(*) > 1", (campaign_id,)).fetchall()
    per_annotator = dict(conn.execute(
        "select n.external_id, count(a.id) from annotators n left join answers a on a.annotator_id = n.id "
        "where n.campaign_id = ? group by n.id", (campaign_id,)).fetchall())
    gold = conn.execute("select count(*) from answers a join items i on i.id = a.item_id where a.campaign_id = ? "
                        "and i.gold = 1", (campaign_id,)).fetchone()[0]
    total = sum(per_annotator.values())
    conn.close()
    short = {a.name: per_annotator.get(a.name, 0) for a in annotators
             if per_annotator.get(a.name, 0) != tasks or not a.finished}
    checks = [(f"overlap exact: no (item, task) with more answers than overlap + its extra answers "
               f"({answered} item-tasks answered, {complete} decided, {len(over)} over)", not over),
              (f"nobody answered an (item, task) twice ({len(twice)} duplicates)", not twice),
              (f"every session ended after exactly {tasks} answers ({total} answers, {gold} on gold items)",
               not short)]
    print(f"  store checks ({campaign}):")
    for text, ok in checks:
        print(f"    {'PASS' if ok else 'FAIL'}: {text}")
    if short:
        print(f"    sessions that did not end as expected: {short}")
    if over:
        print(f"    over (item, task, stage, answers, allowed): {over}")
    return all(ok for _, ok in checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=25, help="tasks per session (each annotator answers this many)")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--items", type=int, default=0,
                        help="items per campaign (0: enough that no session runs dry even if every item is dropped "
                             "after step 3)")
    parser.add_argument("--think-ms", type=float, default=0.0, help="pause before each answer (default none)")
    parser.add_argument("--profile", type=Path, help="write the server's cProfile (all threads) here")
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it (to inspect the store)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # internal: run the server on this workspace
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.profile)
        return

    from tests.appserver import free_port

    port = args.port or free_port()
    items = args.items or math.ceil(args.annotators * args.tasks / 2) + 10
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        tmp = str(args.keep or tmp)
        workspace, downloads = Path(tmp) / "workspace", Path(tmp) / "client-downloads"
        names = ["bench-no-downloads", "bench-downloads"]
        started = time.perf_counter()
        db_path = build_campaigns(workspace, names, items, args.tasks)
        print(f"{len(names)} campaigns of {items} toy items (+ gold), 4 candidates each, built in "
              f"{time.perf_counter() - started:.1f} s; {args.annotators} annotators x {args.tasks} tasks, "
              f"think time {args.think_ms:g} ms; {os.cpu_count()} CPU cores")
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", str(workspace), "--port", str(port)]
        if args.profile:
            command += ["--profile", str(args.profile.resolve())]
        server = subprocess.Popen(command, cwd=ROOT)
        ok = True
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_until_up(url, server)
            p95s = {}
            for name, download in zip(names, (False, downloads)):
                label = "no downloads (gradio_client download_files=False)" if download is False else \
                    "with downloads (gradio_client fetches the 4 images of each task)"
                result = run_crowd(url, name, args.annotators, download, args.think_ms / 1000, server.pid)
                p95s[name] = report(label, result)
                ok &= check_store(db_path, name, result["annotators"], args.tasks)
                ok &= not any(a.error for a in result["annotators"])
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
    p95 = p95s[names[0]]
    print(f"\np95 < {BUDGET_MS:.0f} ms (no downloads): {'PASS' if p95 < BUDGET_MS else 'FAIL'} ({p95:.1f} ms); "
          f"with downloads: {p95s[names[1]]:.1f} ms")
    print(f"store checks: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok and p95 < BUDGET_MS else 1)


if __name__ == "__main__":
    main()
