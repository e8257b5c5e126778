"""A simulated crowd against the annotation app: the annotators' sessions and their latency.

Shared by bench/annotate_latency.py (saturation), bench/annotate_load.py (load
and crash) and tests/test_reliability_crowd.py; the server's process is
`tests.support.crowd_server`'s, and `tests.support.crowd_audit` checks what the crowd did
against the SQLite store.

The annotators are threads of the calling process, each with its own `gradio_client.Client` (its
own Gradio session, so its own server-side state). Each keeps a ledger: every
/answer it sent, whether the response came back (the answer is then
*acknowledged*: the page showed the next task, so a person would believe it
saved), every failed call, and where it resumed after one.

With ``Crowd.recover_s`` set, an annotator whose call fails does what a person
whose page broke does: tries again (a fresh page: a new session) until the
server answers, re-joins with the same name (/start), and goes on from the
task the server shows. Without it, the first failure ends that annotator's
session and is reported.
"""
from __future__ import annotations

import math
import os
import random
import re
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.clients import local_client
from tests.support.crowd_server import cpu_seconds, machine_cpu

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SELECT_ANSWERS = ["1", "2", "3", "4", "1", "2", "3", "4", "none"]  # mostly an image, sometimes none
AMBIGUITY_ANSWERS = ["1", "1", "1", "2", "both"]  # answer button values; the layout shuffles sides


# ---------------------------------------------------------------- the page, as a client reads it
class PageChanged(RuntimeError):
    """The outputs are not where `Page` expects them (ui/tabs/annotate.py changed): no retry can help."""


@dataclass(frozen=True)
class View:
    """What one /start or /answer response shows: the task's token ("" once the session is over), its number in
    the session ("**3 / 20**"), the key hint (which kind of task), the message line, and the end-of-session text."""

    token: str
    number: int
    keys: str
    message: str
    done: bool


class Page:
    """Where /start's and /answer's outputs hold what a client needs. The API names outputs after their kind
    only, so they are found by kind: the one Textbox is the task token, the Markdown before it the key hint,
    the one after it the message; the first Markdown is the end-of-session text, the second the counter
    (see `ui.tabs.annotate.AnnotatePage.task_outputs`)."""

    def __init__(self, client):
        endpoints = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
        self.where = {}
        for api in ("/start", "/answer"):
            kinds = [output["component"] for output in endpoints[api]["returns"]]
            token = kinds.index("Textbox")
            markdowns = [k for k, kind in enumerate(kinds) if kind == "Markdown"]
            self.where[api] = {"token": token, "keys": token - 1, "message": token + 1, "done": markdowns[0],
                               "counter": markdowns[1]}

    def read(self, outputs: tuple, api: str) -> View:
        at = self.where[api]
        token, done = outputs[at["token"]], outputs[at["done"]]
        counter = re.match(r"\*\*(\d+) / \d+\*\*", str(outputs[at["counter"]]))
        done = isinstance(done, dict) and done.get("visible") is True
        task_shown = str(token).isdigit() and counter and "Keys:" in str(outputs[at["keys"]])
        if not task_shown and not (token == "" and done):
            raise PageChanged(f"unexpected outputs (did ui/tabs/annotate.py change?): {outputs!r:.400}")
        return View(str(token), int(counter[1]) if counter else 0, str(outputs[at["keys"]]),
                    str(outputs[at["message"]] or ""), done)


# ---------------------------------------------------------------- annotators
@dataclass
class Sent:
    """One /answer request. `acked`: its response came back without a complaint. `fate`, for one that did not:
    what the server showed when its annotator came back: "stored" (the next task) or "re-asked" (this one)."""

    token: str
    value: str
    number: int
    started: float  # time.monotonic()
    ended: float = 0.0
    acked: bool = False
    fate: str = ""


@dataclass(frozen=True)
class Failure:
    call: str  # "connect" (a new client), "/start" or "/answer"
    started: float
    ended: float
    error: str


@dataclass(frozen=True)
class Resume:
    """The first task shown after a failed /answer and a re-join: the failed task again (not stored) or the
    next one (stored); never a task answered before (`earlier`), never a skipped number."""

    failed: Sent
    view: View
    earlier: frozenset[str]  # tokens the server had from this annotator before the failed answer

    @property
    def at_next_task(self) -> bool:
        view, failed = self.view, self.failed
        if view.token in self.earlier:
            return False
        if view.token == failed.token:
            return view.number == failed.number
        return view.number == failed.number + 1 or (view.done and not view.token)


@dataclass
class Annotator:
    name: str
    client: object = None
    quota: int | None = None  # answers their session must end after; None: stops when the server has no task
    latencies: list[float] = field(default_factory=list)  # seconds per acknowledged /answer
    sent: list[Sent] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    resumes: list[Resume] = field(default_factory=list)
    start_s: float = 0.0
    finished: bool = False
    error: str = ""

    def answered(self) -> frozenset[str]:
        """Tokens the server has from this annotator, as far as the client knows."""
        return frozenset(s.token for s in self.sent if s.acked or s.fate == "stored")


@dataclass
class Crowd:
    """Where the crowd works and how: think time before each answer, and how long to keep re-joining a server
    that went away (0: not at all)."""

    url: str
    campaign: str
    think: Callable[[random.Random], float] = lambda rng: 0.0
    seed: int = 0
    download: bool | Path = False
    recover_s: float = 0.0
    call_timeout_s: float = 120.0
    acknowledged: int = 0
    done: bool = False  # the crowd's sessions are over
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def client(self):
        return local_client(self.url, download_files=self.download)

    def call(self, annotator: Annotator, api: str, *args) -> tuple:
        return annotator.client.submit(*args, api_name=api).result(timeout=self.call_timeout_s)

    def acked(self) -> None:
        with self._changed:
            self.acknowledged += 1
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self.done = True
            self._changed.notify_all()

    def wait_for_answers(self, count: float, timeout: float | None) -> None:
        """Block until `count` answers were acknowledged in all, the crowd is done, or `timeout` seconds passed."""
        with self._changed:
            self._changed.wait_for(lambda: self.acknowledged >= count or self.done, timeout)


def discard(client) -> None:
    """Close a `gradio_client.Client` without waiting for it: its close waits up to a second for the heartbeat
    thread, which notices the stop only when its event stream next speaks. Nothing waits for that second here
    (a crowd drops clients after each session and at every failed call)."""
    threading.Thread(target=client.close, name="close-client", daemon=True).start()


def uniform_think(low_s: float, high_s: float) -> Callable[[random.Random], float]:
    return lambda rng: rng.uniform(low_s, high_s) if high_s > 0 else 0.0


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:300]


def annotate(annotator: Annotator, crowd: Crowd, page: Page) -> None:
    """One annotator's session: /start, then think and /answer until the server ends the session."""
    rng = random.Random(f"{crowd.seed}:{annotator.name}")
    try:
        view = _start(annotator, crowd, page)
        while view.token:
            value = rng.choice(SELECT_ANSWERS if "1-4" in view.keys else AMBIGUITY_ANSWERS)
            time.sleep(crowd.think(rng))
            view = _answer(annotator, crowd, page, view, value)
        annotator.finished = view.done
    except Exception as error:  # reported with the results, not swallowed
        annotator.error = describe(error)


def _start(annotator: Annotator, crowd: Crowd, page: Page) -> View:
    """/start with the annotator's name. With recovery, a failure is retried on a new client (a new session)
    with growing pauses until the server answers or `recover_s` has passed."""
    deadline, pause = time.monotonic() + crowd.recover_s, 0.2
    while True:
        started, call = time.monotonic(), "connect"
        try:
            if annotator.client is None:
                annotator.client = crowd.client()
            call = "/start"
            view = page.read(crowd.call(annotator, "/start", crowd.campaign, annotator.name), "/start")
            annotator.start_s = annotator.start_s or time.monotonic() - started
            return view
        except PageChanged:
            raise
        except Exception as error:
            annotator.failures.append(Failure(call, started, time.monotonic(), describe(error)))
            if annotator.client is not None:
                discard(annotator.client)
            annotator.client = None
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause * random.uniform(1.0, 1.5))
            pause = min(1.0, pause * 1.5)


def _answer(annotator: Annotator, crowd: Crowd, page: Page, view: View, value: str) -> View:
    """/answer `value` to the task shown; the next view. A failed call (no response, or a complaint) leaves the
    answer unacknowledged; with recovery the annotator re-joins and the resume is recorded."""
    earlier = annotator.answered()
    sent = Sent(view.token, value, view.number, time.monotonic())
    annotator.sent.append(sent)
    try:
        shown = page.read(crowd.call(annotator, "/answer", view.token, value), "/answer")
        if shown.message:
            raise RuntimeError(f"the page says: {shown.message}")
    except PageChanged:
        raise
    except Exception as error:
        sent.ended = time.monotonic()
        annotator.failures.append(Failure("/answer", sent.started, sent.ended, describe(error)))
        if not crowd.recover_s:
            raise
        discard(annotator.client)
        annotator.client = None
        shown = _start(annotator, crowd, page)
        sent.fate = "re-asked" if shown.token == sent.token else "stored"
        annotator.resumes.append(Resume(sent, shown, earlier))
        return shown
    sent.ended, sent.acked = time.monotonic(), True
    annotator.latencies.append(sent.ended - sent.started)
    crowd.acked()
    return shown


def crowd_of(crowd: Crowd, names: list[str], quota: int | None) -> tuple[list[Annotator], Page]:
    """Annotators with their clients made (before any clock starts), and the page as the API describes it."""
    with ThreadPoolExecutor(8) as pool:
        annotators = [Annotator(name, client, quota) for name, client in zip(names, pool.map(
            lambda _: crowd.client(), names))]
    return annotators, Page(annotators[0].client)


def measure(workers: list[Annotator], work: Callable[[Annotator], None], server_pid: int | None) -> dict:
    """Run `work` for every worker on a thread of its own, all starting at once; return the workers with the
    wall time and the CPU time the server (when `server_pid` is given) and this process spent meanwhile."""
    go, ends = threading.Barrier(len(workers) + 1), []

    def run(worker: Annotator) -> None:
        go.wait()
        work(worker)
        ends.append(time.perf_counter())
        if worker.client is not None:
            discard(worker.client)

    threads = [threading.Thread(target=run, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    server_cpu, client_cpu = cpu_seconds(server_pid) if server_pid else 0.0, time.process_time()
    steal, total = machine_cpu()
    go.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = max(ends) - started
    steal_after, total_after = machine_cpu()
    return {"annotators": workers, "wall": wall,
            "server_cpu": cpu_seconds(server_pid) - server_cpu if server_pid else None,
            "client_cpu": time.process_time() - client_cpu,
            "steal": (steal_after - steal) / max(1, total_after - total)}


# ---------------------------------------------------------------- report
def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile: a value that occurred."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def summary(values_ms: list[float]) -> dict[str, float]:
    return {"n": len(values_ms), "p50": statistics.median(values_ms), "p95": percentile(values_ms, 95),
            "p99": percentile(values_ms, 99), "max": max(values_ms), "mean": statistics.fmean(values_ms)}


def report(label: str, result: dict, what: str = "/answer") -> float:
    """Print the latency table of one run; returns its p95 in ms."""
    times = [t * 1000 for a in result["annotators"] for t in a.latencies]
    starts = [a.start_s * 1000 for a in result["annotators"] if a.start_s]
    print(f"\n{what} latency, {label}")
    if not times:
        print("  no answers recorded")
        return math.inf
    stats = summary(times)
    print(f"  n={stats['n']}  p50={stats['p50']:.1f} ms  p95={stats['p95']:.1f} ms  p99={stats['p99']:.1f} ms  "
          f"max={stats['max']:.1f} ms  mean={stats['mean']:.1f} ms")
    print(f"  throughput {len(times) / result['wall']:.1f} calls/s over {result['wall']:.1f} s wall"
          + (f"; /start p50 {statistics.median(starts):.0f} ms, max {max(starts):.0f} ms" if starts else ""))
    server = "" if result["server_cpu"] is None else \
        (f"server {1000 * result['server_cpu'] / len(times):.1f} ms "
         f"({100 * result['server_cpu'] / result['wall']:.0f}% of a core), ")
    print(f"  CPU per call: {server}client {1000 * result['client_cpu'] / len(times):.1f} ms "
          f"({100 * result['client_cpu'] / result['wall']:.0f}%); the host took {100 * result['steal']:.0f}% of this "
          "machine's CPU time meanwhile (steal)")
    for annotator in result["annotators"]:
        if annotator.error:
            print(f"  ERROR {annotator.name}: {annotator.error}")
    return stats["p95"]
