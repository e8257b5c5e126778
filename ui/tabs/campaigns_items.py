"""What the Campaigns tab shows about a campaign, read from the store: items, one item's images and answers,
the generate job's progress, the model's assistance, the study link, the generator presets' licences.

Views only (no decisions): every number comes from `backend.annotate` or the
store. Kept apart from `ui/tabs/campaigns.py` so the tab's layout and handlers stay
readable, and so these functions can be called from tests without a server.
"""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from backend import jobs
from backend.annotate import assist, campaigns, db, prolific, queries, report
from backend.annotate.resolution import OVERRIDABLE, valid_decisions
from backend.core.errors import first_line
from backend.core.markup import literal
from backend.core.store import Store
from backend.generate.presets import model_card, presets

ITEM_COLUMNS = ["id", "stage", "gold", "caption", "negative caption", "type", "answers", "model pick"]
ANSWER_COLUMNS = ["annotator", "task", "choice", "correct", "time (s)", "source", "answered at"]


def preset_names() -> list[str]:
    """Every preset (those that need no download first, `presets()`'s order), then "custom"."""
    return [*presets(), "custom"]


def draws_with_diffusers(preset: str | None) -> bool:
    """Whether a preset's images come from a diffusers pipeline (so a batch size applies): custom, or a named one."""
    return preset == "custom" or (preset in presets() and presets()[preset].generator == "diffusers")


def licence_markdown(preset: str | None, model: str = "") -> str:
    """The licence that governs a preset's images (what the admin must respect when publishing them)."""
    if preset == "custom":
        url = model_card((model or "").strip())
        card = f" ([model card]({url}))" if url else ""
        return f"Licence: that of the model you name; read its card before publishing images{card}."
    found = presets().get(preset or "")
    if found is None:
        return f"Licence of {preset!r}: unknown here (not a preset of this version)."
    link = f" ([licence]({found.licence_url}))" if found.licence_url else ""
    summary = found.summary[:1].upper() + found.summary[1:]
    return f"Licence: {found.licence}{link}.  \n{summary}."


def campaign_names(store_path: Path | str) -> list[str]:
    """Newest first, as `campaigns.list_campaigns` orders them."""
    return [row["name"] for row in campaigns.list_campaigns(store_path)]


def fingerprint(store_path: Path | str, store: Store, name: str | None) -> list:
    """A cheap summary that changes whenever the tab's live parts would: the campaign names (first), which campaign
    is selected, its items, answers and tasks handed out, generate jobs. The timer redraws only when it changed."""
    marker = queries.change_marker(store_path, name)
    return [campaign_names(store_path), name, *marker.values(), *store.last_change("generate")]


def _time(value: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value)) if value else ""


def settings_markdown(store_path: Path | str, name: str) -> str:
    """The settings annotators experience, in one line, so the admin sees what the status numbers mean."""
    campaign = campaigns.get(store_path, name)
    c = campaign["config"]
    return (f"Source **{campaign['source']}**, created by {campaign['created_by'] or 'unknown'} on "
            f"{_time(campaign['created_at'])}. {c.overlap} answers per item and task, rule **{c.resolution}**, "
            f"{c.tasks_per_session} tasks per session, at least {c.min_seconds_per_task:g} s per task, "
            f"gold rate {100 * c.gold_rate:.0f}% "
            f"(flag below {100 * c.gold_threshold:.0f}% after {c.min_gold} gold answers), human baseline "
            f"{'on' if c.human_baseline else 'off'}, {c.images_per_item} images per item, generator "
            f"**{c.generator}**.")


def assist_markdown(store_path: Path | str, name: str) -> str:
    """The model-assistance summary, or nothing when no candidate has been scored."""
    picks = assist.picks(store_path, name)
    if not picks:
        return ""
    summary = assist.report(store_path, name)

    def share(part: dict) -> str:
        if not part["n"]:
            return "n/a"
        low, high = part["interval"]
        return f"{part['k']}/{part['n']} ({100 * part['rate']:.0f}%, 95% CI {100 * low:.0f}-{100 * high:.0f}%)"
    return (f"**Model assistance** ({queries.assist_model(store_path, name) or 'CLIP'}; admins only): {len(picks)} "
            f"item(s) scored, {summary['items']} with a known answer. Right image picked: "
            f"{share(summary['pick_right'])}; 'none' items caught: {share(summary['none_caught'])}; items with a "
            f"right image wrongly called 'none': {share(summary['wrongly_none'])}.")


def status_markdown(store_path: Path | str, name: str) -> str:
    """The campaign report (stages, annotators, agreement, baseline) and the model's assistance."""
    parts = [report.to_markdown(report.status(store_path, name)), assist_markdown(store_path, name)]
    return "\n\n".join(part for part in parts if part)


def study_link_markdown(app_url: str, store_path: Path | str, name: str) -> str:
    """The link an admin pastes into Prolific, the completion code, and how to serve annotation alone."""
    code = campaigns.get(store_path, name)["config"].completion_code
    link = prolific.study_url(app_url, name)
    return (f"**Study link** (paste into Prolific as the study URL): `{link}`  \n"
            f"It opens the campaign's intro (edit it under Instructions), then its tasks, and nothing else.  \n"
            f"Completion code: **{code}** (Prolific sends finished participants back with it).  \n"
            "`python app.py --mode annotate` serves only the annotation flow: run that for a public study.")


def generate_markdown(store: Store, name: str | None) -> str:
    """How many candidate images exist, and the campaign's latest generate job: status, progress, its
    latest progress line."""
    if not name:
        return ""
    campaign = campaigns.get(store.path, name)
    counts = queries.image_counts(store.path, campaign["id"])
    text = (f"Candidate images: **{counts['images']} of {counts['items'] * campaign['config'].images_per_item}** "
            f"stored; {counts['waiting']} item(s) still waiting for theirs.")
    found = [job for job in store.list_jobs(kind="generate", limit=None)
             if (job.get("args") or {}).get("campaign") == name]
    if not found:
        return text + " No generate job yet."
    job = found[0]
    text += (f"  \nGenerate job **#{job['id']}** on `{jobs.label(job)}`: **{job['status']}**, "
             f"{100 * (job['progress'] or 0):.0f}%")
    if job.get("message"):
        text += f" - {job['message']}"
    if job.get("error") and job["status"] != "running":
        text += f"  \n{first_line(job['error'], limit=10_000)}"
    return text


def _answers_summary(answers: list[dict]) -> str:
    """Choices per task in answer order, e.g. "select 2, 2, none; ambiguity original"; overrides marked."""
    by_task: dict[str, list[str]] = {}
    for row in answers:
        by_task.setdefault(row["stage"], []).append(row["choice"] + (" (admin)" if row["source"] == "admin" else ""))
    return "; ".join(f"{task} {', '.join(choices)}" for task, choices in by_task.items())


def items_frame(store_path: Path | str, name: str) -> pd.DataFrame:
    """One row per item (gold items last): its stage, captions, what annotators answered and the model's pick."""
    campaign_id = campaigns.get(store_path, name)["id"]
    picks = assist.picks(store_path, name)
    answers = queries.answers_by_item(store_path, campaign_id)
    rows = [[item["id"], item["stage"], "gold" if item["gold"] else "", item["caption"], item["negative_caption"],
             "/".join(part for part in (item["type"], item["subtype"]) if part), _answers_summary(answers.get(
                 item["id"], [])), picks.get(item["id"], "")]
            for item in queries.items(store_path, campaign_id)]
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)


def candidate_label(row: dict, pick: str | None) -> str:
    """A short caption under each candidate (long ones are cut off by the gallery): its number as annotators
    see it, whether it is known to show the negative caption (toy images), and the model's pick."""
    known = {None: "", 1: " · exact", 0: " · flawed"}[row["shows_caption"]]
    return f"{row['slot'] + 1}{known}{' · model pick' if pick == str(row['slot'] + 1) else ''}"


def candidates_table(rows: list[dict], pick: str | None) -> str:
    """Every candidate's known verdict, defect and CLIP scores as a Markdown table (what the labels shorten)."""
    if not rows:
        return "No candidate images yet: generate them first."
    scored = any(row["clip_negative"] is not None for row in rows)
    lines = ["| image | shows the negative caption | defect | generator |" + (
        " CLIP negative | CLIP original | model pick |" if scored else ""),
        "|---|---|---|---|" + ("---|---|---|" if scored else "")]
    for row in rows:
        shows = {None: "unknown", 1: "yes", 0: "no"}[row["shows_caption"]]
        line = f"| {row['slot'] + 1} | {shows} | {row['defect'] or ''} | {row['model'] or row['generator'] or ''} |"
        if scored:
            line += (f" {row['clip_negative']:.3f} | {row['clip_original']:.3f} |"
                     f" {'yes' if pick == str(row['slot'] + 1) else ''} |")
        lines.append(line)
    return "\n".join(lines)


def item_markdown(item: dict, pick: str | None) -> str:
    """The item's captions, what was decided and why, and its known answer when there is one."""
    outcome, truth = db.loads(item["outcome"], {}), db.loads(item["truth"], {})
    lines = [f"**Item {item['id']}**{' (gold)' if item['gold'] else ''}: stage **{item['stage']}**"
             + (f" ({outcome['stage_reason']})" if outcome.get("stage_reason") else ""),
             f"Original caption: {literal(item['caption'])}  \nNegative caption: {literal(item['negative_caption'])}"]
    decided = [f"{task}: **{outcome[task]['decision']}**" + (f" (by {literal(outcome[task]['override'])})"
                                                             if outcome[task].get("override") else "")
               for task in OVERRIDABLE if isinstance(outcome.get(task), dict)]
    if decided:
        lines.append("Decided: " + "; ".join(decided))
    if truth:
        lines.append("Known answer: " + "; ".join(f"{task} {', '.join(v) if isinstance(v, list) else v}"
                                                  for task, v in truth.items()))
    if pick:
        lines.append(f"Model's pick: {pick}")
    return "\n\n".join(lines)


def item_view(store_path: Path | str, folder: Path, name: str, item_id: int) -> tuple:
    """(markdown, original image path or None, gallery [(path, label)], candidates table, raw answers frame)
    of one item."""
    item = queries.item(store_path, name, item_id)
    pick = assist.picks(store_path, name).get(item["id"])
    candidates = campaigns.candidates(store_path, item["id"])
    gallery = [(str(folder / (row["display_path"] or row["path"])), candidate_label(row, pick))
               for row in candidates if row["path"]]
    original = str(folder / item["image"]) if item["image"] else None
    answers = queries.item_answers(store_path, item["id"])
    frame = pd.DataFrame([[row["annotator"], row["stage"], row["choice"],
                           "" if row["correct"] is None else ("yes" if row["correct"] else "no"),
                           "" if row["time_ms"] is None else round(row["time_ms"] / 1000, 1), row["source"],
                           _time(row["created_at"])] for row in answers], columns=ANSWER_COLUMNS)
    return item_markdown(item, pick), original, gallery, candidates_table(candidates, pick), frame


def decision_choices(store_path: Path | str, task: str, item_id: int | str | None) -> list[str]:
    """The decisions `resolution.override` accepts for a task: image numbers or none; original/negative/both.
    `item_id` as the form sends it: blank (None, or "" through the API) before an item is picked."""
    n = len(campaigns.candidates(store_path, int(item_id))) if item_id not in (None, "") else 0
    return list(valid_decisions(task, n or 4))
