"""Anonymous visitors hammering the Probe while the crowd annotates: the full app's server, and the guests.

Part of the crowd benchmarks' shared code (`bench.annotate_load` ``--probe-guests``). The full app
(``python app.py``, admin credentials set, as a public Space runs it: visitors are anonymous guests)
serves the Probe and the Annotate tab in one process. Each guest is a thread with its own
`gradio_client.Client` calling /probe back to back with the shipped model, whatever the answer:
a probe, a refusal (the per-visitor rate limit, before the upload or in the handler; the server
busy) or an error. With ``unlimited`` the per-visitor rate limit is lifted in the server (as if
every guest came from an address of its own), so only the probes' line holds them back: the worst
case for the crowd.
"""
from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.crowd_server import ROOT, ServerProcess

CREDENTIALS = {"COMPLAB_ADMIN_USER": "admin", "COMPLAB_ADMIN_PASSWORD": "bench only"}
UPLOAD_TIMEOUT_S = 120
MODEL = "toyworld"  # shipped in the repository: on disk, so a guest may probe it
CAPTION = "a red circle to the left of a blue square"
# app.main(), after lifting the per-visitor probe limit (the line still holds)
UNLIMITED = ("import backend.core.limits as limits; limits.GUEST_PROBES_PER_MINUTE = 10 ** 9; "
             "import app; app.main()")


def full_server(workspace: Path, port: int, unlimited: bool) -> ServerProcess:
    """``python app.py`` (the full app, password policy) over `workspace`, configured from the environment."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COMPLAB_", "HF_TOKEN", "SPACE_ID"))}
    env |= {"COMPLAB_WORKSPACE": str(workspace), "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port),
            "HF_HUB_OFFLINE": "1", **CREDENTIALS}
    command = [sys.executable, "-c", UNLIMITED] if unlimited else [sys.executable, str(ROOT / "app.py")]
    return ServerProcess(command, port, env)


@dataclass
class GuestFlood:
    """`guests` threads probing until `stop`; what each call got, and how long the probes that ran took."""

    url: str
    guests: int
    image: Path
    outcomes: Counter = field(default_factory=Counter)
    probe_seconds: list[float] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> GuestFlood:
        self._threads = [threading.Thread(target=self._guest, daemon=True) for _ in range(self.guests)]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)

    def _guest(self) -> None:
        client = guest_client(self.url)
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                probe(client, self.image)
                outcome = "probed"
            except Exception as error:  # every answer is counted, none ends the flood
                text = str(error)
                outcome = ("refused: rate limit" if "probes a minute" in text else
                           "refused: busy" if "busy" in text else refused_at_the_door(text) or f"error: {text[:80]}")
            with self._lock:
                self.outcomes[outcome] += 1
                if outcome == "probed":
                    self.probe_seconds.append(time.perf_counter() - started)
            if outcome != "probed":
                time.sleep(0.05)  # a refused guest tries again at once, as a script would (not a tight spin)
        client.close()

    def summary(self) -> str:
        probes = self.probe_seconds
        timing = f"; a probe took {statistics.median(probes):.2f} s (median)" if probes else ""
        return f"{self.guests} guest(s): {dict(self.outcomes)}{timing}"


def refused_at_the_door(error: str) -> str | None:
    """How `ui.limits.ProbeGate` refused a call (gradio_client shows its HTTP 429 without the sentence): at the upload
    (the visitor's allowance spent), or at the queue (that, or the probes' line full); None if it did not."""
    if "429 Too Many Requests" not in error:
        return None
    return "refused at the door: upload (429)" if "/upload" in error else "refused at the door: queue (429)"


def guest_client(url: str):
    """A visitor's client. Its upload waits up to UPLOAD_TIMEOUT_S (httpx's default, 5 s, is shorter than an upload
    takes while the server loads its models on a machine whose cores are shared)."""
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, ssl_verify=False,
                  httpx_kwargs={"timeout": UPLOAD_TIMEOUT_S})


def probe(client, image: Path) -> tuple:
    """One probe as the page sends it: the shipped model, the Probe's default perturbation families."""
    from gradio_client import handle_file

    from backend.perturb import PROBE_DEFAULT_FAMILIES

    return client.predict(handle_file(str(image)), CAPTION, [MODEL], list(PROBE_DEFAULT_FAMILIES), 0, "", False,
                          api_name="/probe")


def warm_up(url: str, image: Path) -> float:
    """One probe before anything is measured (the server loads the perturbation engine and the model in the
    background after it starts, as app.py does); returns how long it took."""
    client = guest_client(url)
    started = time.perf_counter()
    probe(client, image)
    client.close()
    return time.perf_counter() - started


def guest_image(folder: Path) -> Path:
    """A small photo-like PNG for the guests to upload with each probe."""
    from tests.support.tiny import solid_image

    path = folder / "guest.png"
    solid_image((200, 30, 30), size=64).save(path)
    return path
