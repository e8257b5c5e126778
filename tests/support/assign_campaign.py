"""A campaign on a real SQLite store for the tests of the assignment rules (overlap, sessions, gold, quality,
what is still needed), with stand-in candidates: each has a path but no image file, and the slots that show the
caption are given, so a truthful annotator's answer is known without any picture."""
from __future__ import annotations

from backend.annotate import campaigns
from backend.annotate.campaigns import CampaignConfig, ItemSpec
from backend.core.store import Store


def make_campaign(tmp_path, n_items=6, n_gold=0, right=("2",), **config) -> tuple[str, int]:
    """A campaign whose items all have 4 candidates; in each, the slots in `right` show the caption."""
    path = tmp_path / "lab.db"
    Store(path)  # migrations
    items = [ItemSpec(f"a red circle number {k}", f"a blue circle number {k}", "replace", "att",
                      image=f"originals/{k}.png") for k in range(n_items)]
    items += [ItemSpec(f"gold {k}", f"gold negative {k}", "replace", "att", image=f"originals/g{k}.png", gold=True)
              for k in range(n_gold)]
    cfg = CampaignConfig.from_dict({"gold_rate": 0.0, **config})
    campaigns.create(path, "c1", items, cfg, source="test")
    for request in campaigns.image_requests(path, "c1", 4):
        for slot in request.missing_slots:
            campaigns.add_candidate(path, request.item_id, slot, {
                "path": f"images/{request.item_id}-{slot}.png",
                "display_path": f"display/{request.item_id}-{slot}.webp",
                "generator": "test", "seed": slot, "shows_caption": str(slot + 1) in right})
    return str(path), campaigns.get(path, "c1")["id"]


def truthful(task) -> str:
    """Image 2 shows every negative caption; the original image is the one from `originals/`."""
    if task.task == "select":
        return "2"
    return "left" if task.images[0].startswith("originals") else "right"
