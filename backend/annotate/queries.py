"""Read-only queries of a campaign for the admin's tools (the Campaigns tab, the command line): its items, their
answers, its images, and a marker that changes whenever any of them does.

Every read is one snapshot (WAL readers never block the annotators' writes); decisions and writes live in
`assign`, `resolution` and `campaigns`.
"""
from __future__ import annotations

from pathlib import Path

from backend.annotate import db


def change_marker(store_path: Path | str, name: str | None) -> dict:
    """Items, their latest change, answers and the tasks handed out (the latest assignment, and how many are
    reserved or held) of campaign `name` (zeros when there is none): a view polls it and redraws only when it
    changed."""
    return db.rows(store_path, "select count(i.id) as items, max(i.updated_at) as changed, (select count(*) from "
                               "answers a where a.campaign_id = c.id) as answers, (select max(id) from assignments s "
                               "where s.campaign_id = c.id) as handed_out, (select count(*) from assignments s where "
                               "s.campaign_id = c.id and s.status in ('reserved', 'held')) as open from campaigns c "
                               "left join items i on i.campaign_id = c.id where c.name = ?", (name or "",))[0]


def assist_model(store_path: Path | str, name: str) -> str | None:
    """The CLIP model that scored the campaign's candidates for the admin, if any did."""
    found = db.rows(store_path, "select c.clip_model from candidates c join items i on i.id = c.item_id join "
                                "campaigns k on k.id = i.campaign_id where k.name = ? and c.clip_model is not null "
                                "limit 1", (name,))
    return found[0]["clip_model"] if found else None


def image_counts(store_path: Path | str, campaign_id: int) -> dict:
    """Items, items still waiting for their images (stage pending), and candidate images stored."""
    return db.rows(store_path, "select count(*) as items, coalesce(sum(stage = 'pending'), 0) as waiting, "
                               "(select count(*) from candidates c join items j on j.id = c.item_id where "
                               "j.campaign_id = :id) as images from items where campaign_id = :id",
                   {"id": campaign_id})[0]


def items(store_path: Path | str, campaign_id: int) -> list[dict]:
    """Every item, gold items last, in creation order."""
    return db.rows(store_path, "select * from items where campaign_id = ? order by gold, position", (campaign_id,))


def answers_by_item(store_path: Path | str, campaign_id: int) -> dict[int, list[dict]]:
    """Each item's answers (stage, choice, source) in the order they came."""
    found: dict[int, list[dict]] = {}
    for row in db.rows(store_path, "select item_id, stage, choice, source from answers where campaign_id = ? "
                                   "order by id", (campaign_id,)):
        found.setdefault(row["item_id"], []).append(row)
    return found


def item(store_path: Path | str, name: str, item_id: int) -> dict:
    """Item `item_id` of campaign `name`; a clear error when the id belongs to no item of it."""
    found = db.rows(store_path, "select i.* from items i join campaigns c on c.id = i.campaign_id where i.id = ? "
                                "and c.name = ?", (int(item_id), name))
    if not found:
        raise ValueError(f"campaign {name!r} has no item {int(item_id)}; pick one from the items table")
    return found[0]


def item_answers(store_path: Path | str, item_id: int) -> list[dict]:
    """Every answer to one item with who gave it (a participant's id, else the acting admin), oldest first."""
    return db.rows(store_path, "select coalesce(n.external_id, a.actor) as annotator, a.stage, a.choice, "
                               "a.correct, a.time_ms, a.source, a.created_at from answers a left join annotators n "
                               "on n.id = a.annotator_id where a.item_id = ? order by a.id", (item_id,))
