"""A probe whose variants take too long is stopped with a message (`backend.core.worker.time_limit`, which the
probes' worker applies; tests/test_worker.py proves it there): on the main thread a stuck loop is interrupted and
the alarm handler put back; on another thread, where no signal reaches, no limit applies."""
import signal
import threading
import time

import pytest

from backend import perturb
from backend.core.worker import TimeLimitExceeded, time_limit
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe import ProbeInputError, run_probe
from tests.support.tiny import solid_image_file


def test_a_time_limit_interrupts_a_stuck_loop_and_puts_the_alarm_handler_back():
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(TimeLimitExceeded, match="stuck"), time_limit(0.2, "stuck"):
        while True:
            pass
    assert signal.getsignal(signal.SIGALRM) is before
    with time_limit(5, "never said"):  # a quick call: no alarm left behind to fire later
        pass
    time.sleep(0.05)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_off_the_main_thread_no_limit_applies():
    outcome = []

    def slow_but_finite() -> None:
        with time_limit(0.05, "stuck"):
            time.sleep(0.2)
        outcome.append("finished")

    thread = threading.Thread(target=slow_but_finite)
    thread.start()
    thread.join()
    assert outcome == ["finished"]


def test_a_probe_whose_variants_never_come_is_stopped_with_a_message(tmp_path, monkeypatch):
    def stuck(*args, **kwargs) -> list:
        """Stuck for 20 s (without the limit the test fails then, instead of hanging)."""
        end = time.monotonic() + 20
        while time.monotonic() < end:
            pass
        return []

    monkeypatch.setattr(perturb, "perturb", stuck)
    image = solid_image_file(tmp_path, (200, 60, 40))
    with pytest.raises(ProbeInputError, match=r"took over 0.3 s and was stopped: a perturbation rule may be stuck"):
        run_probe(str(image), "a red circle above a blue square", ["toyworld"], ModelRegistry(device="cpu"),
                  EmbeddingCache(), texts_limit_s=0.3)
