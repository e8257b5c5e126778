"""How many answers a campaign still needs, per annotation step and in total: what its admin watches.

An item needs `overlap` answers (plus one per tie it is at, `extra_answers`) at every step it has not passed
yet: step 3 (select), step 4 (ambiguity) and, with the human baseline, BiVLC's T2I and I2T questions. An item
dropped or done needs nothing more. Answers are counted from the assignments (answered ones: admin overrides
are decisions, not answers), tasks reserved for or held by a participant are counted apart: they are on their
way, not yet stored. Items that have not reached a step count its full overlap, so the later steps' numbers
are upper bounds (an item dropped at step 3 never needs step 4).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from backend.annotate import campaigns, db

STEPS = ("select", "ambiguity")  # BiVLC's two annotation steps; the human baseline adds BASELINE_STEPS
BASELINE_STEPS = ("t2i", "i2t")
STEP_OF_STAGE = {"pending": 0, "generated": 0, "selected": 1, "unambiguous": 2,  # the first step an item still needs
                 "ready": 0}  # a validation item's one step
COUNTS = ("target", "answered", "needed", "in_progress", "unclaimed")


def steps_of(config: campaigns.CampaignConfig) -> tuple[str, ...]:
    """The steps every item of a campaign goes through, in order (a validation campaign's: its one question)."""
    if config.kind == campaigns.VALIDATE:
        return (campaigns.VALIDATE,)
    return STEPS + (BASELINE_STEPS if config.human_baseline else ())


def remaining(store_path: Path | str, campaign_id: int, config: campaigns.CampaignConfig) -> dict[str, Any]:
    """Per step and in total ("total"): target (items x overlap), answered (stored), needed (still to store),
    in_progress (of those needed, reserved or held by someone now) and unclaimed (needed minus in progress:
    what new participants will give). Gold items are left out: they measure annotators."""
    steps = steps_of(config)
    items = db.rows(store_path, "select id, stage, extra_answers from items where campaign_id = ? and gold = 0",
                    (campaign_id,))
    answered: Counter = Counter()
    open_now: Counter = Counter()
    for row in db.rows(store_path, "select item_id, stage, status, count(*) as n from assignments where "
                                   "campaign_id = ? and status in ('reserved', 'held', 'answered') group by "
                                   "item_id, stage, status", (campaign_id,)):
        (answered if row["status"] == "answered" else open_now)[(row["item_id"], row["stage"])] += row["n"]
    counts = {step: dict.fromkeys(COUNTS, 0) for step in steps}
    for item in items:
        first = STEP_OF_STAGE.get(item["stage"], len(steps))  # done and dropped items need nothing more
        for index, step in enumerate(steps):
            key, count = (item["id"], step), counts[step]
            count["target"] += config.overlap
            count["answered"] += answered[key]
            if index < first:
                continue
            still = max(0, config.overlap + (item["extra_answers"] if index == first else 0) - answered[key])
            count["needed"] += still
            count["in_progress"] += min(still, open_now[key])
    for count in counts.values():
        count["unclaimed"] = count["needed"] - count["in_progress"]
    return {**counts, "total": {name: sum(count[name] for count in counts.values()) for name in COUNTS}}


def to_markdown(left: dict[str, Any]) -> str:
    """One line: the answers still needed, per step, and how many of them are on their way."""
    total = left["total"]
    if not total["needed"]:
        return "**0 answers still needed**: every item has all its answers."
    parts = [f"{step} {count['needed']} of {count['target']}" + (
        f" ({count['in_progress']} reserved or held now)" if count["in_progress"] else "")
        for step, count in left.items() if step != "total"]
    return (f"**{total['needed']} answers still needed** ({total['in_progress']} of them reserved or held by "
            f"participants now): {', '.join(parts)}. Later steps are upper bounds: an item dropped at step 3 "
            "needs no step 4.")
