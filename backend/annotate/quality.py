"""Quality and abuse checks that assignment (`backend.annotate.assign`) runs inside its write transactions.

A red-team script answered a whole campaign at 19 ms a task; a hoarder's forty study-link visits held every
task for ten minutes. The brakes here are decided by the server, never by the page:

- **Pace**: an answer given sooner than the campaign's ``min_seconds_per_task`` after its task was shown is
  refused (not stored, the task stays on screen) and counted on the annotator (``annotators.too_fast``);
  `SPEED_FLAG_AFTER` such refusals flag them for speed in the admin's table, like a poor gold record does.
- **Holds per client**: the tasks that annotators joined from one client (a hashed address, `client_hash`)
  hold together are capped at `HELD_SESSIONS_PER_CLIENT` sessions' worth, so one machine opening study links
  cannot reserve a campaign; and the tasks of an annotator who never answered anything come back to others
  after `UNSTARTED_RECLAIM_S`, not the campaign's ``reclaim_after_s``.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from pathlib import Path

from backend.annotate import db

SPEED_FLAG_AFTER = 3  # answers refused as too fast before an annotator is flagged for speed
HELD_SESSIONS_PER_CLIENT = 2  # sessions' worth of tasks that annotators of one client may hold at once
UNSTARTED_RECLAIM_S = 120.0  # the tasks of someone who never answered come back after this long away


def pace_refusal(conn: sqlite3.Connection, annotator_id: int, shown_at: float | None, config: dict,
                 now: float) -> str | None:
    """The sentence the annotator reads when their answer came sooner than the campaign's minimum after the
    task was shown (the refusal is counted), else None."""
    minimum = float(config.get("min_seconds_per_task") or 0.0)
    if not minimum or shown_at is None or now - shown_at >= minimum:
        return None
    conn.execute("update annotators set too_fast = too_fast + 1 where id = ?", (annotator_id,))
    return (f"You answered in {now - shown_at:.1f} s; please look at every image and the description before "
            f"answering (at least {minimum:g} s per task). Your answer was not recorded: answer this task again.")


def speed_flagged(too_fast: int) -> bool:
    """Whether an annotator's answers refused as too fast are enough to flag them."""
    return too_fast >= SPEED_FLAG_AFTER


def mac(secret: bytes, *parts: object) -> bytes:
    """HMAC-SHA256 of `parts` joined by ":" under the campaign's secret: the one keyed digest behind the clients'
    hashes, `keyed` numbers and the task images' names (`backend.annotate.images`)."""
    return hmac.new(secret, ":".join(str(part) for part in parts).encode(), hashlib.sha256).digest()


def client_hash(client: str, secret: bytes) -> str:
    """An opaque, stable name for a client's address (the store never keeps the address itself): keyed, so that
    the hashes of the few billion IPv4 addresses cannot be tabulated to reverse it."""
    return mac(secret, client).hex()[:24]


def client_room(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict) -> int:
    """How many more tasks this annotator's client may hold (reserved or on screen) in the campaign, counting
    every annotator who joined from the same client; unlimited (a session's worth) without a client."""
    if not annotator["client"]:
        return config["tasks_per_session"]
    held = conn.execute("select count(*) from assignments a join annotators n on n.id = a.annotator_id where "
                        "n.campaign_id = ? and n.client = ? and a.status in ('reserved', 'held')",
                        (annotator["campaign_id"], annotator["client"])).fetchone()[0]
    return max(0, HELD_SESSIONS_PER_CLIENT * config["tasks_per_session"] - held)


def release_unstarted(conn: sqlite3.Connection, campaign_id: int, now: float) -> None:
    """Give back what annotators reserved who never answered anything and were last seen over
    `UNSTARTED_RECLAIM_S` ago (a study link opened and left): they get it again when they come back and it is
    still open (`assign._released_again`)."""
    conn.execute("update assignments set status = 'released' where annotator_id in (select n.id from annotators n "
                 "where n.campaign_id = ? and coalesce(n.last_seen, n.started_at) < ? and not exists (select 1 "
                 "from assignments d where d.annotator_id = n.id and d.status in ('answered', 'excluded'))) and "
                 "status in ('reserved', 'held')", (campaign_id, now - UNSTARTED_RECLAIM_S))


def new_secret() -> bytes:
    """A campaign's secret, made when the campaign is created (`backend.annotate.campaigns.create`): its gold
    items are drawn from it before anyone joins."""
    return secrets.token_bytes(32)


def campaign_secret(conn: sqlite3.Connection, campaign_id: int) -> bytes:
    """The campaign's secret (kept in its store and its backup, never served): it keys the clients' hashes and
    seeds what an annotator must not be able to rebuild from the public code. Made here on first use for a
    campaign created before secrets were made at creation."""
    row = conn.execute("select secret from campaigns where id = ?", (campaign_id,)).fetchone()
    if row is not None and row[0]:
        return bytes.fromhex(row[0])
    secret = new_secret()
    conn.execute("update campaigns set secret = ? where id = ?", (secret.hex(), campaign_id))
    db.changed(conn, "campaigns", campaign_id)  # mirrored: a Space restored from its backup keeps the same secret
    return secret


def keyed(secret: bytes, *parts: object) -> int:
    """A 64-bit number nobody without the campaign's `secret` can predict, the same for the same parts: where gold
    tasks fall (`backend.annotate.gold`), which image of a pair is on the left (`assign._reserve_one`)."""
    return int.from_bytes(mac(secret, *parts)[:8], "big")


def secret_seed(secret: bytes, purpose: str) -> int:
    """A 63-bit seed (fits SQLite's INTEGER and torch's generators) for `purpose`, from the campaign's secret: which
    gold items a campaign has (``gold-items``) and how their images are drawn (``gold-images``). The same secret
    (after a restart, or restored from the backup) gives the same gold; the public code and parameters do not."""
    return keyed(secret, "seed", purpose) & (2**63 - 1)


def stored_secret_seed(store_path: Path | str, campaign_id: int, purpose: str) -> int:
    """`secret_seed` of a campaign in the store at `store_path`."""
    with db.write(store_path) as conn:
        return secret_seed(campaign_secret(conn, campaign_id), purpose)


def note_client(conn: sqlite3.Connection, campaign_id: int, annotator_id: int, client: str) -> None:
    """Remember (hashed) which client an annotator last started from, for `client_room`."""
    if client:
        conn.execute("update annotators set client = ? where id = ?",
                     (client_hash(client, campaign_secret(conn, campaign_id)), annotator_id))
