"""The annotation app's server for a simulated crowd: a process of its own, started, killed and started again.

Part of the crowd benchmarks' shared code (`tests.support.crowd`): the server runs
apart from the clients so that, on a small machine, the load generator does not
take the server's core, and so that it can be killed with SIGKILL and brought
back on the same store and port.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Settings a study's server must not inherit from the shell running the bench (a config file, a backup repo).
_HOST_ONLY = ("COMPLAB_", "HF_TOKEN", "SPACE_ID")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields_ = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields_[11]) + int(fields_[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[int, int]:
    """(steal, total) clock ticks of the whole machine so far (Linux /proc/stat): steal is the time the host
    gave this virtual machine's CPUs to others, which a latency measured here cannot tell from slowness."""
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return ticks[7], sum(ticks[:8])


class ServerProcess:
    """A Gradio server in a process of its own on a fixed port: started, stopped, killed and started again,
    so a restart comes back where the crowd's clients expect it. A context manager: leaves nothing running."""

    def __init__(self, command: list[str], port: int, env: dict[str, str] | None = None,
                 output: Path | None = None):
        """`output`: a file that receives the server's stdout and stderr (None: discarded)."""
        self.command, self.port, self.env, self.output = command, port, env, output
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def pid(self) -> int:
        return self.process.pid

    def start(self, timeout: float = 180.0) -> None:
        """Start the process and return once it serves its config page."""
        import httpx

        if self.output is None:
            self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL)
        else:
            with open(self.output, "wb") as log:
                self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdout=log,
                                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                said = f":\n{self.output.read_text()[-3000:]}" if self.output is not None else ""
                raise RuntimeError(f"the server exited with code {self.process.returncode}: {self.command}{said}")
            try:
                if httpx.get(self.url + "config", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"the server did not answer at {self.url} within {timeout:.0f}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or closed; what SQLite committed is all that is left."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *_) -> None:
        self.stop()


def annotate_server(workspace: Path, port: int) -> ServerProcess:
    """``python app.py --mode annotate`` over `workspace`, configured from the environment as a deployment is."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(_HOST_ONLY)}
    env |= {"COMPLAB_WORKSPACE": str(workspace), "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port)}
    return ServerProcess([sys.executable, str(ROOT / "app.py"), "--mode", "annotate"], port, env)


def build_campaign(workspace: Path, name: str, items: int, config: dict, seed: int = 0) -> Path:
    """A toy campaign (`tests.support.annotate_fixtures.toy_campaign`: real candidate images) in the store the app would
    use for `workspace`; returns the store's path."""
    from backend.annotate.campaigns import CampaignConfig
    from backend.core.store import Store
    from tests.support.annotate_fixtures import toy_campaign
    from tests.support.appserver import workspace_settings

    settings = workspace_settings(workspace)
    store = Store(settings.db)
    toy_campaign(store.path, settings.data_dir, name, items, CampaignConfig.from_dict(config), seed)
    return Path(store.path)
