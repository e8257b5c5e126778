"""The tiers' rule, enforced: a test that starts a process, a server or a browser is marked `system`.

Unit tests (no `system` or `slow` marker) run in `make test-unit`, the inner loop, so they must not start a
process (subprocess or multiprocessing: a browser or torchrun is one too) or listen on a socket (a
Gradio or any other server). While a unit test's setup, call or teardown runs, doing so raises
`SystemTierOnly`, and the test fails with a message naming the marker to add, even if the code under test
swallowed the exception. Threads count for the test that started them (a server's threads started by a
`system` test's fixture may go on listening while later unit tests run).
"""
from __future__ import annotations

import multiprocessing.process
import socket
import subprocess
import threading

import pytest

MARKERS = ("system", "slow")  # a test with one of these may start processes, servers and browsers
_OWNER = "_tier_test"  # attribute on a thread: the test that was running when it was started

_running: pytest.Item | None = None  # the test whose setup, call or teardown runs now
_broken: dict[str, list[str]] = {}  # nodeid -> what it did that only system tests may do


class SystemTierOnly(BaseException):
    """A unit test did what only a `system` test may (a BaseException, so `except Exception` cannot hide it)."""


def is_unit(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(name) for name in MARKERS)


def _owner() -> pytest.Item | None:
    return getattr(threading.current_thread(), _OWNER, None) or _running


def _guard(what: str, original):
    def guarded(*args, **kwargs):
        owner = _owner()
        if owner is not None and is_unit(owner):
            message = (f"{owner.nodeid} is a unit test but {what}: mark it `system` "
                       "(`pytestmark = pytest.mark.system` for a whole file; see docs/TESTING.md)")
            _broken.setdefault(owner.nodeid, []).append(message)
            raise SystemTierOnly(message)
        return original(*args, **kwargs)
    return guarded


def _stamped_start(original):
    def start(self, *args, **kwargs):
        setattr(self, _OWNER, _owner())
        return original(self, *args, **kwargs)
    return start


def install() -> None:
    """Wrap what starts a process or a server, once per test process (each xdist worker is one)."""
    subprocess.Popen._execute_child = _guard("starts a process", subprocess.Popen._execute_child)
    multiprocessing.process.BaseProcess.start = _guard("starts a process (multiprocessing)",
                                                       multiprocessing.process.BaseProcess.start)
    socket.socket.listen = _guard("listens on a socket (a server)", socket.socket.listen)
    threading.Thread.start = _stamped_start(threading.Thread.start)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    global _running
    _running = item
    try:
        return (yield)
    finally:
        _running = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    broken = _broken.pop(item.nodeid, None)
    if broken and report.outcome != "failed":
        report.outcome, report.longrepr = "failed", "\n".join(dict.fromkeys(broken))
    return report


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files that hold system tests run first, each file's tests kept together and in order: the long tests
    (jobs, servers, browsers) start while both workers are busy, and the short unit tests fill the end, instead
    of one worker finishing a long test alone while the other waits (about 20 s of a 2-worker run)."""
    heavy = {item.path for item in items if not is_unit(item)}
    items.sort(key=lambda item: item.path not in heavy)
