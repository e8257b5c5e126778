"""Prolific bonuses paid exactly once, through crashes and lost answers.

Prolific pays a bonus in two calls: "set up" (POST /submissions/bonus-payments/, free, returns a bulk id) and
"pay" (POST /bulk-bonus-payments/{id}/pay/), which its documentation says is NOT idempotent: each call pays
again. So every bonus is a row of ``prolific_bonuses`` (one line per participant in ``prolific_bonus_lines``,
unique per campaign, participant and reason: the same bonus is never asked for twice) whose ``state`` is
written BEFORE each call that could move money:

``intended`` (written before set-up; a lost set-up answer leaves a bulk bonus nobody pays, which costs
nothing, so set-up is simply asked again) -> ``set_up`` (the bulk id stored; "pay" was never sent) ->
``paying`` (written, under the write lock and only by whoever moved it from ``set_up``, before "pay" is sent)
-> ``paid``. A ``paying`` row is never paid blindly again: `reconcile` asks Prolific for each participant's
submission, whose ``bonus_payments`` lists what was paid; paid there -> ``paid``. Nothing there: Prolific pays
asynchronously ("in the following minutes"), so the row waits `SETTLE_S` after the "pay" was sent before
it is taken as never received and paid (once). Some participants paid and others not (a bulk payment is all
or nothing, so this should not happen) -> ``unsure``: left to the admin, never paid by the lab.
"""
from __future__ import annotations

import time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from backend.annotate import campaigns, db
from backend.annotate.prolific_api import ProlificClient, ProlificRefused, ProlificUnsure
from backend.annotate.prolific_study import client, study_row
from backend.core.auth import Actor, require_admin
from backend.core.settings import Settings

SETTLE_S = 900.0  # a "pay" sent this long ago and still not on Prolific's submissions never arrived
MAX_AMOUNT = Decimal("50")  # a guard against a typo: Prolific's "30" pays 30.00, not 0.30
UNFINISHED = ("intended", "set_up", "paying")


def cents(amount: str | float | Decimal) -> int:
    """An amount in the study's currency ("0.50") as cents; refuses what is not a positive amount."""
    try:
        value = Decimal(str(amount).strip())
    except InvalidOperation:
        raise ValueError(f"the bonus must be an amount such as 0.50, not {amount!r}") from None
    if not Decimal("0.01") <= value <= MAX_AMOUNT or value != value.quantize(Decimal("0.01")):
        raise ValueError(f"the bonus must be between 0.01 and {MAX_AMOUNT} with at most 2 decimals, not {amount}")
    return int(value * 100)


def pay_bonus(actor: Actor, settings: Settings, name: str, amount: str | float, participants: list[str] | None = None,
              reason: str = "bonus", now: float | None = None) -> dict[str, Any]:
    """Pay `amount` to each participant (default: every approved submission of the study) who has not been
    given a bonus for `reason` in this campaign yet. Finishes earlier unfinished bonuses first (`reconcile`)."""
    require_admin(actor, "paying Prolific bonuses")
    each = cents(amount)
    campaign = campaigns.get(settings.db, name)
    study = study_row(settings.db, campaign["id"], name)
    with client(settings) as api:
        earlier = _reconcile(api, settings.db, campaign["id"], now)
        bonus_id, skipped = _intend(settings.db, campaign["id"], study["study_id"], each, participants, reason,
                                    actor.name)
        outcome = _advance(api, settings.db, bonus_id, now) if bonus_id is not None else None
    return {"bonus_id": bonus_id, "state": outcome, "amount_cents": each, "skipped": skipped, "reconciled": earlier}


def reconcile(actor: Actor, settings: Settings, name: str, now: float | None = None) -> dict[str, Any]:
    """Carry every unfinished bonus of the campaign to its end, asking Prolific what it already paid."""
    require_admin(actor, "reconciling Prolific bonuses")
    campaign = campaigns.get(settings.db, name)
    with client(settings) as api:
        return {"reconciled": _reconcile(api, settings.db, campaign["id"], now)}


def bonuses(store_path: Path | str, name: str) -> list[dict[str, Any]]:
    """Every bonus line of the campaign with its bonus's state: who, how much, why, paid or not."""
    return db.rows(store_path, "select b.id as bonus_id, l.participant_id, l.amount_cents, l.reason, b.state, "
                               "b.bulk_id, b.note from prolific_bonus_lines l join prolific_bonuses b on "
                               "b.id = l.bonus_id join campaigns c on c.id = b.campaign_id where c.name = ? "
                               "order by b.id, l.participant_id", (name,))


def _intend(store_path: Path | str, campaign_id: int, study_id: str, each: int, participants: list[str] | None,
            reason: str, actor: str) -> tuple[int | None, list[str]]:
    """The bonus as an ``intended`` row with its lines, before any call; participants who already have a bonus
    for `reason` are skipped. Returns (its id, or None when nobody is left; those skipped)."""
    with db.write(store_path) as conn:
        known = {row[0]: row[1] for row in conn.execute(
            "select participant_id, status from prolific_submissions where campaign_id = ?", (campaign_id,))}
        if participants is None:
            participants = sorted(pid for pid, status in known.items() if status == "APPROVED")
        strangers = [pid for pid in participants if pid not in known]
        if strangers:
            raise ValueError(f"no submission of this study is from {', '.join(strangers[:5])}: poll the study "
                             "(sync) first, and bonus only its participants")
        had = {row[0] for row in conn.execute("select participant_id from prolific_bonus_lines where campaign_id = ? "
                                              "and reason = ?", (campaign_id, reason))}
        chosen = [pid for pid in dict.fromkeys(participants) if pid not in had]
        if not chosen:
            return None, sorted(had & set(participants))
        csv = "\n".join(f"{pid},{Decimal(each) / 100:.2f}" for pid in chosen)
        bonus_id = db.insert(conn, "insert into prolific_bonuses (campaign_id, study_id, state, csv, actor, "
                                   "created_at) values (?,?,'intended',?,?,?)",
                             (campaign_id, study_id, csv, actor, time.time()))
        db.changed(conn, "prolific_bonuses", bonus_id)
        for pid in chosen:
            line = db.insert(conn, "insert into prolific_bonus_lines (bonus_id, campaign_id, participant_id, reason, "
                                   "amount_cents) values (?,?,?,?,?)", (bonus_id, campaign_id, pid, reason, each))
            db.changed(conn, "prolific_bonus_lines", line)
    return bonus_id, sorted(had & set(participants))


def _reconcile(api: ProlificClient, store_path: Path | str, campaign_id: int, now: float | None) -> dict[int, str]:
    return {row["id"]: _advance(api, store_path, row["id"], now) for row in db.rows(
        store_path, f"select id from prolific_bonuses where campaign_id = ? and state in {UNFINISHED} order by id",
        (campaign_id,))}


def _advance(api: ProlificClient, store_path: Path | str, bonus_id: int, now: float | None = None) -> str:
    """Move one bonus as far as it safely goes; returns its state."""
    bonus = _row(store_path, bonus_id)
    if bonus["state"] == "intended":
        bonus = set_up(api, store_path, bonus)
    if bonus["state"] == "paying":
        bonus = _settle(api, store_path, bonus, time.time() if now is None else now)
    if bonus["state"] == "set_up":
        bonus = pay(api, store_path, bonus)
    return bonus["state"]


def set_up(api: ProlificClient, store_path: Path | str, bonus: dict) -> dict:
    """Ask Prolific to set the bonus up; store its bulk id. Refused: the lines are freed (nothing was paid)."""
    try:
        answer = api.set_up_bonuses(bonus["study_id"], bonus["csv"])
    except ProlificUnsure as error:
        return _update(store_path, bonus, "intended", note=str(error))
    except ProlificRefused as error:
        with db.write(store_path) as conn:
            conn.execute("delete from prolific_bonus_lines where bonus_id = ?", (bonus["id"],))
        return _update(store_path, bonus, "refused", note=str(error))
    return _update(store_path, bonus, "set_up", bulk_id=answer["id"], set_up_at=time.time(), note=None)


def pay(api: ProlificClient, store_path: Path | str, bonus: dict) -> dict:
    """Send "pay" once: the row becomes ``paying`` first, only if it still was ``set_up`` (so two processes never
    both send it). Lost answer: ask Prolific at once (`_settle`); refused: back to ``set_up``."""
    sent_at = time.time()
    with db.write(store_path) as conn:
        claimed = conn.execute("update prolific_bonuses set state = 'paying', pay_sent_at = ? where id = ? and "
                               "state = 'set_up'", (sent_at, bonus["id"])).rowcount
        db.changed(conn, "prolific_bonuses", bonus["id"])
    if not claimed:
        return _row(store_path, bonus["id"])
    try:
        api.pay_bonuses(bonus["bulk_id"])
    except ProlificUnsure as error:
        return _settle(api, store_path, _update(store_path, _row(store_path, bonus["id"]), "paying", note=str(error)),
                       sent_at)
    except ProlificRefused as error:
        return _update(store_path, _row(store_path, bonus["id"]), "set_up", note=str(error))
    return _update(store_path, _row(store_path, bonus["id"]), "paid", paid_at=time.time(), note=None)


def _settle(api: ProlificClient, store_path: Path | str, bonus: dict, now: float) -> dict:
    """A bonus whose "pay" may have reached Prolific: paid there -> ``paid``; nowhere, and sent over `SETTLE_S`
    ago -> ``set_up`` (never received: `pay` sends it once more); partly -> ``unsure``."""
    paid = _paid_on_prolific(api, store_path, bonus)
    if all(paid):
        return _update(store_path, bonus, "paid", paid_at=now, note="paid (confirmed by Prolific's submissions)")
    if any(paid):
        return _update(store_path, bonus, "unsure", note=f"Prolific shows {sum(paid)} of {len(paid)} paid: check "
                                                         "the study's bonuses on Prolific before paying anyone")
    if now - (bonus["pay_sent_at"] or 0) < SETTLE_S:
        return _update(store_path, bonus, "paying", note="pay sent; not on Prolific's submissions yet (it pays "
                                                         f"asynchronously): checked again after {SETTLE_S:.0f} s")
    with db.write(store_path) as conn:  # only if nobody else settled it meanwhile (and paid it again)
        conn.execute("update prolific_bonuses set state = 'set_up', note = ? where id = ? and state = 'paying' and "
                     "pay_sent_at = ?", ("pay never reached Prolific: sent again", bonus["id"], bonus["pay_sent_at"]))
        db.changed(conn, "prolific_bonuses", bonus["id"])
    return _row(store_path, bonus["id"])


def _paid_on_prolific(api: ProlificClient, store_path: Path | str, bonus: dict) -> list[bool]:
    """Per line: whether the participant's submission lists more payments of this amount than the lab's other
    paid bonuses of the same amount account for."""
    found = []
    for line in db.rows(store_path, "select * from prolific_bonus_lines where bonus_id = ?", (bonus["id"],)):
        submission = db.rows(store_path, "select id from prolific_submissions where campaign_id = ? and "
                                         "participant_id = ? order by started_at desc limit 1",
                             (bonus["campaign_id"], line["participant_id"]))[0]
        on_prolific = (api.get_submission(submission["id"]).get("bonus_payments") or []).count(line["amount_cents"])
        accounted = db.rows(store_path, "select count(*) as n from prolific_bonus_lines l join prolific_bonuses b on "
                                        "b.id = l.bonus_id where l.campaign_id = ? and l.participant_id = ? and "
                                        "l.amount_cents = ? and b.state = 'paid' and b.id != ?",
                            (bonus["campaign_id"], line["participant_id"], line["amount_cents"], bonus["id"]))[0]["n"]
        found.append(on_prolific > accounted)
    return found


def _row(store_path: Path | str, bonus_id: int) -> dict:
    return db.rows(store_path, "select * from prolific_bonuses where id = ?", (bonus_id,))[0]


def _update(store_path: Path | str, bonus: dict, state: str, **values: Any) -> dict:
    values["state"] = state
    with db.write(store_path) as conn:
        conn.execute(f"update prolific_bonuses set {', '.join(f'{k} = ?' for k in values)} where id = ?",
                     (*values.values(), bonus["id"]))
        db.changed(conn, "prolific_bonuses", bonus["id"])
    return _row(store_path, bonus["id"])
