"""Seconds from `python app.py` to the first HTTP 200 on /, in a fresh workspace, for this tree and a peer tree.

    python bench/app_startup.py --peer /path/to/an/older/checkout [--runs 3]

The peer is another checkout of this project (e.g. `git worktree add /tmp/base <commit>`), run with the same
interpreter in the same minutes, so that the ratio, not the machine's load, is what is compared.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def answered_after(tree: Path) -> float:
    """Start `app.py` of `tree` on a free port; seconds until / answers 200."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "COMPLAB_WORKSPACE": tempfile.mkdtemp(), "GRADIO_SERVER_PORT": str(port),
           "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    start = time.monotonic()
    process = subprocess.Popen([sys.executable, "app.py"], cwd=tree, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    if response.status == 200:
                        return time.monotonic() - start
            except OSError:
                if process.poll() is not None:
                    raise SystemExit(f"{tree}/app.py exited: {process.stderr.read().decode()[-2000:]}") from None
                time.sleep(0.1)
    finally:
        process.terminate()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, required=True, help="another checkout of the project")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ours, peer = [], []
    for _ in range(args.runs):  # interleaved, so that a change in load hits both alike
        ours.append(answered_after(ROOT))
        peer.append(answered_after(args.peer))
    print(f"this tree: median {statistics.median(ours):.1f} s {[round(s, 1) for s in ours]}")
    print(f"peer:      median {statistics.median(peer):.1f} s {[round(s, 1) for s in peer]}")
    print(f"ratio this/peer: {statistics.median(ours) / statistics.median(peer):.2f}")


if __name__ == "__main__":
    main()
