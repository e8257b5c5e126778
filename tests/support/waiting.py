"""Polling for a condition, without importing the app (the browser helpers use it at collection)."""
from __future__ import annotations

import time


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    """Poll `predicate` until it returns something truthy (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
