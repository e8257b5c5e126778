"""`python -m backend campaign ...` as an admin runs it in a shell (its own process, the workspace's settings in
its environment), for the tests of what it prints and writes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(settings, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COMPLAB_WORKSPACE": str(settings.workspace), "COMPLAB_DOWNLOADS_DIR": str(settings.workspace)}
    done = subprocess.run([sys.executable, "-m", "backend", "campaign", *args, "--db", str(settings.db)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"campaign {' '.join(args)} exited {done.returncode}: {done.stderr}"
    return done
