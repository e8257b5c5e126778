"""The worker process that runs the web app's probes (`backend.core.worker.Worker`): niced, few threads, its
progress relayed, its errors raised, replaced when it dies, gone when the process that started it is killed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from backend.core.worker import TimeLimitExceeded, Worker, WorkerStopped, time_limit
from tests.support.waiting import wait_for

pytestmark = pytest.mark.system  # starts processes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The worker imports this module to find `report_then_sleep`: it imports nothing heavy at the top.


def report_then_sleep(seconds: float, progress) -> str:
    """A call that says how far it got, then takes `seconds`."""
    progress(0.25, "a quarter")
    progress(0.5, "half")
    time.sleep(seconds)
    return "done"


def endless_within(seconds: float) -> None:
    """A loop that never ends, under `time_limit` (a rule stuck on a caption)."""
    with time_limit(seconds, "stuck"):
        while True:
            pass


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a killed one stays a zombie until its parent reaps it: not running)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def worker():
    started = Worker("the test's calls", threads=2)
    yield started
    started.close()


def test_the_worker_is_niced_runs_few_threads_and_relays_progress_and_errors(worker):
    pid = worker.pid()
    assert pid != os.getpid() and worker.pid() == pid  # one process, kept between calls
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    assert worker.call(os.getenv, "OMP_NUM_THREADS") == "2"  # this process's tests run with 1
    seen = []
    assert worker.call(report_then_sleep, 0, progress=lambda fraction, desc: seen.append((fraction, desc))) == "done"
    assert seen == [(0.25, "a quarter"), (0.5, "half")]
    with pytest.raises(ValueError, match="invalid literal"):  # the function's own error, as it raised it
        worker.call(int, "not a number")
    assert worker.pid() == pid  # an error is not a death


def test_torch_in_the_worker_uses_the_workers_thread_count(worker):
    import torch

    assert worker.call(torch.get_num_threads) == 2


def test_a_worker_killed_during_a_call_is_a_message_and_the_next_call_gets_a_new_one(worker):
    first = worker.pid()

    def kill_at_half(fraction: float, desc: str) -> None:
        if fraction == 0.5:
            os.kill(first, signal.SIGKILL)

    with pytest.raises(WorkerStopped, match=r"stopped before it finished .* A new one has taken its place"):
        worker.call(report_then_sleep, 30, progress=kill_at_half)
    second = worker.pid()
    assert second != first and not alive(first)
    assert worker.call(report_then_sleep, 0, progress=lambda *_: None) == "done"

    os.kill(second, signal.SIGKILL)  # dead while idle: the next call did not run there, so it just runs
    wait_for(lambda: not alive(second), what="the idle worker to die")
    assert worker.call(report_then_sleep, 0, progress=lambda *_: None) == "done"
    assert worker.pid() not in (first, second)


def test_a_time_limit_stops_a_stuck_call_in_the_worker_which_goes_on(worker):
    pid = worker.pid()
    with pytest.raises(TimeLimitExceeded, match="stuck"):
        worker.call(endless_within, 0.5)
    assert worker.pid() == pid and worker.call(report_then_sleep, 0, progress=lambda *_: None) == "done"


def test_a_worker_ends_with_the_process_that_started_it():
    parent = subprocess.Popen(
        [sys.executable, "-c", "import time; from backend.core.worker import Worker; "
                               "print(Worker().pid(), flush=True); time.sleep(120)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.kill()  # SIGKILL: no shutdown, no atexit
        parent.wait()
        wait_for(lambda: not alive(child), timeout=30, what="the worker to end with its parent")
    finally:
        parent.kill()
