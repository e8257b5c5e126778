"""`python app.py` in its own process, as a Space or a container starts it: its environment is the test's.

`tests.support.appserver.running_app` builds the app inside the test process; this starts
the real entry point (settings from the environment, `default_context`, the
backup, the launch options), for behaviour that depends on the process's
environment at import time (ZeroGPU) or at start (a Space's backup).
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from backend.core.settings import ROOT
from tests.support.appserver import free_port
from tests.support.crowd_server import ServerProcess

# Variables of the machine running the tests that would change what the app does.
CLEARED = ("SYSTEM", "SPACE_ID", "HF_TOKEN", "SPACES_ZERO_GPU", "COMPLAB_CONFIG", "COMPLAB_BACKUP_REPO", "COMPLAB_ADMIN_USER",
           "COMPLAB_ADMIN_PASSWORD", "COMPLAB_ADMINS", "PYTHONPATH")


@contextmanager
def app_process(workspace: Path, env: dict[str, str], pythonpath: tuple[Path, ...] = (),
                timeout: float = 240) -> Iterator[tuple[str, Path]]:
    """Start `python app.py` over `workspace` with `env` added; yield (url, its output file) once it answers.

    `pythonpath` goes in front of the repository (e.g. a fake package). The process is stopped at the end.
    """
    port = free_port()
    workspace.mkdir(parents=True, exist_ok=True)
    output = workspace / "app-output.log"
    full_env = {**{k: v for k, v in os.environ.items() if k not in CLEARED}, "COMPLAB_WORKSPACE": str(workspace),
                "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "HF_HUB_OFFLINE": "1",
                "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": os.pathsep.join(str(path) for path in (*pythonpath, ROOT)), **env}
    server = ServerProcess([sys.executable, str(ROOT / "app.py")], port, full_env, output)
    server.start(timeout)
    try:
        yield server.url, output
    finally:
        server.stop()
