"""The Campaigns tab's Quality view (admins): who answers well, who is set aside, and what the admin must decide.

Dawid-Skene competence per annotator and the adjudication queue come from `backend.annotate.competence`;
exclusion (a plan first, then applied on confirmation), restore and the audit trail from
`backend.annotate.exclusion`; a decision on a queued item is `resolution.override`, the same as the Items view's
and `campaign adjudicate --item`. Every handler checks the admin first, before reading any input, so an anonymous
caller learns nothing. Each action is a named API endpoint, mirroring `python -m backend campaign
competence|exclude|restore|adjudicate`.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import gradio as gr
import pandas as pd

from backend.annotate import competence, exclusion, queries, resolution
from backend.core.auth import PermissionDenied
from backend.core.markup import literal
from ui.context import AppContext
from ui.session import admin_actor, shown
from ui.tabs.campaigns_items import decision_choices

ANNOTATOR_COLUMNS = ["annotator", "answers", "competence", "step 3", "step 4", "flags", "excluded"]
PLAN_COLUMNS = ["annotator", "why", "answers set aside"]
HISTORY_COLUMNS = ["#", "annotator", "why", "answers", "by", "when", "restored by", "restored"]
QUEUE_COLUMNS = ["item", "task", "caption", "negative caption", "rule says", "estimate", "top posterior",
                 "posterior", "answers (competence)"]
ERRORS = (ValueError, PermissionDenied)


def _number(value: float | None) -> str:
    """A probability as people read it: two decimals; a dash where there is none."""
    return "–" if value is None else f"{value:.2f}"


def _when(value: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value)) if value else ""


def annotator_frame(state: dict) -> pd.DataFrame:
    """The competence table: pooled and per step, the flags (gold, speed, competence), whether excluded."""
    return pd.DataFrame([[row["annotator"], row["answers"], _number(row["competence"]),
                          _number(row["by_step"].get("select")), _number(row["by_step"].get("ambiguity")),
                          ", ".join(row["flags"]), "yes" if row["excluded"] else ""]
                         for row in state["annotators"]], columns=ANNOTATOR_COLUMNS)


def queue_frame(state: dict) -> pd.DataFrame:
    """The adjudication queue: each task with what the rule and the estimate say, and every answer."""
    rows = []
    for entry in state["queue"]:
        answers = "; ".join(f"{a['annotator']}: {a['choice']} ({_number(a['competence'])}"
                            f"{', excluded' if a['excluded'] else ''})" for a in entry["answers"])
        posterior = ", ".join(f"{label} {p:.2f}" for label, p in entry["posterior"].items())
        rows.append([entry["item_id"], entry["task"], entry["caption"], entry["negative_caption"],
                     "tie" if entry["rule_tied"] else entry["resolution"], entry["estimate"] or "tie",
                     _number(entry["max_posterior"]), posterior, answers])
    return pd.DataFrame(rows, columns=QUEUE_COLUMNS)


def history_frame(entries: list[dict]) -> pd.DataFrame:
    """Every exclusion, restored or not: the audit trail."""
    return pd.DataFrame([[e["id"], e["annotator"], ", ".join(e["reasons"]), e["answers"], e["actor"],
                          _when(e["created_at"]), e["restored_by"] or "", _when(e["restored_at"])]
                         for e in entries], columns=HISTORY_COLUMNS)


def summary_markdown(state: dict) -> str:
    flagged = sum(1 for row in state["annotators"] if row["flags"] and not row["excluded"])
    return (f"Flagged for competence under **{_number(state['threshold'])}** after {state['min_answers']} answers "
            f"(Dawid-Skene over every answer; gold items and admin decisions anchor it). **{flagged}** flagged "
            f"annotator(s) not excluded; **{len(state['queue'])}** task(s) to decide (top posterior under "
            f"{_number(state['below'])}, or tied).")


def make_handlers(ctx: AppContext) -> dict:
    store_path = ctx.settings.db

    def run(action: Callable, *args):
        try:
            return action(*args)
        except ERRORS as error:
            raise shown(error) from error

    def named(name) -> str:
        if not name:
            raise gr.Error("Pick a campaign first.", print_exception=False)
        return name

    def view(name, session=None) -> tuple:
        """The whole view: summary, competence table, history, queue, and who can be restored."""
        admin_actor(ctx, session, "viewing annotator quality")
        if not name:
            empty = pd.DataFrame(columns=ANNOTATOR_COLUMNS)
            return ("Pick a campaign.", empty, history_frame([]), pd.DataFrame(columns=QUEUE_COLUMNS),
                    gr.Dropdown(choices=[], value=None))
        state = run(competence.competence, store_path, name)
        excluded = [row["annotator"] for row in state["annotators"] if row["excluded"]]
        return (summary_markdown(state), annotator_frame(state), history_frame(exclusion.history(store_path, name)),
                queue_frame(state), gr.Dropdown(choices=excluded, value=excluded[0] if excluded else None))

    def plan(name, session=None) -> tuple:
        """Who "Exclude flagged" would set aside and why; nothing changes until the admin confirms."""
        actor = admin_actor(ctx, session, "planning exclusions")
        planned = [p for p in run(exclusion.plan, actor, store_path, named(name)) if not p["already_excluded"]]
        frame = pd.DataFrame([[p["annotator"], ", ".join(p["reasons"]), p["answers"]] for p in planned],
                             columns=PLAN_COLUMNS)
        who = [p["annotator"] for p in planned]
        said = (f"Excluding sets aside **{sum(p['answers'] for p in planned)}** answer(s) of {len(who)} annotator(s) "
                "and reopens the items they decided. Confirm below." if who else "Nobody flagged is left to exclude.")
        return said, frame, who, gr.Button(visible=bool(who))

    def exclude(name, planned, session=None) -> tuple:
        """Apply the plan the admin saw (those annotators only, even if more were flagged since)."""
        actor = admin_actor(ctx, session, "excluding annotators")
        if not planned:
            raise gr.Error("Plan first: press \"Exclude flagged\" and read who it sets aside.", print_exception=False)
        done = run(exclusion.exclude, actor, store_path, named(name), list(planned))
        said = "  \n".join(f"Excluded **{literal(d['annotator'])}**: {d['answers']} answer(s) set aside; "
                           f"{len(d['reopened'])} item(s) reopened{_ids(d['reopened'])}." for d in done)
        return (said or "Already excluded: nothing changed.", [], gr.Button(visible=False),
                pd.DataFrame(columns=PLAN_COLUMNS), *view(name, session))

    def restore(name, annotator, session=None) -> tuple:
        actor = admin_actor(ctx, session, "restoring an annotator's answers")
        if not annotator:
            raise gr.Error("Pick an excluded annotator.", print_exception=False)
        done = run(exclusion.restore, actor, store_path, named(name), str(annotator))
        return (f"Restored **{literal(done['annotator'])}**: {done['answers']} answer(s) back in resolution "
                f"({done['kept_aside']} kept aside: given on a decision that changed since).", *view(name, session))

    def decisions(task, item_id, session=None):
        admin_actor(ctx, session, "viewing campaigns")
        choices = run(decision_choices, store_path, task or "select", item_id)
        return gr.Dropdown(choices=choices, value=choices[0])

    def decide(name, item_id, task, decision, session=None) -> tuple:
        """The admin's decision on a queued task (an override): it anchors the estimate and leaves the queue."""
        actor = admin_actor(ctx, session, "deciding an item")
        if item_id in (None, ""):
            raise gr.Error("Click a row of the queue (or type an item id).", print_exception=False)

        def apply() -> str:
            queries.item(store_path, named(name), int(item_id))  # the id must belong to this campaign
            return resolution.override(store_path, int(item_id), task, str(decision or ""), actor.name)
        stage = run(apply)
        return (f"Item {int(item_id)}: {task} decided **{literal(decision)}** by {literal(actor.name)}; it is now "
                f"**{stage}**.", *view(name, session))

    return {"view": view, "plan": plan, "exclude": exclude, "restore": restore, "decisions": decisions,
            "decide": decide}


def _ids(item_ids: list[int]) -> str:
    return f" ({', '.join(map(str, item_ids[:20]))}{', …' if len(item_ids) > 20 else ''})" if item_ids else ""


def build(ctx: AppContext, campaign, state) -> None:
    """The view's layout and wiring, inside the Campaigns tab's "Quality" tab."""
    h = make_handlers(ctx)
    with gr.Row():
        summary = gr.Markdown("Pick a campaign.", elem_id="campaign-quality-summary")
        refresh = gr.Button("↻ Refresh", size="sm", scale=0, elem_id="campaign-quality-refresh")
    people = gr.Dataframe(pd.DataFrame(columns=ANNOTATOR_COLUMNS), interactive=False, max_height=300,
                          label="Annotators (competence: Dawid-Skene, 1 perfect, 0.5 chance on step 3)",
                          column_widths=["22%", "10%", "12%", "10%", "10%", "24%", "12%"],
                          elem_id="campaign-quality-annotators")
    with gr.Row(equal_height=True):
        plan = gr.Button("Exclude flagged…", variant="secondary", elem_id="campaign-quality-plan", scale=0,
                         min_width=200)
        confirm = gr.Button("Confirm: exclude these annotators", variant="stop", visible=False, scale=0,
                            min_width=280, elem_id="campaign-quality-confirm")
        # Custom values allowed: the choices follow the campaign, and `exclusion.restore` says who is excluded.
        excluded = gr.Dropdown([], value=None, label="Excluded annotator", scale=1, allow_custom_value=True,
                               elem_id="campaign-quality-who")
        restore = gr.Button("Restore", scale=0, min_width=140, elem_id="campaign-quality-restore")
    result = gr.Markdown(elem_id="campaign-quality-result")
    planned = gr.State([])
    plan_table = gr.Dataframe(pd.DataFrame(columns=PLAN_COLUMNS), interactive=False, max_height=200,
                              label="Exclusion plan", elem_id="campaign-quality-plan-table")
    queue = gr.Dataframe(pd.DataFrame(columns=QUEUE_COLUMNS), interactive=False, max_height=360, wrap=True,
                         label="Adjudication queue: click a row, pick the decision, Decide",
                         column_widths=["6%", "8%", "17%", "17%", "8%", "8%", "8%", "12%", "16%"],
                         elem_id="campaign-quality-queue")
    with gr.Row(equal_height=True):
        item_id = gr.Number(None, precision=0, label="Queued item", elem_id="campaign-quality-item")
        task = gr.Dropdown(["select", "ambiguity"], value="select", label="Task", elem_id="campaign-quality-task")
        decision = gr.Dropdown(["1", "2", "3", "4", "none"], value="1", label="Decision", allow_custom_value=True,
                               elem_id="campaign-quality-decision")
        decide = gr.Button("Decide", variant="primary", scale=0, min_width=140, elem_id="campaign-quality-decide")
    history = gr.Dataframe(pd.DataFrame(columns=HISTORY_COLUMNS), interactive=False, max_height=200,
                           label="Exclusions (the audit trail)", elem_id="campaign-quality-history")

    shown_view = [summary, people, history, queue, excluded]
    campaign.change(h["view"], [campaign, state], shown_view, api_name="quality_view")
    refresh.click(h["view"], [campaign, state], shown_view, api_visibility="private")
    plan.click(h["plan"], [campaign, state], [result, plan_table, planned, confirm], api_name="quality_plan")
    confirm.click(h["exclude"], [campaign, planned, state], [result, planned, confirm, plan_table, *shown_view],
                  api_name="quality_exclude")
    restore.click(h["restore"], [campaign, excluded, state], [result, *shown_view], api_name="quality_restore")

    def pick_row(evt: gr.SelectData):
        """A click on a queued task fills its item and task."""
        row = evt.row_value or []
        return (row[0], row[1]) if row else (gr.skip(), gr.skip())

    queue.select(pick_row, None, [item_id, task], api_visibility="private", queue=False).then(
        h["decisions"], [task, item_id, state], decision, api_visibility="private")
    task.input(h["decisions"], [task, item_id, state], decision, api_visibility="private")
    decide.click(h["decide"], [campaign, item_id, task, decision, state], [result, *shown_view],
                 api_name="quality_decide")
