"""Model assistance for the admin (never shown to annotators): CLIP scores of every candidate image.

Each candidate gets its score for the negative caption and for the original
one. The model's pick for an item is the candidate that scores highest for the
negative caption; the model says "none" when even that candidate scores no
higher for the negative caption than for the original (a tie counts as none,
as ties count as failures in docs/REFERENCE.md, "Metrics"). On items whose right answer is
known (toy items) `report` measures how often that pick is right and how many
"none" items it would catch: whether it could pre-filter items before paying
annotators. It is a measurement, not a filter the tool applies.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.annotate import campaigns, db
from backend.annotate.agreement import wilson_interval

if TYPE_CHECKING:
    from backend.models.loading import LoadedModel


def score_candidates(store_path: Path | str, campaign: str, folder: Path, loaded: LoadedModel,
                     batch_size: int = 64) -> int:
    """Score every candidate of the campaign with `loaded`; returns how many were scored."""
    from backend.core.images import open_image
    from backend.models.encoder import Encoder

    campaign_id = campaigns.get(store_path, campaign)["id"]
    rows = db.rows(store_path, "select c.id, c.path, i.caption, i.negative_caption from candidates c join items i "
                               "on i.id = c.item_id where i.campaign_id = ? order by c.id", (campaign_id,))
    encoder = Encoder(loaded, batch_size=batch_size)
    updates = []
    for start in range(0, len(rows), batch_size):
        chunk = rows[start:start + batch_size]
        images = [open_image(folder / row["path"]) for row in chunk]
        texts = sorted({text for row in chunk for text in (row["caption"], row["negative_caption"])})
        column = {text: k for k, text in enumerate(texts)}
        cosine = encoder.score(images, texts).cosine
        updates += [(float(cosine[k, column[row["negative_caption"]]]), float(cosine[k, column[row["caption"]]]),
                     loaded.spec, row["id"]) for k, row in enumerate(chunk)]
    with db.write(store_path) as conn:
        conn.executemany("update candidates set clip_negative = ?, clip_original = ?, clip_model = ? where id = ?",
                         updates)
        for *_, candidate_id in updates:  # mirrored to the Space backup like every other campaign row
            db.changed(conn, "candidates", candidate_id)
    return len(updates)


def model_pick(candidates: list[dict]) -> str:
    """The model's answer to step 3 for one item: a slot ("1".."4") or "none"."""
    best = max(candidates, key=lambda c: c["clip_negative"])
    return str(best["slot"] + 1) if best["clip_negative"] > best["clip_original"] else "none"


def picks(store_path: Path | str, campaign: str) -> dict[int, str]:
    """Item id -> the model's pick, for every item whose candidates are all scored."""
    campaign_id = campaigns.get(store_path, campaign)["id"]
    by_item: dict[int, list[dict]] = {}
    for row in db.rows(store_path, "select c.item_id, c.slot, c.clip_negative, c.clip_original from candidates c "
                                   "join items i on i.id = c.item_id where i.campaign_id = ?", (campaign_id,)):
        by_item.setdefault(row["item_id"], []).append(row)
    return {item: model_pick(rows) for item, rows in by_item.items()
            if all(row["clip_negative"] is not None for row in rows)}


def report(store_path: Path | str, campaign: str) -> dict[str, Any]:
    """How the model's picks compare with the known right answers (items whose truth is known)."""
    chosen = picks(store_path, campaign)
    campaign_id = campaigns.get(store_path, campaign)["id"]
    truths = {row["id"]: db.loads(row["truth"], {}).get("select") for row in
              db.rows(store_path, "select id, truth from items where campaign_id = ? and truth is not null",
                      (campaign_id,))}
    known = [(chosen[item], truth) for item, truth in truths.items() if item in chosen and truth]
    with_image = [(pick, truth) for pick, truth in known if truth != ["none"]]
    without = [(pick, truth) for pick, truth in known if truth == ["none"]]

    def share(hits: int, n: int) -> dict[str, Any]:
        return {"k": hits, "n": n, "rate": hits / n if n else None, "interval": wilson_interval(hits, n) if n else None}
    return {"items": len(known),
            "pick_right": share(sum(pick in truth for pick, truth in with_image), len(with_image)),
            "none_caught": share(sum(pick == "none" for pick, _ in without), len(without)),
            "wrongly_none": share(sum(pick == "none" for pick, _ in with_image), len(with_image))}
