"""Gold tasks in a session: how often, which item, and where in the session (at least one early).

A gold item's right answer is known, so it checks its annotator. Three rules, each decided on the server inside
assignment's write transaction (`backend.annotate.assign._reserve`):

- **Rate**: every ``1/gold_rate`` tasks (`turn`), at a phase per annotator derived from the campaign's secret
  (`backend.annotate.quality.campaign_secret`), so nobody can compute from the public code where the checks fall.
- **Which**: a gold item with images that this annotator has not seen, at random (`pick`).
- **Early**: a session of `EARLY_FROM` tasks or more holds a gold task in its first quarter (`place_early`):
  a bot that answers a few tasks and leaves, or a short session, still meets a check. When the rate gave the
  session no gold task at all, its last regular task becomes one; the first gold task is then moved to a
  position of the first quarter that the campaign's secret picks for this annotator (never always the first).
"""
from __future__ import annotations

import math
import sqlite3

from backend.annotate import quality

EARLY_FROM = 4  # sessions of at least this many tasks get a gold task in their first quarter


def phase(secret: bytes, annotator_id: int) -> float:
    """Where in the every-1/rate cycle an annotator's gold tasks fall, in [0, 1)."""
    return quality.keyed(secret, "gold-phase", annotator_id) / 2**64


def turn(served: int, rate: float, offset: float) -> bool:
    """Whether task number `served` (0-based, in the annotator's sessions) is a gold one: every 1/rate tasks,
    at the annotator's `offset` (`phase`)."""
    if rate <= 0:
        return False
    return math.floor((served + 1) * rate + offset) > math.floor(served * rate + offset)


def pick(conn: sqlite3.Connection, annotator: sqlite3.Row) -> tuple[int, str, None] | None:
    """(item, task, None): a gold item with images that the annotator was never given, with its task ("select";
    a validation campaign's: "validate"); None when none is left."""
    row = conn.execute(
        "select i.id, i.stage from items i where i.campaign_id = ? and i.gold = 1 and i.stage != 'pending' and "
        "not exists (select 1 from assignments a where a.item_id = i.id and a.annotator_id = ?) "
        "order by random() limit 1",
        (annotator["campaign_id"], annotator["id"])).fetchone()
    return (row[0], "validate" if row[1] == "ready" else "select", None) if row else None


def early_position(n_tasks: int, secret: bytes, annotator_id: int) -> int:
    """Where the first gold task of a session of `n_tasks` goes: a position of its first quarter, per annotator."""
    return quality.keyed(secret, "gold-early", annotator_id, n_tasks) % max(1, n_tasks // 4)


def place_early(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict) -> None:
    """Make the session just reserved (the annotator's ``reserved`` rows, in the order they will be shown) hold a
    gold task in its first quarter, when it has `EARLY_FROM` tasks or more and the campaign gold (a rate above 0
    and a gold item left)."""
    if config["gold_rate"] <= 0:
        return
    rows = conn.execute("select a.*, i.gold from assignments a join items i on i.id = a.item_id where "
                        "a.annotator_id = ? and a.status = 'reserved' order by a.id", (annotator["id"],)).fetchall()
    if len(rows) < EARLY_FROM:
        return
    golds = [k for k, row in enumerate(rows) if row["gold"]]
    if not golds:
        chosen = pick(conn, annotator)
        if chosen is None:
            return
        conn.execute("update assignments set item_id = ?, stage = ?, layout = '{}' where id = ?",
                     (chosen[0], chosen[1], rows[-1]["id"]))
        golds = [len(rows) - 1]
    first = golds[0]
    if first < len(rows) // 4:
        return
    order = [row["id"] for row in rows]
    moved = order.pop(first)
    secret = quality.campaign_secret(conn, annotator["campaign_id"])
    order.insert(early_position(len(rows), secret, annotator["id"]), moved)
    _reorder(conn, sorted(order), order)


def _reorder(conn: sqlite3.Connection, ids: list[int], order: list[int]) -> None:
    """Give the rows listed in `order` the ids `ids` (ascending), so that they are shown in that order: the rows
    are written again whole (reserved rows are referenced by nothing yet)."""
    rows = {row["id"]: dict(row) for row in conn.execute(
        f"select * from assignments where id in ({', '.join('?' * len(ids))})", ids)}
    conn.execute(f"delete from assignments where id in ({', '.join('?' * len(ids))})", ids)
    for new_id, old_id in zip(ids, order):
        values = {**rows[old_id], "id": new_id}
        conn.execute(f"insert into assignments ({', '.join(values)}) values ({', '.join('?' * len(values))})",
                     tuple(values.values()))
