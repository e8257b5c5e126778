"""Gold items that look like the campaign's own: items of an earlier campaign whose step 3 an admin decided by hand.

Why: the built-in world's gold items are flat shapes, told apart from the campaign's photos at a glance, so a
participant (or a script) can answer them with care and the rest carelessly (issue 22, item 5). An item of an
earlier campaign on which an admin set the step-3 decision (`backend.annotate.resolution.override`: the Quality
view's adjudication queue, or ``campaign override``) is a photo with generated candidates like the new campaign's
own, and its right answer is the admin's decision: that decision is the gold item's answer key (``truth.select``),
so review items where one image (or none) clearly shows the caption.

A campaign made with ``gold_from: <earlier campaign>`` draws its gold items from those reviewed items at random
(seeded by its own secret, like the built-in gold), copies their original and candidate files into its own folder
under the same relative paths (content-addressed: nothing collides, and the earlier folder may go), and records the
candidates at creation, so the generate job owes them nothing. Participants never learn which item is gold: every
image is served under an opaque name (`backend.annotate.images`).

Known limit: a participant who answered the earlier campaign may recognise an item; exclude them on Prolific (the
study's "previous studies" screener).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from backend.annotate import campaigns, db
from backend.core.files import copy_atomic


@dataclass(frozen=True)
class ReviewedGold:
    """A gold item taken from an earlier campaign: the item as stored, and its candidates' records by slot."""

    item: campaigns.ItemSpec
    candidates: tuple[dict, ...]


def reviewed_items(store_path: Path | str, campaign: str, images_per_item: int) -> list[dict]:
    """The items of `campaign` whose step-3 decision an admin set, with `images_per_item` candidates each."""
    campaign_id = campaigns.get(store_path, campaign)["id"]
    reviewed = []
    for item in db.rows(store_path, "select * from items where campaign_id = ? and gold = 0 order by id",
                        (campaign_id,)):
        decided = db.loads(item["outcome"], {}).get("select", {})
        if decided.get("override") and len(campaigns.candidates(store_path, item["id"])) == images_per_item:
            reviewed.append({**item, "decision": decided["decision"]})
    return reviewed


def gold_items(store_path: Path | str, data_dir: Path, earlier: str, n: int, seed: int, folder: Path,
               images_per_item: int) -> list[ReviewedGold]:
    """`n` gold items drawn (by `seed`) from the reviewed items of campaign `earlier`, their files copied into the
    new campaign's `folder`; a clear error when `earlier` has fewer than `n`."""
    reviewed = reviewed_items(store_path, earlier, images_per_item)
    if len(reviewed) < n:
        raise ValueError(f"campaign {earlier!r} has {len(reviewed)} items whose step 3 an admin decided with "
                         f"{images_per_item} images each; this campaign needs {n} gold items (gold_items, or "
                         "tasks_per_session x gold_rate): decide more in its Quality view (or `campaign "
                         "override`), or ask for fewer")
    source = campaigns.campaign_dir(data_dir, earlier)
    picked = random.Random(seed).sample(reviewed, n)
    return [_copied(item, source, Path(folder), store_path) for item in picked]


def _copied(item: dict, source: Path, folder: Path, store_path: Path | str) -> ReviewedGold:
    """An earlier item as a gold item of the campaign in `folder`, its files copied there."""
    records = campaigns.candidates(store_path, item["id"])
    for relative in [item["image"], *(r["path"] for r in records), *(r["display_path"] for r in records)]:
        if relative and not Path(relative).is_absolute() and not (folder / relative).is_file():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            copy_atomic(source / relative, folder / relative)
    spec = campaigns.ItemSpec(item["caption"], item["negative_caption"], item["type"] or "", item["subtype"] or "",
                              item["image"], {"select": [item["decision"]]}, gold=True)
    fields = ("slot", *campaigns.CANDIDATE_FIELDS)
    return ReviewedGold(spec, tuple({name: record[name] for name in fields} for record in records))


def add_candidates(store_path: Path | str, campaign_id: int, first_position: int, golds: list[ReviewedGold]) -> None:
    """Record the copied candidates of the gold items stored from position `first_position` on: each item moves
    to ``generated`` (`campaigns.add_candidate`), ready for step 3 with the campaign's own."""
    for offset, gold in enumerate(golds):
        item_id = db.rows(store_path, "select id from items where campaign_id = ? and position = ?",
                          (campaign_id, first_position + offset))[0]["id"]
        for record in gold.candidates:
            campaigns.add_candidate(store_path, item_id, record["slot"], record)
