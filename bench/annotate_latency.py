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

After each run the SQLite store is checked (`tests.support.crowd_audit`): every
acknowledged answer stored once with its value, no (item, task) with more
answers than overlap + its extra answers, nobody answering an (item, task)
twice, every annotator's session ended after exactly --tasks answers. The
server process, the annotators' sessions and the latency table are
`tests.support.crowd`'s, shared with bench/annotate_load.py (the crowd at a human pace,
and through a crash).

    .venv/bin/python bench/annotate_latency.py [--annotators 20] [--tasks 25] [--think-ms 0] [--port 0]
        [--analytics-every N] [--profile server.prof]
"""
from __future__ import annotations

import argparse
import math
import os
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.crowd import Annotator, Crowd, annotate, crowd_of, measure, report, uniform_think  # noqa: E402
from tests.support.crowd_audit import audit  # noqa: E402
from tests.support.crowd_server import ServerProcess, build_campaign  # noqa: E402

BUDGET_MS = 300.0
CONFIG = {"overlap": 2, "resolution": "third", "gold_rate": 0.1, "gold_items": 10, "reclaim_after_s": 3600.0}


# ---------------------------------------------------------------- server process
def serve(workspace: Path | None, port: int, profile: Path | None) -> None:
    """Run the annotation app as `app.main(["--mode", "annotate"])` does (no `workspace`: the echo app), until
    SIGTERM."""
    import gradio as gr

    from app import build_annotate_app, launch_options
    from backend.core.store import Store
    from backend.models.registry import EmbeddingCache, ModelRegistry
    from tests.support.appserver import workspace_settings
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


def bench_server(port: int, workspace: Path | None, profile: Path | None,
                            analytics_every: int) -> ServerProcess:
    """This script in `serve` mode: the annotation app (or the echo app) with an optional profiler."""
    command = [sys.executable, str(Path(__file__).resolve()), "--port", str(port)]
    command += ["--serve", str(workspace)] if workspace is not None else ["--serve-echo"]
    if profile:
        command += ["--profile", str(profile.resolve())]
    env = dict(os.environ)
    if analytics_every:
        env["GRADIO_ANALYTICS_CACHE_FREQUENCY"] = str(analytics_every)
    return ServerProcess(command, port, env)  # started (and stopped) by `with`


def run_crowd(url: str, campaign: str, count: int, tasks: int, download: bool | Path, think_s: float,
              server_pid: int) -> dict:
    """`count` annotators doing a whole session each in `campaign`, pausing 0.5-1.5x `think_s` per answer."""
    crowd = Crowd(url, campaign, uniform_think(0.5 * think_s, 1.5 * think_s), download=download)
    annotators, page = crowd_of(crowd, [f"{campaign}-annotator-{k:02d}" for k in range(count)], tasks)
    return measure(annotators, lambda annotator: annotate(annotator, crowd, page), server_pid)


def run_floor(url: str, count: int, calls: int, think_s: float, server_pid: int) -> dict:
    """`count` clients calling the echo endpoint `calls` times each, as the annotators call /answer."""
    crowd = Crowd(url, "", uniform_think(0.5 * think_s, 1.5 * think_s))

    def echo(client: Annotator) -> None:
        rng = random.Random(client.name)
        for _ in range(calls):
            time.sleep(crowd.think(rng))
            started = time.perf_counter()
            client.client.predict("an answer", api_name="/echo")
            client.latencies.append(time.perf_counter() - started)

    return measure([Annotator(f"echo-{k:02d}", crowd.client()) for k in range(count)], echo, server_pid)


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

    from tests.support.appserver import free_port

    port = args.port or free_port()
    items = args.items or math.ceil(args.annotators * args.tasks / 2) + 10
    think_s = args.think_ms / 1000
    ok, p95s = True, {}
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        tmp = str(args.keep or tmp)
        workspace, downloads = Path(tmp) / "workspace", Path(tmp) / "client-downloads"
        names = ["bench-no-downloads", "bench-downloads"]
        started = time.perf_counter()
        config = CONFIG | {"tasks_per_session": args.tasks}
        db_path = [build_campaign(workspace, name, items, config, seed) for seed, name in enumerate(names)][0]
        print(f"{len(names)} campaigns of {items} toy items (+ gold), 4 candidates each, built in "
              f"{time.perf_counter() - started:.1f} s; {args.annotators} annotators x {args.tasks} tasks, "
              f"think time {args.think_ms:g} ms; {os.cpu_count()} CPU cores, load average "
              f"{os.getloadavg()[0]:.1f} before the run; Gradio analytics summary every "
              f"{args.analytics_every or 1000} event(s)")
        with bench_server(port, workspace, args.profile, args.analytics_every) as server:
            for name, download in zip(names, (False, downloads)):
                label = "no downloads (gradio_client download_files=False)" if download is False else \
                    "with downloads (gradio_client fetches the images of each task)"
                result = run_crowd(server.url, name, args.annotators, args.tasks, download, think_s, server.pid)
                p95s[name] = report(label, result)
                checked = audit(db_path, name, result["annotators"], finished=False)
                checked.print()
                ok &= checked.ok and not any(a.error for a in result["annotators"])
    with bench_server(port, None, None, args.analytics_every) as server:
        floor = report("Gradio's floor: a one-textbox echo app, same queue settings, same clients and calls",
                       run_floor(server.url, args.annotators, args.tasks, think_s, server.pid), what="/echo")
    p95 = p95s[names[0]]
    print(f"\n/answer p95 (no downloads) / echo p95: {p95 / floor:.2f}; with downloads: {p95s[names[1]]:.1f} ms; "
          f"load average {os.getloadavg()[0]:.1f} after the run")
    print(f"p95 < {BUDGET_MS:.0f} ms (no downloads): {'PASS' if p95 < BUDGET_MS else 'FAIL'} ({p95:.1f} ms)")
    print(f"store checks: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok and p95 < BUDGET_MS else 1)


if __name__ == "__main__":
    main()
