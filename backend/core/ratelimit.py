"""How often one client may do something, and how many may do it at once: the web app's two brakes.

`RateLimit` counts what each key (a client's address, or one key for everyone) spent
in a sliding window: sign-in attempts, probes, upload bytes. `Slots` bounds work that
is expensive for the whole process (a probe loads a model and runs it): a few run, a
few wait their turn, and anyone beyond that is told at once that the server is busy
instead of joining a queue that only grows. Both are thread-safe (Gradio runs handlers
on many threads) and in memory: a restart forgets them, which only ever lets a client
start afresh.

Neither knows about HTTP; `client_key` says which key a request is, given how the app
is reached (behind a Space's proxy the peer is the proxy).
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager


class Refused(Exception):
    """Over a limit; `retry_after` is in seconds (0: unknown). The message is the sentence a person reads."""

    def __init__(self, message: str, retry_after: float = 0.0):
        super().__init__(message)
        self.retry_after = retry_after


class RateLimit:
    """At most `limit` units per key in any `window_s` seconds (a sliding window of timestamped costs)."""

    def __init__(self, limit: float, window_s: float, clock: Callable[[], float] = time.monotonic):
        if limit <= 0 or window_s <= 0:
            raise ValueError(f"a rate limit needs a positive limit and window, not {limit} per {window_s} s")
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._spent: dict[str, deque[tuple[float, float]]] = {}
        self._lock = threading.Lock()

    def _expire(self, key: str, now: float) -> deque[tuple[float, float]]:
        spent = self._spent.setdefault(key, deque())
        while spent and spent[0][0] <= now - self.window_s:
            spent.popleft()
        return spent

    def used(self, key: str) -> float:
        """What `key` spent in the current window."""
        with self._lock:
            return sum(cost for _, cost in self._expire(key, self.clock()))

    def retry_after(self, key: str, cost: float = 1.0) -> float:
        """0 if `key` may spend `cost` now, else the seconds until it may."""
        with self._lock:
            return self._wait(self._expire(key, self.clock()), cost)

    def _wait(self, spent: deque[tuple[float, float]], cost: float) -> float:
        total = sum(c for _, c in spent)
        if total + cost <= self.limit:
            return 0.0
        if cost > self.limit:
            return math.inf
        for moment, c in spent:  # the oldest costs expire first
            total -= c
            if total + cost <= self.limit:
                return max(0.0, moment + self.window_s - self.clock())
        return self.window_s

    def spend(self, key: str, cost: float = 1.0) -> float:
        """Record `cost` for `key` if it fits and return 0; else record nothing and return the seconds to wait."""
        with self._lock:
            now = self.clock()
            spent = self._expire(key, now)
            wait = self._wait(spent, cost)
            if wait == 0.0:
                spent.append((now, cost))
            elif not spent:
                self._spent.pop(key, None)
            self._forget_idle(now)
            return wait

    def _forget_idle(self, now: float) -> None:
        """Drop keys with nothing in the window, so a crowd of one-time clients does not grow the map forever."""
        if len(self._spent) > 10_000:
            for key in [k for k, spent in self._spent.items() if not spent or spent[-1][0] <= now - self.window_s]:
                del self._spent[key]


class Slots:
    """At most `running` at once and `waiting` queued behind them; beyond that `Refused` at once. Spaced turns
    start at least `spacing_s` after the turn before: however cheap each is, they cannot come more often."""

    def __init__(self, running: int, waiting: int, busy_message: str, spacing_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if running < 1 or waiting < 0 or spacing_s < 0:
            raise ValueError(f"slots need running >= 1, waiting >= 0 and spacing_s >= 0, not {running}, {waiting} "
                             f"and {spacing_s}")
        self.running, self.waiting, self.busy_message, self.spacing_s = running, waiting, busy_message, spacing_s
        self.clock, self.sleep = clock, sleep
        self.retry_after_s = 5.0  # what a refusal suggests: a place is likely free by then
        self._turns = threading.BoundedSemaphore(running)
        self._admitted = 0
        self._last_start = -math.inf
        self._lock = threading.Lock()

    @property
    def admitted(self) -> int:
        """Running plus waiting, now."""
        with self._lock:
            return self._admitted

    @property
    def full(self) -> bool:
        """Whether the next `slot` would be refused now."""
        return self.admitted >= self.running + self.waiting

    @contextmanager
    def slot(self, spaced: bool = True) -> Iterator[None]:
        """Run the body in a slot, waiting for one if the queue has room; `Refused` if it has none. `spaced` False:
        the turn starts as soon as it is free (it still counts as a start for the turns after it)."""
        with self._lock:
            if self._admitted >= self.running + self.waiting:
                raise Refused(self.busy_message, retry_after=self.retry_after_s)
            self._admitted += 1
        try:
            with self._turns:
                self._start(spaced)
                yield
        finally:
            with self._lock:
                self._admitted -= 1

    def _start(self, spaced: bool) -> None:
        """Record this turn's start: now, or (`spaced`) `spacing_s` after the last one, waiting till then (holding
        the turn)."""
        with self._lock:
            start = max(self.clock(), self._last_start + self.spacing_s) if spaced else self.clock()
            self._last_start = max(self._last_start, start)
        self.sleep(max(0.0, start - self.clock()))


def client_key(peer: str | None, headers: Mapping[str, str], behind_proxy: bool) -> str:
    """Which client a request comes from: the peer's address, or, behind a proxy that says who its client was
    (a Hugging Face Space), the last address the proxy added to X-Forwarded-For: the entries before it are
    whatever the client sent and prove nothing."""
    if behind_proxy:
        forwarded = [part.strip() for part in (headers.get("x-forwarded-for") or "").split(",") if part.strip()]
        if forwarded:
            return forwarded[-1]
    return peer or "unknown"
