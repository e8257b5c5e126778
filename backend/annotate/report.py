"""A campaign's state for its admin: items per stage, annotators' progress and gold accuracy, agreement,
the human baseline, why items were dropped.

Gold items measure annotators and are left out of every other number here.
Agreement follows BiVLC: Cohen's kappa per annotator pair on "picked an image
vs none" (their definition, appendix H.3), also on the chosen image, and
Krippendorff's alpha over all annotators. A validation campaign's agreement is the same pair of measures on its
three-way label (false / still true / not fluent).
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from backend.annotate import campaigns, db, progress
from backend.annotate.agreement import (
    Answer,
    chosen_image,
    flagged,
    gold_accuracy,
    krippendorff_alpha,
    pairwise_kappa,
    picked_or_none,
    wilson_interval,
)
from backend.annotate.quality import speed_flagged
from backend.core.markup import literal


def status(store_path: Path | str, name: str) -> dict[str, Any]:
    campaign = campaigns.get(store_path, name)
    config, campaign_id = campaign["config"], campaign["id"]
    items = db.rows(store_path, "select stage, gold, outcome from items where campaign_id = ?", (campaign_id,))
    given = db.rows(store_path, "select a.item_id, a.stage, a.choice, a.correct, a.time_ms, a.annotator_id, "
                                "n.external_id, i.gold, a.source from answers a join items i on i.id = a.item_id "
                                "left join annotators n on n.id = a.annotator_id where a.campaign_id = ? "
                                "and a.source in ('annotator', 'excluded') order by a.id", (campaign_id,))
    answers = [row for row in given if row["source"] == "annotator"]  # excluded ones count for their author only
    return {"name": name, "config": config.to_dict(),
            "stages": dict(Counter(row["stage"] for row in items if not row["gold"])),
            "gold_items": sum(row["gold"] for row in items),
            "dropped": dict(Counter(db.loads(row["outcome"], {}).get("stage_reason", "")
                                    for row in items if row["stage"] == "dropped" and not row["gold"])),
            "answers": dict(Counter(row["stage"] for row in answers if not row["gold"])),
            "remaining": (left := progress.remaining(store_path, campaign_id, config)),
            "places": places(store_path, campaign_id, config, left),
            "annotators": annotator_table(store_path, campaign_id, given, config),
            "agreement": agreement(answers),
            "baseline": baseline(answers)}


def places(store_path: Path | str, campaign_id: int, config: campaigns.CampaignConfig,
           left: dict[str, Any] | None = None) -> dict[str, int]:
    """How many Prolific places the campaign can fill: its answers (items x overlap x steps) over the regular
    (non-gold) tasks of a full session; and how many it can still fill, from the answers not yet given nor
    reserved (`progress.remaining`'s "unclaimed"). A session that starts when fewer tasks are open is shorter
    (`backend.annotate.assign`), so these are what full sessions fill. `left`: `remaining`'s answer when the
    caller has it already."""
    left = left or progress.remaining(store_path, campaign_id, config)
    per_session = max(1, config.tasks_per_session - math.floor(config.tasks_per_session * config.gold_rate))
    answers, unclaimed = left["total"]["target"], left["total"]["unclaimed"]
    return {"answers": answers, "per_session": per_session, "places": math.ceil(answers / per_session),
            "answers_left": unclaimed, "places_left": math.ceil(unclaimed / per_session)}


def annotator_table(store_path: Path | str, campaign_id: int, answers: list[dict],
                    config: campaigns.CampaignConfig) -> list[dict]:
    """Per annotator: answers, the session's length (None: none started: the study was full or they wait), tasks
    held or reserved, gold accuracy with its interval, median time per task, answers refused as too fast
    (`backend.annotate.quality`), flags ("gold": accuracy under the threshold; "speed"), finished."""
    quality = gold_accuracy([(row["external_id"], bool(row["correct"])) for row in answers
                             if row["gold"] and row["correct"] is not None])
    held = Counter(row["annotator_id"] for row in db.rows(
        store_path, "select annotator_id from assignments where campaign_id = ? and status in ('held', 'reserved')",
        (campaign_id,)))
    table = []
    by_annotator: dict[int, list[dict]] = {}
    for row in answers:
        by_annotator.setdefault(row["annotator_id"], []).append(row)
    for person in db.rows(store_path, "select * from annotators where campaign_id = ? order by id", (campaign_id,)):
        mine = by_annotator.get(person["id"], [])
        gold = quality.get(person["external_id"])
        low, high = wilson_interval(gold.n_correct, gold.n_gold) if gold else (None, None)
        flags = [reason for reason, raised in (
            ("gold", gold is not None and flagged(gold, config.gold_threshold, config.min_gold)),
            ("speed", speed_flagged(person["too_fast"]))) if raised]
        table.append({"annotator": person["external_id"], "source": person["source"], "answered": len(mine),
                      "session": person["quota"],
                      "held": held.get(person["id"], 0), "gold": gold.n_gold if gold else 0,
                      "gold_accuracy": gold.accuracy if gold else None, "gold_interval": (low, high),
                      "flagged": bool(flags), "flags": flags, "too_fast": person["too_fast"],
                      "median_ms": statistics.median(r["time_ms"] for r in mine) if mine else None,
                      "finished": person["finished_at"] is not None})
    return table


def agreement(answers: list[dict]) -> dict[str, Any]:
    """Kappa per pair and alpha over all, on the non-gold select, ambiguity and validate answers."""
    rows = [Answer(r["item_id"], r["external_id"], r["stage"], r["choice"]) for r in answers if not r["gold"]]
    result: dict[str, Any] = {}
    for label, stage, view in (("picked_or_none", "select", picked_or_none), ("chosen_image", "select", chosen_image),
                               ("ambiguity", "ambiguity", chosen_image), ("validate", "validate", chosen_image)):
        units: dict[int, list[str]] = {}
        for row in rows:
            if row.stage == stage:
                units.setdefault(row.item_id, []).append(view(row.choice))
        pairs = pairwise_kappa(rows, stage, view)
        kappas = [p.kappa for p in pairs if p.kappa is not None]
        result[label] = {"pairs": [asdict(p) for p in pairs],
                         "mean_kappa": statistics.fmean(kappas) if kappas else None,
                         "alpha": krippendorff_alpha(units)}
    return result


def baseline(answers: list[dict]) -> dict[str, Any]:
    """Human accuracy on BiVLC's separate I2T and T2I questions, with 95% Wilson intervals."""
    out = {}
    for task in ("i2t", "t2i"):
        marks = [row["correct"] for row in answers if row["stage"] == task and not row["gold"]]
        if marks:
            out[task] = {"n": len(marks), "accuracy": sum(marks) / len(marks),
                         "interval": wilson_interval(sum(marks), len(marks))}
    return out


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def to_markdown(state: dict[str, Any]) -> str:
    """The status as Markdown: what the Campaigns tab shows and `campaign status` prints."""
    stages = ", ".join(f"{stage} {count}" for stage, count in sorted(state["stages"].items())) or "none"
    lines = [f"**{state['name']}**: items by stage: {stages}; gold items {state['gold_items']}.",
             f"Answers: {', '.join(f'{k} {v}' for k, v in state['answers'].items()) or 'none yet'}.",
             progress.to_markdown(state["remaining"])]
    room = state["places"]
    lines.append(f"Prolific places: **{room['places']}** in all ({room['answers']} answers: items x overlap x "
                 f"steps, {room['per_session']} regular tasks per full session); **{room['places_left']}** still "
                 f"to fill ({room['answers_left']} answers neither given nor reserved). Do not open more.")
    if state["dropped"]:
        lines.append("Dropped: " + "; ".join(f"{why} ({n})" for why, n in state["dropped"].items()) + ".")
    agree = state["agreement"]
    if state["config"]["kind"] == campaigns.VALIDATE:
        lines.append(f"Agreement (is the negative false: false / still true / not fluent): mean Cohen's kappa "
                     f"{_number(agree['validate']['mean_kappa'])} over {len(agree['validate']['pairs'])} pair(s), "
                     f"Krippendorff's alpha {_number(agree['validate']['alpha'])}.")
    else:
        lines.append(f"Agreement (step 3, picked an image vs none, BiVLC's measure): mean Cohen's kappa "
                     f"{_number(agree['picked_or_none']['mean_kappa'])} over {len(agree['picked_or_none']['pairs'])} "
                     f"pair(s), Krippendorff's alpha {_number(agree['picked_or_none']['alpha'])}; on the chosen "
                     f"image: kappa {_number(agree['chosen_image']['mean_kappa'])}, "
                     f"alpha {_number(agree['chosen_image']['alpha'])}"
                     f"; step 4: alpha {_number(agree['ambiguity']['alpha'])}.")
    for task, label in (("i2t", "I2T"), ("t2i", "T2I")):
        if task in state["baseline"]:
            b = state["baseline"][task]
            lines.append(f"Human baseline {label}: {_percent(b['accuracy'])} of {b['n']} "
                         f"(95% CI {_percent(b['interval'][0])}-{_percent(b['interval'][1])}).")
    table = ["| annotator | source | answered | session | held | gold | gold accuracy | median time per task "
             "| too fast | flagged | finished |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in state["annotators"]:
        median = "n/a" if row["median_ms"] is None else f"{row['median_ms'] / 1000:.1f} s"
        table.append(f"| {literal(row['annotator'])} | {row['source']} | {row['answered']} "
                     f"| {row['session'] or 'none'} | {row['held']} "
                     f"| {row['gold']} "
                     f"| {_percent(row['gold_accuracy'])} | {median} | {row['too_fast'] or ''} "
                     f"| {', '.join(row['flags']).upper()} "
                     f"| {'yes' if row['finished'] else ''} |")
    if state["annotators"]:
        lines.append("\n".join(table))
    return "\n\n".join(lines)
