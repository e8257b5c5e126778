"""A process of its own for CPU-heavy work of the web process: started on first use, niced, one torch thread,
replaced when it dies.

Why: the web process serves the crowd's annotation handlers and the Probe on one interpreter. A probe's
perturbation engine (spaCy and Python code that holds the GIL) and its model took turns with the annotators'
handlers, whose p95 grew 2-13x while guests probed (docs/RELIABILITY.md, "Anonymous load and the crowd"). A
bounded line of probes bounds how many run, not how much of the interpreter they take. In a process of its own,
niced (`NICE`, so the kernel gives the web process the larger share of a busy machine) and with one torch thread
(the other cores stay free for the crowd), a probe only costs the web process its request and its answer.

`Worker` runs one call at a time in one process (`concurrent.futures.ProcessPoolExecutor` with one worker and the
"spawn" start method: a fork of the threaded web process would inherit its locks and its listening socket).
Arguments and results cross a pipe, so both must pickle; whatever the function keeps in module state (a model
cache) lives in the worker and outlives the call. A worker that dies (out of memory, killed) is replaced on the next
call; the call it was running raises `WorkerStopped`, with a sentence for the person who asked; a call it never
started is run again in the new worker. A worker ends with the process that started it (it watches its parent), so
a killed web process leaves none behind.

Under ``python app.py`` the spawned process imports ``app.py`` as ``__mp_main__`` (how "spawn" finds functions
defined there), which imports Gradio once more: a second or two of the worker's (niced) start, never the page's.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.connection import wait as wait_for
from typing import Any, TypeVar

NICE = 10  # added to the web process's niceness: at 10 the kernel weighs the web process ~9x more on a busy core
THREADS = 1  # torch (and BLAS) threads in the worker
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
POLL_S = 0.05  # how often a waiting call looks at its result between progress messages
ENDED = "ended"  # the last message of every call
ENDED_WAIT_S = 5.0  # how long a finished call's result waits for its ENDED (that never fails to come, unless lost)

T = TypeVar("T")
Progress = Callable[[float, str], None]


class WorkerStopped(RuntimeError):
    """The worker process ended during a call (out of memory, killed); the message is what a person reads."""


class TimeLimitExceeded(RuntimeError):
    """A part of a call bounded by `time_limit` ran past its limit; the message is what a person reads."""


@contextmanager
def time_limit(seconds: float | None, message: str) -> Iterator[None]:
    """Raise `TimeLimitExceeded(message)` in the code inside if it runs longer than `seconds` (None: no limit).

    Why: a rule that never ends (a loop on a parse that never meets its end) would hold the worker, and every
    call queued behind it, for good. A worker runs its calls on its process's main thread, where SIGALRM
    interrupts running Python code (C code is interrupted when it returns to Python). On any other thread (the
    web process's handlers, where the probes of in-process apps run) no signal can reach the code, and no limit
    is applied. Limits do not nest: the inner one replaces the outer one's alarm."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(message)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Worker:
    """One process that runs calls one at a time (`call`), started on the first call (`start` starts it early)."""

    def __init__(self, what: str = "this work", nice: int = NICE, threads: int = THREADS):
        self.what, self.nice, self.threads = what, nice, threads
        self._pool: ProcessPoolExecutor | None = None
        self._messages: Any = None  # the worker's progress messages (a multiprocessing queue), per pool
        self._turn = threading.Lock()  # one call at a time: the worker runs one anyway, and its messages are ours
        self._start_lock = threading.Lock()
        self._ids = itertools.count(1)

    def start(self) -> None:
        """Start the process now (it imports nothing of the caller's until the first call)."""
        self._started()

    def call(self, function: Callable[..., T], *args: Any, progress: Progress | None = None, **kwargs: Any) -> T:
        """`function(*args, **kwargs)` in the worker (with ``progress=`` a callable there, relayed to `progress` on
        this thread, when `progress` is given); waits for any call before it. `WorkerStopped` if the worker died
        while running it; exceptions `function` raised are raised here."""
        with self._turn:
            for attempt in (1, 2):
                pool = self._started()
                call_id = next(self._ids)
                begun = threading.Event()
                try:
                    future = pool.submit(_run, call_id, function, args, kwargs, progress is not None)
                    return self._wait(future, call_id, begun, progress)
                except BrokenProcessPool:
                    self._discard(pool)
                    if begun.is_set() or attempt == 2:  # it ran this call (or died twice): say so
                        raise WorkerStopped(self._stopped_message()) from None
            raise AssertionError("unreachable")

    def pid(self) -> int:
        """The worker's process id (starting it if need be)."""
        return self.call(os.getpid)

    def close(self) -> None:
        """End the worker (waiting for a call in progress); a later call starts a new one."""
        with self._start_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _stopped_message(self) -> str:
        return (f"The process that runs {self.what} stopped before it finished (it may have run out of memory, or "
                "been stopped). A new one has taken its place: try again, perhaps with fewer or smaller models.")

    def _started(self) -> ProcessPoolExecutor:
        with self._start_lock:
            if self._pool is None:
                context = multiprocessing.get_context("spawn")
                self._messages = context.Queue()
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_initialize,
                                                 initargs=(self.nice, self.threads, self._messages))
            return self._pool

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        """Forget a broken pool (its process is gone); the next call starts another."""
        with self._start_lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def _wait(self, future: Future, call_id: int, begun: threading.Event, progress: Progress | None):
        """The call's result, relaying its progress messages meanwhile (on this thread: Gradio's progress
        tracker belongs to the request's thread); `begun` is set once the worker has started the call.

        The result and the messages travel apart (the pool's pipe, our queue, whose writes a thread of the worker
        makes later): a result can arrive before the last progress message. So the worker ends every call with
        `ENDED` on the queue, after its messages, and the result is returned once that has been read (or at once if
        the worker died, or never ran the call because its arguments did not pickle, and will send nothing more:
        its result is the error, or after `ENDED_WAIT_S`)."""
        done_at = None
        while True:
            done = future.done()  # before reading: what the worker sent by then is read below
            for message in self._received(0.01 if done else POLL_S):
                if message[0] != call_id:  # a dead call's last words
                    continue
                begun.set()
                if message[1] == ENDED:
                    return future.result()
                if message[1] is not None and progress is not None:
                    progress(*message[1])
            if done:
                done_at, error = done_at or time.monotonic(), future.exception()
                if isinstance(error, BrokenProcessPool) or (error is not None and not begun.is_set()) or \
                        time.monotonic() - done_at > ENDED_WAIT_S:
                    return future.result()

    def _received(self, timeout: float) -> list[tuple]:
        """The messages waiting now (the first one waited for up to `timeout` seconds)."""
        messages = []
        try:
            messages.append(self._messages.get(timeout=timeout))
            while True:
                messages.append(self._messages.get_nowait())
        except queue.Empty:
            return messages


# In the worker process: the queue its calls report on.
_messages: Any = None


def _initialize(nice: int, threads: int, messages: Any) -> None:
    """The worker's start: lower its priority, one thread for torch and BLAS (set before torch is imported),
    the message queue, and an end together with the process that started it."""
    global _messages
    os.nice(nice)
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    _messages = messages
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent,), name="end-with-parent", daemon=True).start()


def _end_with(parent: Any) -> None:
    """Exit as soon as `parent` is gone (killed with SIGKILL, it never shuts its pool down)."""
    wait_for([parent.sentinel])
    os._exit(0)


def _run(call_id: int, function: Callable[..., T], args: tuple, kwargs: dict, with_progress: bool) -> T:
    """One call in the worker: announce it (so a death from now on is this call's), run it, say it ended."""
    _messages.put((call_id, None))
    if with_progress:
        kwargs = {**kwargs, "progress": lambda fraction, desc: _messages.put((call_id, (fraction, desc)))}
    try:
        return function(*args, **kwargs)
    finally:
        _messages.put((call_id, ENDED))
