"""Who may continue an annotator's session: nobody can answer as someone else by typing their name.

A local annotator is known by the name they type. On a server others can
reach, anyone typing "alice" would otherwise continue alice's session: see
her task, answer it in her name, spoil her gold score. So the first start under
a name issues a *resume key* (shown on the page, remembered by that browser);
continuing the name from another browser session needs the key. Only its hash
is stored. A Prolific participant is known by the ``PROLIFIC_PID`` of their
study link, a 24-character random id that only Prolific and the participant
see: the link is their key. A typed name never continues a Prolific
participant's session, nor a link a typed name's.

Keys are needed unless the app is open-local (bound to loopback, no admin
credentials: everyone who can reach it is on this machine, and a name alone
continues its session, as before). Names that started before keys existed
have none: the next start under such a name claims it with a new key.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from backend.annotate import assign, db, quality
from backend.annotate.prolific import Identity
from backend.core import auth
from backend.core.settings import Settings

# No 0/O, 1/I/L: a key is read off a screen and typed. 12 of 31 symbols: about 59 bits.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
GROUPS, GROUP_SIZE = 3, 4


class ResumeRefused(ValueError):
    """A start that would continue someone else's session; the message says what would work."""


@dataclass(frozen=True)
class Entry:
    """The annotator a start continues or creates, and the key issued now ("" when none was)."""

    annotator_id: int
    issued: str = ""


def keys_required(settings: Settings) -> bool:
    """Whether continuing a local name needs its key: everywhere but an open-local app."""
    return auth.policy(settings).mode != "open-local"


def new_key() -> str:
    """A fresh key, e.g. ``K7PQ-3XMA-HW2R`` (never all digits: the dashes stay)."""
    symbols = "".join(secrets.choice(ALPHABET) for _ in range(GROUPS * GROUP_SIZE))
    return "-".join(symbols[k:k + GROUP_SIZE] for k in range(0, len(symbols), GROUP_SIZE))


def digest(key: str) -> str:
    """What is stored of a key: its SHA-256, after the spelling a person may vary (case, spaces, dashes)."""
    normal = "".join(str(key or "").upper().split()).replace("-", "")
    return hashlib.sha256(normal.encode()).hexdigest()


def enter(store_path: Path | str, campaign_id: int, identity: Identity, key: str = "", *, required: bool = True,
          current: int | None = None, client: str = "") -> Entry:
    """Start or continue `identity`'s session in the campaign.

    A new local name gets a key; an existing one is continued by the browser session that already holds it
    (`current`), by anyone with its key, or by anyone at all when keys are not `required`. A name that belongs to
    the other kind of identity (local vs Prolific) is refused, as is a wrong or missing key: nothing is written.
    `client` (the request's address) is kept hashed, to cap what one client holds (`backend.annotate.quality`)."""
    name = identity.external_id.strip()
    with db.write(store_path) as conn:
        row = conn.execute("select id, external_id, source, resume_hash from annotators "
                           "where campaign_id = ? and external_id = ?", (campaign_id, name)).fetchone()
        if row is not None:
            _check(row, identity.source, key, required, current)
        issued = new_key() if identity.source == "local" and (row is None or row["resume_hash"] is None) else ""
        annotator_id = assign.joined(conn, campaign_id, name, identity.source, identity.study_id,
                                     identity.session_id, digest(issued) if issued else None)
        if issued and row is not None:  # a name from before resume keys: this start claims it
            conn.execute("update annotators set resume_hash = ? where id = ?", (digest(issued), annotator_id))
        quality.note_client(conn, campaign_id, annotator_id, client)
        db.changed(conn, "annotators", annotator_id)
        return Entry(annotator_id, issued)


def _check(row: sqlite3.Row, source: str, key: str, required: bool, current: int | None) -> None:
    """Refuse to continue an existing annotator's session unless this visitor may (see `enter`)."""
    name = row["external_id"]
    if row["source"] != source:
        raise ResumeRefused(f"{name!r} is already in use in this campaign: pick another name")
    if source != "local" or not required or row["resume_hash"] is None or row["id"] == current:
        return
    if not hmac.compare_digest(digest(key), row["resume_hash"]):
        raise ResumeRefused(f"{name!r} has already started in this campaign. To continue that session, enter its "
                            "resume key (shown when it began; the browser that began it fills it in). Otherwise "
                            "pick another name.")


def started(store_path: Path | str, campaign_id: int, external_id: str) -> bool:
    """Whether `external_id` has begun a session in the campaign (a study link reopened: no second intro)."""
    return bool(db.rows(store_path, "select 1 from annotators where campaign_id = ? and external_id = ?",
                        (campaign_id, external_id.strip())))
