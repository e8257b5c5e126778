"""What a new visitor's session costs the server: Gradio's own SessionState against ours (`ui.session_state`).

Gradio makes a session's state on its first event (a participant's /start, a Probe visitor's first click). This
builds the annotation app and the whole app as `app.py` does and times, in CPU seconds of this process, making
`--sessions` new session states each way, interleaved in `--rounds` rounds, and prints the milliseconds per
session and the ratio (ours over Gradio's; lower is better).

    .venv/bin/python bench/session_state.py [--sessions 50] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import app
from backend.core.store import Store
from backend.models.registry import EmbeddingCache, ModelRegistry
from tests.support.appserver import workspace_settings
from ui import session_state
from ui.context import AppContext

GRADIOS_OWN = session_state.TemplateSessionState.__mro__[1]


def per_session_ms(make, blocks, sessions: int) -> float:
    start = time.process_time()
    for _ in range(sessions):
        make(blocks)
    return (time.process_time() - start) / sessions * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    settings = workspace_settings(Path(tempfile.mkdtemp()))
    ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                     model_choices=[], default_models=[], store=Store(settings.db), examples=[])
    print(f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f}")
    for name, blocks in (("annotate", app.build_annotate_app(ctx)), ("full", app.build_app(ctx))):
        session_state.template(blocks)  # made once per app, at its first session
        own, ours = [], []
        for _ in range(args.rounds):
            own.append(per_session_ms(GRADIOS_OWN, blocks, args.sessions))
            ours.append(per_session_ms(session_state.TemplateSessionState, blocks, args.sessions))
        gradio_ms, our_ms = statistics.median(own), statistics.median(ours)
        print(f"{name:8s} {len(blocks.blocks):4d} blocks: Gradio's SessionState {gradio_ms:7.2f} ms, ours "
              f"{our_ms:6.3f} ms per session (median of {args.rounds} rounds): ratio {our_ms / gradio_ms:.4f}")


if __name__ == "__main__":
    main()
