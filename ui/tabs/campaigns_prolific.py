"""The Campaigns tab's Prolific panel (admins): the campaign's study on Prolific, created, published, paused,
polled, reviewed and its bonuses paid, through `backend.annotate.prolific_study` and `prolific_bonus` (which
refuse non-admins; every handler checks first too). The API token stays on the server: the panel says only
whether one is set. Each action is a named API endpoint, mirroring `python -m backend campaign prolific`.
"""
from __future__ import annotations

from collections.abc import Callable

import gradio as gr
import pandas as pd

from backend.annotate import prolific_bonus, prolific_study
from backend.core.auth import PermissionDenied
from ui.context import AppContext
from ui.session import admin_actor

PLAN_COLUMNS = ["participant", "decision", "category", "reason"]
BONUS_COLUMNS = ["bonus", "participant", "amount (cents)", "reason", "state", "note"]
ERRORS = (ValueError, PermissionDenied)
DEFAULT_REWARD = 150  # cents: what the draft form offers first


def _whole(value, label: str) -> int | None:
    """A whole number typed in an optional box; None when blank."""
    text = str(value if value is not None else "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise gr.Error(f"{label} must be a whole number, not {text[:20]!r}", print_exception=False)
    return int(text)


def status_markdown(state: dict) -> str:
    """The study as the lab last saw it, in a few lines."""
    lines = ["Prolific API token: **set**" if state["token_set"] else
             "Prolific API token: **not set**: set `PROLIFIC_TOKEN` (on a Space: a secret) and restart the app."]
    study = state["study"]
    if study is None:
        lines.append(f"No study yet. The campaign can fill **{state['places_left']}** place(s): create the draft "
                     "below.")
    else:
        paused = f" ({study['paused_reason']})" if study["paused_reason"] and study["status"] == "PAUSED" else ""
        lines.append(f"Study `{study['study_id']}`: **{study['status']}**{paused}; {study['places']} place(s) at "
                     f"{study['reward_cents']} cents; the campaign can still fill **{state['places_left']}**.")
    subs = ", ".join(f"{status.lower()} {n}" for status, n in sorted(state["submissions"].items()))
    lines.append(f"Submissions (last poll): {subs or 'none'}.")
    if state["bonuses"]:
        lines.append("Bonuses: " + ", ".join(f"{s} {n}" for s, n in sorted(state["bonuses"].items())) + ".")
    return "  \n".join(lines)


def make_handlers(ctx: AppContext, app_url: Callable[[gr.Request | None], str]) -> dict:
    settings = ctx.settings

    def act(session, what: str, run: Callable[..., dict], name, *args, **kwargs) -> dict:
        """`run` for the campaign `name`, by a signed-in admin (checked first: nobody else learns anything)."""
        actor = admin_actor(ctx, session, what)
        if not name:
            raise gr.Error("Pick a campaign first.", print_exception=False)
        try:
            return run(actor, settings, name, *args, **kwargs)
        except ERRORS as error:
            raise gr.Error(str(error), print_exception=False) from error

    def status(name, session=None) -> str:
        """The study, its submissions as last polled, the places left, the bonuses."""
        if not name:
            admin_actor(ctx, session, "viewing a Prolific study")
            return "Pick a campaign."
        return status_markdown(act(session, "viewing a Prolific study", prolific_study.status, name))

    def create(name, reward_cents, minutes, places, session=None, request: gr.Request | None = None):
        """The draft study on Prolific: the study link with its placeholders, the code, the places."""
        admin_actor(ctx, session, "creating a Prolific study")
        if reward_cents in (None, ""):
            raise gr.Error("Type the reward in cents (e.g. 150 for 1.50).", print_exception=False)
        made = act(session, "creating a Prolific study", prolific_study.create_study, name, app_url(request),
                   int(reward_cents), _whole(minutes, "Minutes"), _whole(places, "Places"))
        return (f"Created the draft study `{made['study_id']}`: {made['places']} place(s), {made['reward_cents']} "
                f"cents, about {made['estimated_minutes']} min, code **{made['completion_code']}**, URL "
                f"`{made['url']}`. Publish it when ready."), status(name, session)

    def transition(action: Callable, what: str):
        def run(name, session=None):
            done = act(session, what, action, name)
            return f"Study `{done['study_id']}` is now **{done['status']}**.", status(name, session)
        return run

    def sync(name, session=None):
        """Poll Prolific: store submissions, release the tasks of those who left, pause when the campaign is full."""
        done = act(session, "polling a Prolific study", prolific_study.sync, name)
        released = ", ".join(f"{pid} ({n})" for pid, n in done["released"].items()) or "none"
        paused = " The campaign is full: **the study was paused.**" if done["paused_because_full"] else ""
        return (f"Polled {done['submissions']} submission(s); tasks released from: {released}.{paused}",
                status(name, session))

    def review(name, too_fast_s, apply: bool, session=None):
        done = act(session, "reviewing Prolific submissions", prolific_study.review, name, apply,
                   float(too_fast_s or prolific_study.TOO_FAST_S))
        frame = pd.DataFrame([[d["participant_id"], d["action"].lower(), d["category"], d["reason"]]
                              for d in done["plan"]], columns=PLAN_COLUMNS)
        verb = "Sent" if done["applied"] else "Planned (nothing sent yet)"
        return f"{verb}: {len(done['plan'])} decision(s).", frame, status(name, session)

    def bonus(name, amount, participants, reason, session=None):
        """Pay a bonus once per participant and reason (blank participants: every approved one)."""
        chosen = [p.strip() for p in (participants or "").replace("\n", ",").split(",") if p.strip()] or None
        done = act(session, "paying Prolific bonuses", prolific_bonus.pay_bonus, name, amount or "",
                   chosen, (reason or "").strip() or "bonus")
        said = f"Bonus {done['bonus_id']}: **{done['state']}**." if done["bonus_id"] else "Nobody left to pay."
        if done["skipped"]:
            said += f" Already given this bonus: {', '.join(done['skipped'])}."
        return said, bonus_frame(name, session), status(name, session)

    def reconcile(name, session=None):
        done = act(session, "reconciling Prolific bonuses", prolific_bonus.reconcile, name)
        said = ", ".join(f"bonus {k}: {v}" for k, v in done["reconciled"].items()) or "nothing unfinished"
        return f"Reconciled: {said}.", bonus_frame(name, session), status(name, session)

    def bonus_frame(name, session=None) -> pd.DataFrame:
        admin_actor(ctx, session, "viewing Prolific bonuses")
        rows = prolific_bonus.bonuses(settings.db, name) if name else []
        return pd.DataFrame([[r["bonus_id"], r["participant_id"], r["amount_cents"], r["reason"], r["state"],
                              r["note"] or ""] for r in rows], columns=BONUS_COLUMNS)

    return {"status": status, "create": create, "publish": transition(prolific_study.publish, "publishing a study"),
            "pause": transition(prolific_study.pause, "pausing a study"), "sync": sync,
            "preview": lambda name, fast, session=None: review(name, fast, False, session),
            "apply": lambda name, fast, session=None: review(name, fast, True, session),
            "bonus": bonus, "reconcile": reconcile, "bonuses": bonus_frame}


def build(ctx: AppContext, campaign, state, app_url: Callable[[gr.Request | None], str]) -> None:
    """The panel's layout and wiring, inside the Campaigns tab's "Prolific" tab."""
    h = make_handlers(ctx, app_url)
    shown = gr.Markdown("Pick a campaign.", elem_id="campaign-prolific-status")
    result = gr.Markdown(elem_id="campaign-prolific-result")
    with gr.Row(equal_height=True):
        reward = gr.Number(DEFAULT_REWARD, precision=0, minimum=1, label="Reward (cents, per participant)",
                           elem_id="campaign-prolific-reward")
        minutes = gr.Textbox(label="Minutes", placeholder=f"blank: a full session at {prolific_study.SECONDS_PER_TASK} "
                                                          "s a task")
        places = gr.Textbox(label="Places", placeholder="blank: all the campaign can still fill")
        create = gr.Button("Create study draft", variant="primary", elem_id="campaign-prolific-create", scale=0,
                           min_width=200)
    with gr.Row():
        publish = gr.Button("Publish / start", elem_id="campaign-prolific-publish")
        pause = gr.Button("Pause", elem_id="campaign-prolific-pause")
        sync = gr.Button("Poll submissions", elem_id="campaign-prolific-sync")
    with gr.Row(equal_height=True):
        too_fast = gr.Number(prolific_study.TOO_FAST_S, minimum=0, label="Too fast: median seconds per task under")
        preview = gr.Button("Preview review", elem_id="campaign-prolific-preview", scale=0, min_width=200)
        apply = gr.Button("Approve / reject as planned", variant="stop", elem_id="campaign-prolific-apply", scale=0,
                          min_width=240)
    plan = gr.Dataframe(pd.DataFrame(columns=PLAN_COLUMNS), interactive=False, max_height=240,
                        label="Review (gold accuracy under the campaign's threshold, too fast, or no complete session: "
                              "reject)", elem_id="campaign-prolific-plan")
    with gr.Row(equal_height=True):
        amount = gr.Textbox(label="Bonus (study currency, e.g. 0.50)", elem_id="campaign-prolific-amount")
        who = gr.Textbox(label="Participants (blank: every approved one)")
        reason = gr.Textbox("bonus", label="Reason (one bonus per participant and reason)")
        pay = gr.Button("Pay bonus", variant="primary", elem_id="campaign-prolific-pay", scale=0, min_width=140)
        reconcile = gr.Button("Reconcile", scale=0, min_width=140)
    paid = gr.Dataframe(pd.DataFrame(columns=BONUS_COLUMNS), interactive=False, max_height=200, label="Bonuses",
                        elem_id="campaign-prolific-bonuses")

    campaign.change(h["status"], [campaign, state], shown, api_name="prolific_status")
    create.click(h["create"], [campaign, reward, minutes, places, state], [result, shown], api_name="prolific_create")
    publish.click(h["publish"], [campaign, state], [result, shown], api_name="prolific_publish")
    pause.click(h["pause"], [campaign, state], [result, shown], api_name="prolific_pause")
    sync.click(h["sync"], [campaign, state], [result, shown], api_name="prolific_sync")
    preview.click(h["preview"], [campaign, too_fast, state], [result, plan, shown], api_name="prolific_review")
    apply.click(h["apply"], [campaign, too_fast, state], [result, plan, shown], api_name="prolific_review_apply")
    pay.click(h["bonus"], [campaign, amount, who, reason, state], [result, paid, shown], api_name="prolific_bonus")
    reconcile.click(h["reconcile"], [campaign, state], [result, paid, shown], api_name="prolific_reconcile")
    campaign.change(h["bonuses"], [campaign, state], paid, api_visibility="private")
