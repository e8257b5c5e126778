"""Annotation page latency: how long "submit an answer and get the next task" takes with a crowd at work.

The annotation-only app (`app.build_annotate_app`, queued and launched as
``python app.py --mode annotate`` does) serves a toy campaign (overlap 2, the
"third annotator" rule, gold rate 0.1 with gold items, candidates drawn by the
real `generate` job with the built-in renderer) from a temporary workspace,
in a process of its own. N simulated annotators, each its own
`gradio_client.Client` (its own Gradio session, so its own server-side
state), call /start once, then /answer (submit and get the next task) until
the server ends their session; by default with no pause in between.

Clients are threads of ONE process, the server another: on 2 cores that
gives the server a core of its own (a Python server runs on one core anyway,
its GIL) and keeps the load generator off it; 20 client processes would be 20
interpreters taking the server's CPU. The client and server CPU per answer are
printed: while the client process stays well under a core, the latency
measured is the server's. Two client costs are not the server's: gradio_client
waits for results by polling every 50 ms (a browser is pushed the result), so
a lone client never sees less than ~50 ms; and it builds a TLS context per
request unless ``ssl_verify=False`` (set here: 127.0.0.1 has no TLS).

Measured: the wall time of each /answer call as the client sees it, over
HTTP on 127.0.0.1: queue join, the handler (the submit and the next
assignment, one SQLite transaction each), Gradio's output handling (the
task's images are copied into Gradio's cache) and the SSE result.
gradio_client downloads output files by default; a browser shows the response
first and fetches images afterwards, in parallel, so the run is made twice, on
two identical campaigns with fresh annotators: with ``download_files=False``
(what the server costs; the PASS/FAIL check reads this one) and with the
downloads (what a client that also fetches the images waits for). Then the
same clients call a one-textbox echo endpoint on a bare Gradio server with the
same queue settings, as often: Gradio's own floor under that load.

With no pause between answers this is a saturation test: N annotators
answering as fast as the server answers are far more load than N people
reading a caption and looking at four images (``--think-ms 3000`` is closer to
that). The latency is then N / throughput (Little's law): it says how many
answers a second one server process sustains. The CPU per call includes the
server's idle cost (Gradio's queue polls every millisecond, ~5% of a core),
which weighs at low rates.

Not measured: a browser's rendering and image decoding, networks beyond
loopback, the first page load (/config, scripts), /start (printed, not
checked).

After each run the SQLite store is checked: no (item, task) has more answers
than overlap + its extra answers, nobody answered an (item, task) twice, and
every annotator's session ended after exactly --tasks answers.

    .venv/bin/python bench/annotate_latency.py [--annotators 20] [--tasks 25] [--think-ms 0] [--port 0]
        [--analytics-every N] [--profile server.prof]
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
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

BUDGET_MS = 300.0
SELECT_ANSWERS = ["1", "2", "3", "4", "1", "2", "3", "4", "none"]  # mostly an image, sometimes none
AMBIGUITY_ANSWERS = ["1", "1", "1", "2", "both"]  # answer button values; the layout shuffles sides


# ---------------------------------------------------------------- server process
def serve(workspace: Path | None, port: int, profile: Path | None) -> None:
    """Run the annotation app as `app.main(["--mode", "annotate"])` does (no `workspace`: the echo app), until
    SIGTERM."""
    import gradio as gr

    from app import build_annotate_app, launch_options
    from backend.encoder import EmbeddingCache
    from backend.models import ModelRegistry
    from backend.store import Store
    from tests.appserver import workspace_settings
    from ui.context import AppContext

    profiles = _profile_all_threads() if profile else []
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    options = {"server_name": "127.0.0.1", "server_port": port, "quiet": True, "prevent_thread_lock": True}
    if workspace is None:
        with gr.Blocks() as demo:
            text = gr.Textbox()
            gr.Button().click(lambda value: value, text, gr.Textbox(), api_name="echo", concurrency_limit=None)
    else:
        settings = workspace_settings(workspace)
        ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                         model_choices=[], default_models=[], store=Store(settings.db))
        options = launch_options(ctx) | options
        demo = build_annotate_app(ctx)
    demo.queue(default_concurrency_limit=2).launch(**options)
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


def positions(client, api_name: str) -> dict[str, int]:
    """Where an endpoint's outputs hold the task token, the key hint and the end-of-session text. The API
    names outputs after their kind only, so they are found by kind: the one Textbox is the token, the
    Markdown before it the key hint, the first Markdown the end-of-session text (see ui/annotate.py)."""
    returns = client.view_api(return_format="dict", print_info=False)["named_endpoints"][api_name]["returns"]
    kinds = [output["component"] for output in returns]
    token = kinds.index("Textbox")
    return {"token": token, "keys": token - 1, "done": kinds.index("Markdown")}


def check_outputs(outputs: tuple, where: dict[str, int]) -> None:
    """Fail loudly if the outputs are not where `positions` says (the page changed)."""
    if not str(outputs[where["token"]]).isdigit() or "Keys:" not in str(outputs[where["keys"]]):
        raise SystemExit(f"unexpected outputs (did ui/annotate.py change?): {outputs!r:.400}")


def annotate(annotator: Annotator, campaign: str, think_s: float, where: dict[str, dict[str, int]]) -> None:
    """One annotator's session: /start, then /answer until the session ends (timing each /answer)."""
    rng = random.Random(annotator.name)
    try:
        started = time.perf_counter()
        outputs = annotator.client.predict(campaign, annotator.name, api_name="/start")
        annotator.start_s = time.perf_counter() - started
        at = where["/start"]
        check_outputs(outputs, at)
        while outputs[at["token"]]:
            answer = rng.choice(SELECT_ANSWERS if "1-4" in outputs[at["keys"]] else AMBIGUITY_ANSWERS)
            if think_s:
                time.sleep(rng.uniform(0.5, 1.5) * think_s)
            started = time.perf_counter()
            outputs = annotator.client.predict(outputs[at["token"]], answer, api_name="/answer")
            annotator.answers.append(time.perf_counter() - started)
            at = where["/answer"]
        done = outputs[at["done"]]
        annotator.finished = isinstance(done, dict) and done.get("visible") is True
    except Exception as error:  # noqa: BLE001 - reported with the results, not swallowed
        annotator.error = f"{type(error).__name__}: {error}"


def measure(clients: list[Annotator], work: Callable[[Annotator], None], server_pid: int) -> dict:
    """Run `work` for every client on a thread of its own, all starting at once; return the clients with the
    wall time and the CPU time the server and this (the clients') process spent meanwhile."""
    go = threading.Barrier(len(clients) + 1)

    def run(client: Annotator) -> None:
        go.wait()
        work(client)

    threads = [threading.Thread(target=run, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    server_cpu, client_cpu = cpu_seconds(server_pid), time.process_time()
    go.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {"annotators": clients, "wall": wall, "server_cpu": cpu_seconds(server_pid) - server_cpu,
            "client_cpu": time.process_time() - client_cpu}


def clients(url: str, names: list[str], download: bool | Path) -> list[Annotator]:
    from gradio_client import Client

    # ssl_verify=False: gradio_client makes a new HTTP client, whose TLS context loads the CA bundle, for every
    # request (~50 ms of client CPU); 127.0.0.1 has no TLS, so this changes nothing but the client's cost.
    return [Annotator(name, Client(url, verbose=False, download_files=download, ssl_verify=False))
            for name in names]


def run_crowd(url: str, campaign: str, count: int, download: bool | Path, think_s: float,
              server_pid: int) -> dict:
    """`count` annotators doing a whole session each in `campaign`."""
    annotators = clients(url, [f"{campaign}-annotator-{k:02d}" for k in range(count)], download)
    where = {api: positions(annotators[0].client, api) for api in ("/start", "/answer")}
    return measure(annotators, lambda annotator: annotate(annotator, campaign, think_s, where), server_pid)


def run_floor(url: str, count: int, calls: int, think_s: float, server_pid: int) -> dict:
    """`count` clients calling the echo endpoint `calls` times each, as the annotators call /answer."""
    def echo(client: Annotator) -> None:
        rng = random.Random(client.name)
        for _ in range(calls):
            if think_s:
                time.sleep(rng.uniform(0.5, 1.5) * think_s)
            started = time.perf_counter()
            client.client.predict("an answer", api_name="/echo")
            client.answers.append(time.perf_counter() - started)

    return measure(clients(url, [f"echo-{k:02d}" for k in range(count)], False), echo, server_pid)


def start_server(port: int, workspace: Path | None, profile: Path | None, analytics_every: int) -> subprocess.Popen:
    command = [sys.executable, str(Path(__file__).resolve()), "--port", str(port)]
    command += ["--serve", str(workspace)] if workspace is not None else ["--serve-echo"]
    if profile:
        command += ["--profile", str(profile.resolve())]
    env = dict(os.environ)
    if analytics_every:
        env["GRADIO_ANALYTICS_CACHE_FREQUENCY"] = str(analytics_every)
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    wait_until_up(f"http://127.0.0.1:{port}/", server)
    return server


def stop_server(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)


# ---------------------------------------------------------------- report
def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def report(label: str, result: dict, what: str = "/answer") -> float:
    """Print the latency table of one run; returns its p95 in ms."""
    times = [t * 1000 for a in result["annotators"] for t in a.answers]
    starts = [a.start_s * 1000 for a in result["annotators"] if a.start_s]
    errors = [f"{a.name}: {a.error}" for a in result["annotators"] if a.error]
    print(f"\n{what} latency, {label}")
    if not times:
        print("  no answers recorded")
        return math.inf
    p95 = percentile(times, 95)
    print(f"  n={len(times)}  p50={statistics.median(times):.1f} ms  p95={p95:.1f} ms  "
          f"p99={percentile(times, 99):.1f} ms  max={max(times):.1f} ms  mean={statistics.fmean(times):.1f} ms")
    print(f"  throughput {len(times) / result['wall']:.1f} calls/s over {result['wall']:.1f} s wall"
          + (f"; /start p50 {statistics.median(starts):.0f} ms, max {max(starts):.0f} ms" if starts else ""))
    print(f"  CPU per call: server {1000 * result['server_cpu'] / len(times):.1f} ms "
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
    parser.add_argument("--think-ms", type=float, default=0.0,
                        help="mean pause before each answer, drawn from 0.5-1.5x this (default none)")
    parser.add_argument("--analytics-every", type=int, default=0,
                        help="GRADIO_ANALYTICS_CACHE_FREQUENCY for the servers (unset: app.py's 1000; Gradio's own "
                             "default 1 summarises up to 10,000 past events with pandas after every event)")
    parser.add_argument("--profile", type=Path, help="write the annotation server's cProfile (all threads) here")
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it (to inspect the store)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # internal: the annotation app's workspace
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)  # internal: the echo app
    args = parser.parse_args()
    if args.serve or args.serve_echo:
        serve(args.serve, args.port, args.profile)
        return

    from tests.appserver import free_port

    port = args.port or free_port()
    items = args.items or math.ceil(args.annotators * args.tasks / 2) + 10
    think_s = args.think_ms / 1000
    ok, p95s = True, {}
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        tmp = str(args.keep or tmp)
        workspace, downloads = Path(tmp) / "workspace", Path(tmp) / "client-downloads"
        names = ["bench-no-downloads", "bench-downloads"]
        started = time.perf_counter()
        db_path = build_campaigns(workspace, names, items, args.tasks)
        print(f"{len(names)} campaigns of {items} toy items (+ gold), 4 candidates each, built in "
              f"{time.perf_counter() - started:.1f} s; {args.annotators} annotators x {args.tasks} tasks, "
              f"think time {args.think_ms:g} ms; {os.cpu_count()} CPU cores, load average "
              f"{os.getloadavg()[0]:.1f} before the run; Gradio analytics summary every "
              f"{args.analytics_every or 1000} event(s)")
        server = start_server(port, workspace, args.profile, args.analytics_every)
        try:
            for name, download in zip(names, (False, downloads)):
                label = "no downloads (gradio_client download_files=False)" if download is False else \
                    "with downloads (gradio_client fetches the images of each task)"
                result = run_crowd(f"http://127.0.0.1:{port}/", name, args.annotators, download, think_s, server.pid)
                p95s[name] = report(label, result)
                ok &= check_store(db_path, name, result["annotators"], args.tasks)
                ok &= not any(a.error for a in result["annotators"])
        finally:
            stop_server(server)
    server = start_server(port, None, None, args.analytics_every)
    try:
        floor = report("Gradio's floor: a one-textbox echo app, same queue settings, same clients and calls",
                       run_floor(f"http://127.0.0.1:{port}/", args.annotators, args.tasks, think_s, server.pid),
                       what="/echo")
    finally:
        stop_server(server)
    p95 = p95s[names[0]]
    print(f"\n/answer p95 (no downloads) / echo p95: {p95 / floor:.2f}; with downloads: {p95s[names[1]]:.1f} ms; "
          f"load average {os.getloadavg()[0]:.1f} after the run")
    print(f"p95 < {BUDGET_MS:.0f} ms (no downloads): {'PASS' if p95 < BUDGET_MS else 'FAIL'} ({p95:.1f} ms)")
    print(f"store checks: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok and p95 < BUDGET_MS else 1)


if __name__ == "__main__":
    main()
