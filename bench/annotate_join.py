"""What a session's start costs next to one answer: a new session reserves all its tasks in one transaction,
which holds the store's write lock (every other annotator's answer waits for it).

Builds campaigns of N items (4 candidates each, no images drawn: assignment never reads them), then for each:
six annotators start in turn (the first `serve` reserves `--tasks` tasks) and answer ten tasks each
(`submit` + `serve`, what one click costs the server). Prints the medians and their ratio, the peer being
one answer measured in the same run on the same store.

Run: ``.venv/bin/python bench/annotate_join.py --items 200 2000 --tasks 50``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.annotate import assign, campaigns
from backend.annotate.campaigns import CampaignConfig, ItemSpec
from backend.core.store import Store


def build(folder: Path, items: int, tasks: int) -> tuple[Path, int]:
    path = folder / "lab.db"
    Store(path)
    specs = [ItemSpec(f"a red circle number {k}", f"a blue circle number {k}", image=f"o/{k}.png")
             for k in range(items)]
    campaign_id = campaigns.create(path, "bench", specs, CampaignConfig.from_dict(
        {"overlap": 3, "gold_rate": 0, "tasks_per_session": tasks}), "bench")
    for request in campaigns.image_requests(path, "bench", 4):
        for slot in request.missing_slots:
            campaigns.add_candidate(path, request.item_id, slot, {"path": f"c/{request.item_id}-{slot}.png"})
    return path, campaign_id


def measure(path: Path, campaign_id: int, annotators: int = 6, answers: int = 10) -> tuple[list, list]:
    starts, clicks = [], []
    for k in range(annotators):
        who = assign.join(path, campaign_id, f"a{k}")
        began = time.perf_counter()
        task = assign.serve(path, who)
        starts.append(time.perf_counter() - began)
        for _ in range(answers):
            began = time.perf_counter()
            assign.submit(path, who, task.assignment_id, "2")
            task = assign.serve(path, who)
            clicks.append(time.perf_counter() - began)
    return starts, clicks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--tasks", type=int, default=50, help="tasks per session (reserved at its start)")
    args = parser.parse_args()
    for items in args.items:
        with tempfile.TemporaryDirectory(prefix="annotate-join-") as folder:
            starts, clicks = measure(*build(Path(folder), items, args.tasks))
        start, click = statistics.median(starts), statistics.median(clicks)
        print(f"{items} items, sessions of {args.tasks}: session start (reserves its tasks) median "
              f"{1000 * start:.1f} ms; one answer (submit + next) median {1000 * click:.2f} ms; "
              f"ratio {start / click:.1f}")


if __name__ == "__main__":
    main()
