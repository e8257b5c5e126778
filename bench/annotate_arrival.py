"""What one participant's arrival and one submit-and-next cost the annotation server, with and without
issue 22's cuts (`ui.signatures`: Gradio's constructor signatures remembered; `ui.session_state.own_entry`: a
session's config entry copied only where Gradio changes it), measured side by side in one run.

Two annotation servers (``python app.py --mode annotate`` as a deployment runs it) serve the same toy campaign,
each in a process of its own: "plain" with `ui.signatures.install` turned off and `own_entry` a deep copy again
(as before the cuts; the only differences), and "cut". In `--rounds` rounds, alternating the servers, this
client (one request at a time, so nothing queues) takes `--arrivals` participants through: their page (a
`gradio_client.Client`: /config and /info; and the study link's page a browser opens, ``GET /study?...``), their
/start (the session's tasks reserved, the page set up), then `--answers` /answer calls each (submit, next task).
It reads the server's CPU time (Linux /proc) around each kind and prints, per kind, the median over rounds of
the server's CPU milliseconds per call on each server and the ratio (cut over plain; lower is better). CPU time,
not wall time: the 2-core machine is shared, and a busy neighbour stretches the wall times of both servers alike
but not their CPU (it still counts in 10 ms ticks: use rounds of 20 calls or more).

    .venv/bin/python bench/annotate_arrival.py [--rounds 5] [--arrivals 20] [--answers 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KINDS = ("page (gradio_client: /config, /info)", "page (browser: GET /study)", "/start", "/answer")
CONFIG = {"overlap": 3, "resolution": "majority", "gold_rate": 0.1, "gold_items": 10, "reclaim_after_s": 3600.0,
          "tasks_per_session": 10}


def serve(kind: str) -> None:
    """The server's process: the annotation app as `app.py --mode annotate` runs it; "plain": as before the
    cuts."""
    from copy import deepcopy

    import app
    from ui import session_state, signatures

    if kind == "plain":
        signatures.install = lambda: None
        session_state.own_entry = deepcopy
    app.main(["--mode", "annotate"])


def server_cpu_ms(pid: int, calls: int, call: Callable[[int], None]) -> float:
    """The server's CPU milliseconds per call, over `calls` calls made one after the other."""
    from tests.support.crowd_server import cpu_seconds

    before = cpu_seconds(pid)
    for k in range(calls):
        call(k)
    return 1000 * (cpu_seconds(pid) - before) / calls


def one_round(server, name: str, arrivals: int, answers: int, round_: int) -> dict[str, float]:
    """Server CPU per call of each kind (`KINDS`) for `arrivals` new participants on `server`."""
    import httpx

    from tests.support.clients import local_client
    from tests.support.crowd import AMBIGUITY_ANSWERS, Page, discard

    clients, views = [], []
    costs = {KINDS[0]: server_cpu_ms(server.pid, arrivals, lambda k: clients.append(
        local_client(server.url, download_files=False)))}
    with httpx.Client(base_url=server.url) as browser:
        costs[KINDS[1]] = server_cpu_ms(server.pid, arrivals, lambda k: browser.get(
            f"study?campaign=arrive&PROLIFIC_PID=p{round_}x{k}&STUDY_ID=s&SESSION_ID=q{k}").raise_for_status())
    page = Page(clients[0])
    costs[KINDS[2]] = server_cpu_ms(server.pid, arrivals, lambda k: views.append(page.read(clients[k].predict(
        "arrive", f"{name}-{round_}-{k}", "", api_name="/start"), "/start")))

    def answer(k: int) -> None:
        who = k % arrivals
        view = views[who]
        value = "none" if "1-4" in view.keys else AMBIGUITY_ANSWERS[0]
        views[who] = page.read(clients[who].predict(view.token, value, api_name="/answer"), "/answer")
        if views[who].message:
            raise RuntimeError(f"the page says: {views[who].message}")

    costs[KINDS[3]] = server_cpu_ms(server.pid, arrivals * answers, answer)
    for client in clients:
        discard(client)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--arrivals", type=int, default=20)
    parser.add_argument("--answers", type=int, default=3, help="answers per participant and round (< 10)")
    parser.add_argument("--serve", choices=["plain", "cut"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    from tests.support.appserver import free_port
    from tests.support.crowd_server import ROOT, ServerProcess, build_campaign

    sessions = args.rounds * args.arrivals
    with tempfile.TemporaryDirectory(prefix="annotate-arrival-") as tmp:
        servers = {}
        for name in ("plain", "cut"):
            workspace = Path(tmp) / name
            build_campaign(workspace, "arrive", sessions * CONFIG["tasks_per_session"] // 5 + 20, CONFIG)
            env = {key: value for key, value in os.environ.items() if not key.startswith(("COMPLAB_", "HF_TOKEN",
                                                                                            "SPACE_ID"))}
            port = free_port()
            env |= {"COMPLAB_WORKSPACE": str(workspace), "GRADIO_SERVER_NAME": "127.0.0.1",
                    "GRADIO_SERVER_PORT": str(port)}
            servers[name] = ServerProcess([sys.executable, str(ROOT / "bench" / "annotate_arrival.py"), "--serve",
                                           name], port, env)
        print(f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} before the run; {args.rounds} "
              f"rounds x {args.arrivals} arrivals x {args.answers} answers per server")
        costs: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in KINDS} for name in servers}
        try:
            for server in servers.values():
                server.start()
            for name, server in servers.items():  # warm-up: the first session of each server makes its templates
                one_round(server, name, 2, 1, -1)
            for round_ in range(args.rounds):
                for name, server in servers.items():
                    for kind, value in one_round(server, name, args.arrivals, args.answers, round_).items():
                        costs[name][kind].append(value)
                time.sleep(0.5)
        finally:
            for server in servers.values():
                server.stop()
    print(f"{'server CPU per call (median of rounds)':40s} {'plain':>9s} {'cut':>12s} {'ratio':>7s}")
    for kind in KINDS:
        plain, ours = (statistics.median(costs[name][kind]) for name in ("plain", "cut"))
        print(f"{kind:40s} {plain:7.1f} ms {ours:9.1f} ms {ours / plain:7.2f}")
    print(f"load average {os.getloadavg()[0]:.1f} after the run")


if __name__ == "__main__":
    main()
