"""Which benchmarks have their data on this machine, found without downloading anything.

`prepare` fetches what it can (a file with a URL, a Hub dataset), so asking it in the web process on a connected
machine could start downloads of gigabytes, and a benchmark without data fails only once its job runs. The check
builds each benchmark on its first item per type (``limit=1``) in a child process whose downloads are all switched
off (``OFFLINE_ENV``): what builds is ready; otherwise the first line of `DataMissing` says what is missing. The
result is kept per data folder for this process (`known`); the Benchmarks tab marks its list with it and picks a
ready benchmark as the default. ``python -m backend benchmarks --check`` gives the full steps.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

READY = "ready"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COMPLAB_OFFLINE": "1"}
CHECK_TIMEOUT_S = 600
_LOCK = threading.Lock()
_CHECKS: dict[Path, dict[str, str] | None] = {}  # data folder -> the check's answer (None while it runs)


def check(root: Path | str) -> dict[str, str]:
    """Every available benchmark -> ``READY`` or why not (in this process: it may download; see `check_offline`)."""
    from backend.benchmarks import available_benchmarks, prepare
    from backend.benchmarks.data import DataMissing

    answers = {}
    for name in available_benchmarks(root):
        try:
            prepare(name, 1, root)
            answers[name] = READY
        except DataMissing as missing:
            answers[name] = "needs data: " + str(missing).splitlines()[0].removesuffix(" To get it:")
        except Exception as error:  # a broken copy is not ready either; the job would say the same
            answers[name] = f"cannot be built: {type(error).__name__}: {error}".splitlines()[0]
    return answers


def check_offline(root: Path | str, timeout_s: float = CHECK_TIMEOUT_S) -> dict[str, str]:
    """`check` in a child process that can download nothing; an answer per benchmark."""
    project = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", __name__, str(root)], cwd=project, capture_output=True, text=True,
                          timeout=timeout_s, env={**os.environ, **OFFLINE_ENV})
    if done.returncode != 0:
        raise RuntimeError(f"the data check failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def known(root: Path | str, start: bool = True) -> dict[str, str] | None:
    """This process's answer for ``root``; None while no check has finished (``start``: begin one if none has)."""
    root = Path(root).resolve()
    with _LOCK:
        if root in _CHECKS or not start:
            return _CHECKS.get(root)
        _CHECKS[root] = None
    threading.Thread(target=_run, args=(root,), daemon=True, name="benchmark-data-check").start()
    return None


def _run(root: Path) -> None:
    try:
        answers = check_offline(root)
    except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as error:
        logging.getLogger(__name__).warning("benchmark data check for %s failed: %s", root, error)
        answers = {}  # nothing known: the list stays unmarked, as before the check
    with _LOCK:
        _CHECKS[root] = answers


if __name__ == "__main__":
    print(json.dumps(check(sys.argv[1])))
