"""Annotation under load and through a crash: submit-and-next latency of a crowd at work, and nothing lost.

A crowd of N simulated annotators (default 50), threads of this process, each
with its own `gradio_client.Client` over 127.0.0.1, works against the
annotation-only app (``python app.py --mode annotate``, configured from the
environment as a deployment is) in a process of its own. Each calls /start
with a name of its own, then, until the server ends its session after
``--tasks`` answers: thinks (a pause drawn uniformly from ``--think-ms LOW
HIGH``, default 500-3000 ms: reading a caption and glancing at the images;
seeded per annotator), then /answer (submit and get the next task). The
latency is the wall time of each /answer as the client sees it (queue join,
the submit and the next assignment, one SQLite transaction each, the response
over SSE), with ``download_files=False`` as in bench/annotate_latency.py: a
browser shows the response first and fetches images afterwards. The goal is
p95 < 300 ms. 50 annotators answering every 1.75 s on average is ~28 answers
a second, more than a study's crowd gives (a real step 3 task takes several
seconds to read): the load is pessimistic on purpose.

The campaign: overlap 3, resolution rule "majority", gold rate 0.1. Under
"majority" a task is decided by exactly its ``overlap`` answers (no tie calls
an extra annotator, as "third" does), so the audit can demand exactly 3
answers for every (item, task) an item went through; 3 is odd, so step 3's
image-or-none question never ties. It has enough items that nobody runs dry
(every answer could go to a new item's step 3 and 4, plus two items per
overlap), so every session ends after exactly ``--tasks`` answers. The crowd
leaves some items part-answered and some untouched; the campaign is then
finished by fresh annotators without think time (not timed), in rounds, until
every item is done or dropped.

Acknowledged answers: the client got the next task (or the end of the
session) back without a complaint. Each client keeps a ledger of what it sent;
`tests.support.crowd_audit` then checks the SQLite file: every acknowledged answer
exactly once (by task token, annotator, and the choice its value means for that
task's layout), no row no client sent, nobody answering an (item, task) twice,
every session exactly ``--tasks`` answers, every (item, task) exactly 3
answers, every item done or dropped and no task held.

Crash (``--crash-after-answers N`` or ``--crash-after-s S``): the server is
killed with SIGKILL once N answers were acknowledged (or S seconds into the
load), and started again on the same store and port. Every client whose call
fails (in flight at the kill, sent while the server was down, or sent after the
restart on the session the dead process held) retries, with growing pauses,
until the server answers, re-joins with the same name (/start: the server
knows the annotator by name, and shows the task they hold or their next one),
and goes on. The audit then also checks that each resumed at their next task:
the unacknowledged task again (the answer was not stored: re-asked), or the
one after it (stored), never a task answered before and never a skipped
number. The answers in flight at the kill, and what became of each, are
printed. The latency of a crash run is printed but not judged. (gradio_client
prints a traceback or two when its event stream breaks at the kill: expected.)

Anonymous load (``--probe-guests N``): the full app (``python app.py`` with admin
credentials, as a public Space runs it: the Probe and the Annotate tab in one
process) serves two identical campaigns. The crowd works the first alone (quiet),
then the second while N anonymous guests call /probe back to back
(`bench.probe_guests`); the goal is the flooded /answer p95 within 1.5x of the quiet
one. ``--guests-unlimited`` lifts the per-visitor probe limit in the server, as if
every guest came from an address of its own: only the probes' line holds them.

Ceiling (``--ramp 25,50,100,200,300 --think-ms 3000 9000``): crowds of growing size at a human pace, one
after the other on one annotation server, until the /answer p95 passes 300 ms; prints per size the answers a
second, the p95, the server's CPU per answer and this (client) process's CPU share. The crowd's clients run on
the same 2 cores as the server, so the ceiling printed is the machine's with its own load generator.

    .venv/bin/python bench/annotate_load.py [--annotators 50] [--tasks 20] [--think-ms 500 3000] [--seed 0]
        [--crash-after-answers N | --crash-after-s S | --probe-guests N [--guests-unlimited] | --ramp N1,N2,...]
        [--items 0]
        [--port 0] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import AbstractContextManager, closing, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.probe_guests import GuestFlood, full_server, guest_image, warm_up  # noqa: E402
from tests.support.crowd import (Annotator, Crowd, Sent, annotate, crowd_of, measure, percentile,  # noqa: E402
                                 report, uniform_think)
from tests.support.crowd_audit import Audit, audit  # noqa: E402
from tests.support.crowd_server import ServerProcess, annotate_server, build_campaign  # noqa: E402

BUDGET_MS = 300.0
FLOOD_RATIO = 1.5  # the flooded p95 over the quiet p95, at most
CONFIG = {"overlap": 3, "resolution": "majority", "gold_rate": 0.1, "gold_items": 10, "reclaim_after_s": 3600.0}
RECOVER_S = 300.0  # how long a client keeps trying to re-join a server that went away
FINISH_ROUNDS = 10


@dataclass
class Crash:
    """When to kill the server (after this many acknowledged answers, or seconds into the load) and what
    happened (time.monotonic()): SIGKILL sent, the new process serving; and how many answers were
    acknowledged by the kill."""

    after_answers: int = 0
    after_s: float = 0.0
    load_started: float = 0.0
    killed_at: float = 0.0
    up_at: float = 0.0
    acknowledged_at_kill: int = 0


@dataclass
class Run:
    """One load run: the crowd's measurement (`crowd.measure`), the annotators who finished the campaign,
    the audit, and the crash (None without one)."""

    result: dict
    closers: list[Annotator]
    audit: Audit
    crash: Crash | None
    failures: dict[str, list] = field(default_factory=dict)  # failed calls by cause (see `failure_causes`)

    @property
    def ok(self) -> bool:
        crashed = self.crash is None or self.crash.killed_at > 0
        return self.audit.ok and not self.failures.get("unexpected") and crashed


def campaign_items(annotators: int, tasks: int, overlap: int) -> int:
    """Items enough that every session of a crowd arriving together reserves its whole length from step 3 alone
    (a session's length is what is open when it starts: `backend.annotate.assign`)."""
    return math.ceil(annotators * tasks / overlap) + 2 * overlap


def prepare(workspace: Path, campaign: str, annotators: int, tasks: int, items: int = 0, seed: int = 0) -> Path:
    """The campaign in `workspace`'s store (sized by `campaign_items` unless `items`); returns the store's path."""
    config = CONFIG | {"tasks_per_session": tasks}
    return build_campaign(workspace, campaign, items or campaign_items(annotators, tasks, CONFIG["overlap"]),
                          config, seed)


def load_run(server: ServerProcess, db_path: Path, campaign: str, annotators: int, tasks: int,
             think: Callable, seed: int = 0, crash: Crash | None = None,
             during: AbstractContextManager | None = None) -> Run:
    """The crowd's sessions (with the crash, if any; inside `during`, e.g. guests flooding the Probe), then the
    campaign finished, then the audit."""
    crowd = Crowd(server.url, campaign, think, seed, recover_s=RECOVER_S if crash else 0.0)
    team, page = crowd_of(crowd, [f"{campaign}-{k:03d}" for k in range(annotators)], tasks)
    crasher = threading.Thread(target=_crash, args=(server, crowd, crash)) if crash else None
    if crasher:
        crasher.start()
    with during or nullcontext():
        result = measure(team, lambda annotator: annotate(annotator, crowd, page), None if crash else server.pid)
    crowd.close()
    if crasher:
        crasher.join()
    closers = finish_campaign(server.url, db_path, campaign, seed)
    checked = audit(db_path, campaign, team + closers, finished=True)
    return Run(result, closers, checked, crash, failure_causes(team + closers, crash))


def _crash(server: ServerProcess, crowd: Crowd, crash: Crash) -> None:
    """Kill -9 the server mid-load and start it again on the same store and port (nothing if the crowd
    finished first: then the run fails)."""
    crash.load_started = time.monotonic()
    crowd.wait_for_answers(crash.after_answers or math.inf, crash.after_s or None)
    if crowd.done:
        return
    crash.acknowledged_at_kill, crash.killed_at = crowd.acknowledged, time.monotonic()
    server.kill()
    server.start()
    crash.up_at = time.monotonic()


def finish_campaign(url: str, db_path: Path, campaign: str, seed: int) -> list[Annotator]:
    """Fresh annotators without think time, in rounds (each stops when the server has nothing left for them),
    until every item is done or dropped."""
    closers = []
    for round_ in range(FINISH_ROUNDS):
        open_items, overlap, tasks = _open_items(db_path, campaign)
        if not open_items:
            break
        crowd = Crowd(url, campaign, seed=seed)
        count = max(2 * overlap, math.ceil(open_items * 2 * overlap / tasks))
        team, page = crowd_of(crowd, [f"{campaign}-finish{round_}-{k:02d}" for k in range(count)], None)
        measure(team, lambda annotator: annotate(annotator, crowd, page), None)
        closers += team
    return closers


def _open_items(db_path: Path, campaign: str) -> tuple[int, int, int]:
    """(items neither done nor dropped, overlap, tasks per session)."""
    with closing(sqlite3.connect(db_path)) as conn:
        campaign_id, config = conn.execute("select id, config from campaigns where name = ?", (campaign,)).fetchone()
        open_items = conn.execute("select count(*) from items where campaign_id = ? and gold = 0 and stage not in "
                                  "('done', 'dropped')", (campaign_id,)).fetchone()[0]
    config = json.loads(config)
    return open_items, config["overlap"], config["tasks_per_session"]


def failure_causes(annotators: list[Annotator], crash: Crash | None) -> dict[str, list]:
    """Every failed call by cause. A crash explains those started before the kill and failed after it, those
    started while the server was down, and those that reached the restarted server on the session the dead
    process held; anything else is unexpected (and fails the run)."""
    causes: dict[str, list] = {}
    for annotator in annotators:
        for failure in annotator.failures:
            if crash is None or not crash.killed_at:
                cause = "unexpected"
            elif failure.started < crash.killed_at:
                cause = "in flight at the kill" if failure.ended >= crash.killed_at else "unexpected"
            elif failure.started < crash.up_at:
                cause = "sent or retried while the server was down"
            elif "Start a session first" in failure.error:
                cause = "sent on the session the killed server held"
            else:
                cause = "unexpected"
            causes.setdefault(cause, []).append((annotator.name, failure))
    return causes


def in_flight(annotators: list[Annotator], crash: Crash) -> list[tuple[str, Sent]]:
    """The answers in flight at the kill (sent before it, never answered), with their annotator;
    each one's `fate` says what became of it: "stored" (its annotator was shown the next task) or "re-asked"
    (the same task again)."""
    return [(annotator.name, sent) for annotator in annotators for sent in annotator.sent
            if sent.started < crash.killed_at and not sent.acked]


def print_run(run: Run, label: str) -> bool:
    """Print the latency table, the crash and the audit; whether the run passed (the latency goal too, unless
    it is a crash run)."""
    p95 = report(label, run.result)
    judged = run.crash is None
    print(f"p95 < {BUDGET_MS:.0f} ms: {('PASS' if p95 < BUDGET_MS else 'FAIL') if judged else 'not judged'} "
          f"({p95:.1f} ms{'' if judged else '; a crash run: answers waited through the restart'})")
    answers = sum(len(a.latencies) for a in run.closers)
    print(f"campaign finished by {len(run.closers)} more annotators without think time: {answers} answers")
    if run.crash is not None:
        _print_crash(run)
    run.audit.print()
    unexpected = run.failures.get("unexpected", [])
    print(f"  failed calls, every try counted: {sum(len(v) for v in run.failures.values())} "
          f"({', '.join(f'{cause}: {len(v)}' for cause, v in run.failures.items()) or 'none'})")
    for name, failure in unexpected[:10]:
        print(f"    unexpected: {name} {failure.call}: {failure.error}")
    print(f"AUDIT: {'PASS' if run.ok else 'FAIL'}")
    passed = run.ok and (not judged or p95 < BUDGET_MS)
    print(f"RESULT: {'PASS' if passed else 'FAIL'}")
    return passed


def _print_crash(run: Run) -> None:
    crash, team = run.crash, run.result["annotators"]
    if not crash.killed_at:
        print("CRASH: the crowd finished before the kill was due: FAIL (ask for an earlier crash)")
        return
    flying = in_flight(team, crash)
    fates = Counter(sent.fate or "unresolved" for _, sent in flying)
    later = Counter(s.fate for a in team for s in a.sent if s.started >= crash.killed_at and s.fate)
    print(f"CRASH: kill -9 {crash.killed_at - crash.load_started:.1f} s into the load, after {crash.acknowledged_at_kill} "
          f"acknowledged answers; back on the same store and port {crash.up_at - crash.killed_at:.1f} s later")
    print(f"  answers in flight at the kill: {sum(fates.values())} ({dict(fates) or 'none'}); sent after it, "
          f"before their annotator re-joined: {sum(later.values())} ({dict(later) or 'none'})")
    for name, sent in flying:
        print(f"    {name} task {sent.token} (#{sent.number}, answer {sent.value!r}): {sent.fate or 'unresolved'}")
    resumed = [r for a in team for r in a.resumes]
    print(f"  annotators resumed: {len({a.name for a in team if a.resumes})} "
          f"({sum(r.at_next_task for r in resumed)} of {len(resumed)} resumes at their next task: "
          f"{sum(r.view.token == r.failed.token for r in resumed)} re-asked, "
          f"{sum(r.view.token != r.failed.token for r in resumed)} at the one after)")


def probe_flood(args: argparse.Namespace) -> bool:
    """The crowd on the full app, quiet and then with guests hammering the Probe; whether it passed."""
    from tests.support.appserver import free_port

    low, high = args.think_ms
    with tempfile.TemporaryDirectory(prefix="annotate-flood-") as tmp:
        workspace = args.keep or Path(tmp) / "workspace"
        paths = {name: prepare(workspace, name, args.annotators, args.tasks, args.items, args.seed)
                 for name in ("quiet", "flood")}
        print(f"the full app, {args.annotators} annotators x {args.tasks} tasks, think time uniform {low:g}-{high:g} "
              f"ms; then {args.probe_guests} anonymous guest(s) probing"
              f"{' with no per-visitor limit' if args.guests_unlimited else ''}; {os.cpu_count()} CPU cores, load "
              f"average {os.getloadavg()[0]:.1f} before the run")
        runs = {}
        image = guest_image(Path(tmp))
        with full_server(workspace, args.port or free_port(), args.guests_unlimited) as server:
            took = warm_up(server.url, image)
            print(f"a first probe (the server loads the perturbation engine and the model): {took:.1f} s")
            think = uniform_think(low / 1000, high / 1000)
            runs["quiet"] = load_run(server, paths["quiet"], "quiet", args.annotators, args.tasks, think, args.seed)
            flood = GuestFlood(server.url, args.probe_guests, image)  # while the crowd works, not while it finishes
            runs["flood"] = load_run(server, paths["flood"], "flood", args.annotators, args.tasks, think, args.seed,
                                     during=flood)
        passed = all([print_run(run, f"{name}: {args.annotators} annotators x {args.tasks} tasks")  # both printed
                      for name, run in runs.items()])
        quiet, flooded = (percentile([1000 * t for a in runs[name].result["annotators"] for t in a.latencies], 95)
                          for name in ("quiet", "flood"))
        ratio = flooded / quiet
        print(f"guests during the flooded run: {flood.summary()}")
        steal = {name: 100 * run.result["steal"] for name, run in runs.items()}
        print(f"/answer p95 quiet {quiet:.1f} ms, with guests probing {flooded:.1f} ms: {ratio:.2f}x "
              f"(goal <= {FLOOD_RATIO}x): {'PASS' if ratio <= FLOOD_RATIO else 'FAIL'}; load average "
              f"{os.getloadavg()[0]:.1f} after the run; CPU taken by the host (steal) {steal['quiet']:.0f}% quiet, "
              f"{steal['flood']:.0f}% flooded")
    return passed and ratio <= FLOOD_RATIO


def ramp(args: argparse.Namespace) -> bool:
    """Crowds of growing size at the given pace, one after the other on one server (a campaign each), until the
    /answer p95 passes `BUDGET_MS`: the ceiling is the last size under it. Sessions are not finished nor audited
    (the other modes do that): this measures how many people answering at once the server keeps under budget."""
    from tests.support.appserver import free_port

    sizes = [int(size) for size in args.ramp.split(",")]
    low, high = args.think_ms
    think, rows = uniform_think(low / 1000, high / 1000), []
    with tempfile.TemporaryDirectory(prefix="annotate-ramp-") as tmp:
        workspace = args.keep or Path(tmp) / "workspace"
        for size in sizes:
            prepare(workspace, f"ramp{size}", size, args.tasks, seed=args.seed)
        print(f"ramp {sizes} annotators x {args.tasks} tasks, think time uniform {low:g}-{high:g} ms; "
              f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} before the run")
        with annotate_server(workspace, args.port or free_port()) as server:
            for size in sizes:
                crowd = Crowd(server.url, f"ramp{size}", think, args.seed)
                team, page = crowd_of(crowd, [f"ramp{size}-{k:03d}" for k in range(size)], args.tasks)
                result = measure(team, lambda annotator, c=crowd, p=page: annotate(annotator, c, p), server.pid)
                crowd.close()
                p95, answers = report(f"{size} annotators", result), sum(len(a.latencies) for a in team)
                rows.append((size, answers / result["wall"], p95, 1000 * result["server_cpu"] / max(1, answers),
                             100 * result["client_cpu"] / result["wall"], sum(bool(a.error) for a in team)))
                if p95 > BUDGET_MS:
                    break
    print(f"\n{'annotators':>10} {'answers/s':>9} {'p95 ms':>8} {'server CPU ms/answer':>20} {'client CPU %':>12} "
          f"{'errors':>6}")
    for size, rate, p95, server_ms, client_pct, errors in rows:
        print(f"{size:>10} {rate:>9.1f} {p95:>8.1f} {server_ms:>20.1f} {client_pct:>12.0f} {errors:>6}")
    under = [row[0] for row in rows if row[2] <= BUDGET_MS and not row[5]]
    print(f"ceiling: {max(under) if under else 'below ' + str(sizes[0])} annotators with /answer p95 <= "
          f"{BUDGET_MS:.0f} ms at this pace (load average {os.getloadavg()[0]:.1f} after the run)")
    return bool(under)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=20, help="tasks per session (each annotator answers this many)")
    parser.add_argument("--think-ms", type=float, nargs=2, default=[500.0, 3000.0], metavar=("LOW", "HIGH"),
                        help="pause before each answer, uniform in [LOW, HIGH] ms (default 500 3000)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the think times, the answers and the campaign")
    parser.add_argument("--items", type=int, default=0, help="campaign items (0: enough that nobody runs dry)")
    crash = parser.add_mutually_exclusive_group()
    crash.add_argument("--crash-after-answers", type=int, default=0, help="kill -9 the server after N answers")
    crash.add_argument("--crash-after-s", type=float, default=0.0, help="kill -9 the server S seconds in")
    crash.add_argument("--probe-guests", type=int, default=0,
                       help="the full app, the crowd quiet and then with N anonymous guests hammering the Probe")
    parser.add_argument("--guests-unlimited", action="store_true",
                        help="with --probe-guests: no per-visitor probe limit (only the probes' line)")
    crash.add_argument("--ramp", default="", metavar="N1,N2,...",
                       help="crowds of these sizes one after the other, until the /answer p95 passes the budget")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it (to inspect the store)")
    args = parser.parse_args()

    from tests.support.appserver import free_port

    if args.probe_guests:
        sys.exit(0 if probe_flood(args) else 1)
    if args.ramp:
        sys.exit(0 if ramp(args) else 1)
    crash = Crash(args.crash_after_answers, args.crash_after_s) if args.crash_after_answers or args.crash_after_s \
        else None
    with tempfile.TemporaryDirectory(prefix="annotate-load-") as tmp:
        workspace = args.keep or Path(tmp) / "workspace"
        campaign = "crash" if crash else "load"
        db_path = prepare(workspace, campaign, args.annotators, args.tasks, args.items, args.seed)
        low, high = args.think_ms
        print(f"{args.annotators} annotators x {args.tasks} tasks, think time uniform {low:g}-{high:g} ms (seed "
              f"{args.seed}); campaign {campaign!r}: {CONFIG}; {os.cpu_count()} CPU cores, load average "
              f"{os.getloadavg()[0]:.1f} before the run")
        with annotate_server(workspace, args.port or free_port()) as server:
            run = load_run(server, db_path, campaign, args.annotators, args.tasks,
                           uniform_think(low / 1000, high / 1000), args.seed, crash)
        passed = print_run(run, f"{args.annotators} annotators x {args.tasks} tasks"
                           + (", server killed and restarted mid-load" if crash else ""))
        print(f"load average {os.getloadavg()[0]:.1f} after the run")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
