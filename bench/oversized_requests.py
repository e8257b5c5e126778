"""Oversized requests against the real app: how long each refusal takes, and the next normal request after it.

The full app (password policy, the app's own launch options: the request cap of
`ui.limits`) over a temporary workspace with a toy campaign, in this process.
Each oversized request of `tests/support/security_support` (the fields the security
tests send: a 10 MB caption, 5,000 extra captions, a 10 MB answer, a 15 MB JSON
list, 100 MB streamed without a length, ...) is sent once; printed: its wall
time, what came back, and the wall time of the normal request that follows (an
annotator's answer). `tests/test_security_paths.py` asserts the outcomes; this
prints the times, which depend on the machine and on what else runs on it.

    python bench/oversized_requests.py
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def timed(call) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        outcome = str(call())
    except Exception as error:  # a refusal is what is measured
        outcome = f"refused: {error}"
    return time.perf_counter() - start, " ".join(outcome.split())[:90]


def main() -> None:
    import httpx
    from gradio_client import Client

    from backend.annotate.campaigns import CampaignConfig
    from backend.core.store import Store
    from tests.support.annotate_fixtures import task_token, toy_campaign
    from tests.support.appserver import workspace_settings
    from tests.support.security_support import Page, oversized_bodies, oversized_calls, served_app
    from tests.support.tiny import solid_image

    workspace = Path(tempfile.mkdtemp(prefix="oversized-"))
    seed = workspace_settings(workspace)
    Store(seed.db)
    toy_campaign(seed.db, seed.data_dir, "study", 40, CampaignConfig.from_dict({"gold_rate": 0, "overlap": 1}))
    image = workspace / "red.png"
    solid_image((200, 30, 30)).save(image)
    credentials = {"COMPLAB_ADMIN_USER": "admin", "COMPLAB_ADMIN_PASSWORD": "bench"}
    with served_app(workspace, ["toyworld"], **credentials) as (url, _):
        client = Client(url, verbose=False, download_files=False, ssl_verify=False)
        token = task_token(client.predict("study", "ann", api_name="/start"))

        def next_answer():
            nonlocal token
            token = task_token(client.predict(token, "1", api_name="/answer"))
            return f"task {token}"

        rows = [("normal answer (baseline)", *timed(next_answer), *timed(next_answer))]
        for what, arguments, api_name, _ in oversized_calls(image, token):
            rows.append((what, *timed(lambda: client.predict(*arguments, api_name=api_name)), *timed(next_answer)))
        for what, body, _ in oversized_bodies(Page(url).handler("answer")["id"]):
            post = lambda: httpx.post(f"{url}gradio_api/queue/join", content=body,  # noqa: E731
                                      headers={"content-type": "application/json"}, timeout=120)
            rows.append((what, *timed(lambda: f"HTTP {(r := post()).status_code} {r.text}"), *timed(next_answer)))
    print(f"{'request':34} {'refused in':>10}  {'next answer':>11}  outcome")
    for what, seconds, outcome, after, _ in rows:
        print(f"{what:34} {seconds * 1000:8.0f} ms  {after * 1000:8.0f} ms  {outcome}")


if __name__ == "__main__":
    main()
