"""Annotator competence beyond gold accuracy, per-item uncertainty, and the admin's adjudication queue.

Dawid-Skene (`backend.annotate.dawid_skene`) runs over every answer of a campaign, one estimate per resolved
task: step 3 ("select") in BiVLC's "picked an image vs none" view (slot numbers mean nothing across items, so a
confusion matrix over slots would not either), step 4 ("ambiguity") over original / negative / both. Gold items
anchor it with their known answer, and an admin's decision anchors its item. Answers set aside by an exclusion
(`backend.annotate.exclusion`) still count here: Dawid-Skene weighs each answer by its author's confusion matrix,
and an excluded annotator's competence must stay visible for the admin to judge a restore. Undone answers do not.

An annotator is flagged for competence when their Dawid-Skene competence (answers of both steps pooled, weighted
by answers) is under the campaign's ``competence_threshold`` after at least `MIN_ANSWERS` answers. The
adjudication queue lists the decided or dropped tasks whose posterior is uncertain (highest posterior under
``below``, or tied) or whose resolution rule tied, with each answer and its author's competence; the admin decides
them with `resolution.override`, which records an answer of source "admin" and anchors the next estimate.
"""
from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

from backend.annotate import campaigns, db, report
from backend.annotate.agreement import picked_or_none
from backend.annotate.dawid_skene import Estimate, estimate
from backend.annotate.tasks import VALIDATE_OPTIONS

SMOOTHING = 0.5  # pseudo-answers per confusion cell (docs/REFERENCE.md, "Annotator competence")
MIN_ANSWERS = 10  # answers before a low competence flags anyone
UNCERTAIN_BELOW = 0.8  # an item whose highest posterior is under this goes to the adjudication queue
TASK_LABELS = {"select": ("image", "none"), "ambiguity": ("original", "negative", "both"),
               "validate": VALIDATE_OPTIONS}
AWAITING = {"select": ("pending", "generated"), "ambiguity": ("selected",), "validate": ("ready",)}  # still open


def view(task: str, choice: str) -> str:
    """An answer as the estimate sees it: "image" or "none" for step 3, the side as stored for step 4."""
    return picked_or_none(choice) if task == "select" else choice


def _truth(task: str, item: dict) -> list[str]:
    """A gold item's known answer in the estimate's labels (empty when it has none for this task)."""
    known = db.loads(item["truth"], {}).get(task)
    if known is None:
        return []
    if task == "select":
        return sorted({view(task, str(slot)) for slot in known})
    return [known]


def estimates(store_path: Path | str, campaign_id: int) -> tuple[dict[str, Estimate], list[dict]]:
    """One Dawid-Skene estimate per resolved task, and the answers it used (with the annotator's id)."""
    answers = db.rows(store_path, "select a.id, a.item_id, a.stage, a.choice, a.source, a.annotator_id, a.actor, "
                                  "n.external_id, i.gold, i.truth from answers a join items i on i.id = a.item_id "
                                  "left join annotators n on n.id = a.annotator_id where a.campaign_id = ? and "
                                  "a.stage in ('select', 'ambiguity', 'validate') and a.source in ('annotator', "
                                  "'excluded', 'admin') order by a.id", (campaign_id,))
    found = {}
    for task, labels in TASK_LABELS.items():
        mine = [row for row in answers if row["stage"] == task]
        anchors = {row["item_id"]: _truth(task, row) for row in mine if row["gold"]}
        anchors.update({row["item_id"]: [view(task, row["choice"])] for row in mine if row["source"] == "admin"})
        triples = [(row["item_id"], row["annotator_id"], view(task, row["choice"])) for row in mine
                   if row["source"] != "admin"]
        found[task] = estimate(triples, labels, anchors, smoothing=SMOOTHING)
    return found, answers


def competence(store_path: Path | str, name: str, below: float = UNCERTAIN_BELOW) -> dict[str, Any]:
    """The campaign's estimate: per annotator (competence per step and pooled, confusion matrices, the report's
    gold and speed flags plus "competence"), per step (prior, iterations), and the adjudication queue."""
    campaign = campaigns.get(store_path, name)
    config, campaign_id = campaign["config"], campaign["id"]
    found, answers = estimates(store_path, campaign_id)
    flags = {row["annotator"]: row["flags"] for row in report.status(store_path, name)["annotators"]}
    people = db.rows(store_path, "select id, external_id, excluded from annotators where campaign_id = ? order by id",
                     (campaign_id,))
    table = []
    for person in people:
        per_step = {task: (est.competence[person["id"]], est.answers[person["id"]]) for task, est in found.items()
                    if person["id"] in est.competence}
        n = sum(count for _, count in per_step.values())
        pooled = sum(value * count for value, count in per_step.values()) / n if n else None
        low = pooled is not None and n >= MIN_ANSWERS and pooled < config.competence_threshold
        table.append({"annotator": person["external_id"], "answers": n, "competence": pooled,
                      "by_step": {task: value for task, (value, _) in per_step.items()},
                      "confusion": {task: found[task].confusion[person["id"]] for task in per_step},
                      "flags": [*flags.get(person["external_id"], []), *(["competence"] if low else [])],
                      "excluded": person["excluded"] is not None})
    steps = {task: {"labels": list(est.labels), "prior": est.prior, "iterations": est.iterations,
                    "converged": est.converged, "items": len(est.posterior)} for task, est in found.items()}
    return {"name": name, "threshold": config.competence_threshold, "min_answers": MIN_ANSWERS, "below": below,
            "annotators": table, "steps": steps,
            "queue": queue(store_path, campaign_id, found, answers, {r["annotator"]: r for r in table}, below)}


def queue(store_path: Path | str, campaign_id: int, found: dict[str, Estimate], answers: list[dict],
          people: dict[str, dict], below: float) -> list[dict]:
    """The tasks an admin should decide: past their step (decided or dropped), not decided by an admin, and
    either uncertain under the estimate (highest posterior under `below`, or a tie) or tied under the rule."""
    by_task: dict[tuple[int, str], list[dict]] = {}
    for row in answers:
        by_task.setdefault((row["item_id"], row["stage"]), []).append(row)
    items = {row["id"]: row for row in db.rows(store_path, "select id, stage, outcome, caption, negative_caption "
                                                           "from items where campaign_id = ? and gold = 0",
                                               (campaign_id,))}
    entries = []
    for (item_id, task), rows in sorted(by_task.items()):
        item = items.get(item_id)
        if item is None or item["stage"] in AWAITING[task] or any(r["source"] == "admin" for r in rows):
            continue
        est: Estimate = found[task]
        if item_id not in est.posterior:
            continue
        decided = db.loads(item["outcome"], {}).get(task, {})
        tied = task in db.loads(item["outcome"], {}) and decided.get("decision") is None
        top = max(est.posterior[item_id].values())
        if not (tied or top < below or est.decision(item_id) is None):
            continue
        entries.append({"item_id": item_id, "task": task, "stage": item["stage"], "caption": item["caption"],
                        "negative_caption": item["negative_caption"], "resolution": decided.get("decision"),
                        "rule_tied": tied, "estimate": est.decision(item_id), "max_posterior": top,
                        "entropy": est.entropy(item_id), "posterior": est.posterior[item_id],
                        "answers": [_answer(row, people) for row in rows]})
    return entries


def _answer(row: dict, people: dict[str, dict]) -> dict[str, Any]:
    person = people.get(row["external_id"], {})
    return {"annotator": row["external_id"], "choice": row["choice"], "excluded": row["source"] == "excluded",
            "competence": person.get("competence")}


def flagged(store_path: Path | str, name: str) -> dict[Hashable, list[str]]:
    """The annotators flagged by gold accuracy, speed or competence, and why, that are not excluded yet."""
    return {row["annotator"]: row["flags"] for row in competence(store_path, name)["annotators"]
            if row["flags"] and not row["excluded"]}
