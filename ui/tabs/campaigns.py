"""Campaigns tab (admins): create a BiVLC-style annotation campaign (or a validation campaign of generated negatives,
`backend.annotate.validation`), generate its images, follow it, fix items by hand, export it.

Views only: creating and generating go through `backend.annotate.service` (which refuses non-admins; the
Export view and the Prolific panel are their own modules beside this one), overrides through
`resolution.override`, numbers come from `report`/`assist` (`ui/tabs/campaigns_items.py`
reads them). Every handler re-checks that the session's actor is an admin:
hiding the tab is a courtesy. Each action is a named API endpoint, mirroring
`python -m backend campaign`.
"""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd
from gradio import route_utils

from backend import jobs, plugins
from backend.annotate import campaigns, mirror, queries, resolution, service
from backend.annotate.service import BUILT_IN_SOURCES
from backend.core.auth import PermissionDenied, require_admin
from backend.core.gpu import local_job_note
from backend.generate.job import MAX_BATCH_SIZE
from ui import targets
from ui.context import AppContext
from ui.session import Session, actor_of
from ui.tabs import campaigns_export, campaigns_item_panel, campaigns_prolific, campaigns_quality
from ui.tabs import campaigns_items as view

REFRESH_S = 2.0
TASK_LABELS = {"select": "Step 3: select", "ambiguity": "Step 4: ambiguity", "i2t": "Baseline: I2T",
               "t2i": "Baseline: T2I", "validate": "Validation: is the negative false?"}
KIND_CHOICES = [("BiVLC: generated images, steps 3 and 4", "bivlc"), ("validate generated negatives", "validate")]
USER_ERRORS = (ValueError, PermissionDenied, OSError, jobs.JobError)  # what a form can cause: shown, not a traceback
DEFAULTS = campaigns.CampaignConfig()  # the form starts from the backend's defaults


def _number(value, kind, label: str):
    if value is None or value == "":
        raise ValueError(f"{label} is empty")
    return kind(value)


def _app_url(ctx: AppContext, request: gr.Request | None) -> str:
    """The address this visitor reached the app at (proxies' X-Forwarded-* headers honoured, as Gradio's own
    file links are), else the configured one."""
    raw = getattr(request, "request", None)
    if raw is not None:
        try:
            return route_utils.get_root_url(raw, route_utils.get_api_call_path(raw), None)
        except (ValueError, AttributeError):
            pass
    return f"http://{ctx.settings.server_name}:{ctx.settings.server_port}"


def make_handlers(ctx: AppContext) -> dict:
    """The tab's callbacks over one store; each takes the visitor's session last and checks it is an admin."""
    settings, store, store_path = ctx.settings, ctx.store, ctx.store.path

    def admin(session, action: str):
        try:
            actor = actor_of(ctx, session)
            require_admin(actor, action)
        except PermissionDenied as error:
            raise gr.Error(str(error), print_exception=False) from error
        return actor

    def named(name) -> str:
        if not name:
            raise gr.Error("Pick a campaign first (or create one).", print_exception=False)
        return name

    def guarded(action, *args, **kwargs):
        try:
            return action(*args, **kwargs)
        except USER_ERRORS as error:
            raise gr.Error(str(error), print_exception=False) from error

    def create(name, source, n_items, seed, path, images_dir, probe_image, overlap, rule, gold_rate, gold_from,
               tasks_per_session, min_seconds, human_baseline, preset, kind="bivlc", session=None):
        """A new campaign from the form (`kind` last: API callers from before validation campaigns get BiVLC's); a
        bad value is a message and the form keeps what was typed."""
        actor = admin(session, "creating a campaign")
        name = (name or "").strip()

        def run():
            config = {"kind": kind or "bivlc", "overlap": _number(overlap, int, "overlap"), "resolution": rule,
                      "gold_rate": _number(gold_rate, float, "gold rate"), "gold_from": (gold_from or "").strip(),
                      "tasks_per_session": _number(tasks_per_session, int, "tasks per session"),
                      "min_seconds_per_task": _number(min_seconds, float, "minimum seconds per task"),
                      "human_baseline": bool(human_baseline), **({"generator": preset} if preset and
                                                                   preset != "custom" else {})}
            return service.create_campaign(actor, name, source, settings, config=config,
                                           n_items=_number(n_items, int, "number of toy items"),
                                           seed=_number(seed, int, "seed"), path=(path or "").strip(),
                                           images_dir=(images_dir or "").strip(),
                                           probe_image=(probe_image or "").strip())
        summary = guarded(run)
        message = (f"Created **{summary['name']}**: {summary['items']} items and {summary['gold_items']} gold "
                   "items. " + ("Its tasks are open now: share its study link." if kind == "validate" else
                                "Next: generate its images."))
        return message, gr.Dropdown(choices=view.campaign_names(store_path), value=summary["name"])

    def generate(name, preset, model, target="local", batch_size=1, session=None):
        """Start the generate job for the campaign's missing images with the chosen preset, place and batch size."""
        actor = admin(session, "generating campaign images")
        extra = {"model": (model or "").strip()} if preset == "custom" else {}
        if view.draws_with_diffusers(preset):  # a plug-in's generator draws one image at a time
            extra["batch_size"] = guarded(_number, batch_size, int, "images per pipeline call")
        job_id = guarded(service.launch_generation, actor, named(name), settings, store, preset=preset or "",
                         target=target or "local", options=targets.options(target or "local"), **extra)
        return f"Started generate job #{job_id}.", view.generate_markdown(store, name)

    def status(name, session=None, request: gr.Request | None = None):
        """The campaign's report, its settings, its study link and its generate job's progress."""
        admin(session, "viewing campaigns")
        if not name:
            return "Pick a campaign, or create one above.", "", "", ""
        return guarded(lambda: (view.status_markdown(store_path, name), view.settings_markdown(store_path, name),
                                view.study_link_markdown(_app_url(ctx, request), store_path, name),
                                view.generate_markdown(store, name)))

    def items(name, session=None):
        """Every item with its stage, answers and the model's pick."""
        admin(session, "viewing campaigns")
        if not name:
            return pd.DataFrame(columns=view.ITEM_COLUMNS)
        return guarded(view.items_frame, store_path, name)

    def item(name, item_id, session=None):
        """One item: its captions and fate, original image, candidates (labelled), every raw answer."""
        admin(session, "viewing campaigns")
        if item_id in (None, ""):
            raise gr.Error("Type an item id or click a row of the items table.", print_exception=False)
        folder = guarded(campaigns.campaign_dir, settings.data_dir, named(name))
        return guarded(view.item_view, store_path, folder, name, int(item_id))

    def decisions(task, item_id, session=None):
        admin(session, "viewing campaigns")
        choices = guarded(view.decision_choices, store_path, task, item_id)
        return gr.Dropdown(choices=choices, value=choices[0])

    def override(name, item_id, task, decision, session=None):
        """Decide an item's select or ambiguity task by hand; the raw answers stay as they were."""
        actor = admin(session, "overriding an item")
        if item_id in (None, ""):
            raise gr.Error("Type an item id or click a row of the items table.", print_exception=False)

        def run():
            queries.item(store_path, named(name), int(item_id))  # the id must belong to this campaign
            return resolution.override(store_path, int(item_id), task, str(decision or ""), actor.name)
        stage = guarded(run)
        return f"Item {int(item_id)}: {task} set to **{decision}** by {actor.name}; it is now **{stage}**."

    def load_config(name, loaded, session=None):
        """The campaign's instructions into the editors, and its generator into the preset dropdown; returns the
        name loaded last too. Only for another campaign than that one: the timer's redraw of the list may change
        the selection away and back, and an edit in progress must survive it."""
        if not actor_of(ctx, session).is_admin or not name or name == loaded:
            return [gr.skip()] * (len(campaigns.ALL_TASKS) + 3)
        config = guarded(campaigns.get, store_path, name)["config"]
        preset = config.generator if config.generator in view.preset_names() else gr.skip()
        return [*(config.instructions[task] for task in campaigns.ALL_TASKS), config.intro, preset, name]

    def save_instructions(name, select, ambiguity, i2t, t2i, validate, session=None):
        """Store the edited instructions (annotators see them from their next task on)."""
        admin(session, "editing campaign instructions")
        texts = dict(zip(campaigns.ALL_TASKS, (select, ambiguity, i2t, t2i, validate)))
        empty = [task for task, text in texts.items() if not (text or "").strip()]
        if empty:
            raise gr.Error(f"Instructions for {', '.join(empty)} are empty.", print_exception=False)
        guarded(campaigns.update_config, store_path, named(name), instructions=texts)
        return f"Saved the instructions of **{name}**."

    def save_intro(name, intro, session=None):
        """Store the study link's first page (participants who open the link from now on read it)."""
        admin(session, "editing a campaign's intro")
        guarded(campaigns.update_config, store_path, named(name), intro=intro or "")
        return f"Saved the intro of **{name}**: the study link shows it before the first task."

    def list_campaigns(session=None):
        admin(session, "viewing campaigns")
        return gr.Dropdown(choices=view.campaign_names(store_path))

    def tick(name, seen, session=None):
        """For the timer: redraw the report and the generate line only when something changed, and the
        campaign list only when campaigns came or went (never while nothing did: no flicker, no lost edits)."""
        skip = (seen, gr.skip(), gr.skip(), gr.skip())
        if not actor_of(ctx, session).is_admin:
            return skip
        now = view.fingerprint(store_path, store, name)
        if now == seen:
            return skip
        if any(job["status"] in jobs.ACTIVE for job in store.list_jobs(kind="generate", limit=20)):
            jobs.reconcile(store, settings)  # a generate job whose process died is settled, not "running"
        listed = gr.Dropdown(choices=now[0]) if not seen or seen[0] != now[0] else gr.skip()
        try:
            shown = (view.status_markdown(store_path, name), view.generate_markdown(store, name)) if name else \
                (gr.skip(), gr.skip())
        except ValueError:  # the campaign is gone (another admin's database restore): keep what is shown
            shown = (gr.skip(), gr.skip())
        return now, listed, *shown

    return {"create": create, "generate": generate, "status": status, "items": items, "item": item,
            "decisions": decisions, "override": override, "load_config": load_config,
            "save_instructions": save_instructions, "save_intro": save_intro,
            "list_campaigns": list_campaigns, "tick": tick}


def source_choices() -> list[tuple[str, str]]:
    """(label, source) of every campaign source: the plug-ins' (they make their own items), a file, a probe, a
    training manifest."""
    own = [(source.label, name) for name, source in plugins.hooks().campaign_sources.items()]
    return [*own, ("file", "file"), ("probe result", "probe"), ("training manifest", "manifest")]


def _form() -> list:
    """The new-campaign form (in an accordion); returns the kind, then its inputs in `create`'s order, preset
    excluded."""
    kind = gr.Radio(KIND_CHOICES, value="bivlc", label="Kind", elem_id="campaign-kind",
                    info="validate: each task is an image, its caption and one generated negative; no images to make")
    with gr.Row():
        name = gr.Textbox(label="Name", placeholder="e.g. bivlc-pilot-1", elem_id="campaign-name", scale=2,
                          info="letters, digits, '.', '_' or '-'")
        offered = source_choices()
        source = gr.Radio(offered, value=offered[0][1], label="Items from", scale=2)
        n_items = gr.Number(20, precision=0, minimum=1, label="Items", elem_id="campaign-items", scale=1,
                            visible=offered[0][1] in plugins.hooks().campaign_sources)
        seed = gr.Number(0, precision=0, minimum=0, label="Seed", info="draws generated and gold items", scale=1)
    with gr.Row(visible=False) as file_row:
        path = gr.Textbox(label="File", elem_id="campaign-file",
                          info="SugarCrepe .json or BiVLC .csv/.jsonl (file); the probe's JSON download (probe "
                               "result); a training manifest .csv/.jsonl; a path in the workspace")
        images_dir = gr.Textbox(label="Images folder", elem_id="campaign-images",
                                info="the file's image names are relative to it, e.g. COCO val2017")
        probe_image = gr.Textbox(label="Probed image", info="the image the probe was run on", visible=False)
    source.change(lambda s: (gr.Number(visible=s in plugins.hooks().campaign_sources),
                             gr.Row(visible=s in BUILT_IN_SOURCES),
                             gr.Textbox(visible=s == "file"), gr.Textbox(visible=s == "probe")),
                  source, [n_items, file_row, images_dir, probe_image], api_visibility="private", queue=False)
    with gr.Row():
        overlap = gr.Number(DEFAULTS.overlap, precision=0, minimum=1, maximum=10,
                            label="Answers per item (overlap)")
        rule = gr.Dropdown(list(campaigns.RESOLUTION_RULES), value=DEFAULTS.resolution,
                           label="Resolution rule", info="third: a tie calls one more annotator")
        gold_rate = gr.Number(DEFAULTS.gold_rate, minimum=0, maximum=0.99, step=0.05,
                              label="Gold rate", info="share of tasks with known answers")
        gold_from = gr.Textbox(label="Gold from", elem_id="campaign-gold-from",
                               info="an earlier campaign: its items an admin decided (empty: built-in shapes)")
        per_session = gr.Number(DEFAULTS.tasks_per_session, precision=0, minimum=1,
                                label="Tasks per session")
        min_seconds = gr.Number(campaigns.RECOMMENDED_MIN_SECONDS, minimum=0, maximum=600, step=0.5,
                                label="Minimum seconds per task", elem_id="campaign-min-seconds",
                                info="faster answers are refused and counted (0: no minimum)")
        baseline = gr.Checkbox(False, label="Human baseline (BiVLC's I2T and T2I questions)")
    return [kind, name, source, n_items, seed, path, images_dir, probe_image, overlap, rule, gold_rate, gold_from,
            per_session, min_seconds, baseline]


def _generator() -> tuple:
    """The preset picker (and the model box of the custom preset, and the batch size of diffusion presets): used by
    'Generate images'; the preset is also stored with a new campaign."""
    names = view.preset_names()
    preset = gr.Dropdown(names, value=names[0], label="Image generator", elem_id="campaign-preset", scale=2)
    model = gr.Textbox(label="Model (custom)", placeholder="diffusers model id or folder", visible=False, scale=2)
    batch = gr.Number(1, precision=0, minimum=1, maximum=MAX_BATCH_SIZE, label="Images per pipeline call",
                      info="1: each image alone; more: several per call, each still regenerable exactly",
                      elem_id="campaign-batch-size", visible=view.draws_with_diffusers(names[0]), scale=1)
    generate = gr.Button("Generate images", variant="primary", scale=1, elem_id="campaign-generate")
    return preset, model, batch, generate


def _preview(intro: str) -> str:
    """The intro's Markdown, rendered beside its editor as the study link will show it."""
    return intro


def build(ctx: AppContext, visitor: Session) -> LiveProgress:
    """Lay out the Campaigns tab inside the current Blocks context; returns its progress refresh, for the app to
    switch with its tabs (`LiveProgress.follow`)."""
    h = make_handlers(ctx)
    state = visitor.state
    for note, elem_id in ((mirror.warning(ctx.settings), "campaign-backup-warning"),
                          (local_job_note(), "campaign-zero-gpu-note")):
        if note:
            gr.Markdown(note, elem_id=elem_id)
    with gr.Accordion("New campaign", open=True) as new_box:
        kind, *form = _form()
        with gr.Row():
            create = gr.Button("Create", variant="primary", elem_id="campaign-create", scale=0, min_width=160)
            gr.Markdown("The image generator chosen below is stored with the campaign.")
    with gr.Row(equal_height=True):
        # A custom value is allowed so that a list read by the timer just before a campaign was created (and
        # sent just after) cannot drop the new selection; every handler checks that the named campaign exists.
        campaign = gr.Dropdown([], value=None, label="Campaign", scale=3, elem_id="campaign-pick",
                               allow_custom_value=True)
        refresh = gr.Button("↻", scale=0, min_width=48)
        preset, model, batch, generate = _generator()
    where = targets.picker(ctx.settings, "campaign-target")
    licence = gr.Markdown(view.licence_markdown(preset.value), elem_id="campaign-licence")
    notice = gr.Markdown(elem_id="campaign-notice")
    generating = gr.Markdown(elem_id="campaign-generate-status")
    with gr.Tabs():
        with gr.Tab("Progress") as progress_tab:
            study = gr.Markdown(elem_id="campaign-study-link")
            settings_line = gr.Markdown(elem_id="campaign-settings")
            status = gr.Markdown("Pick a campaign, or create one above.", elem_id="campaign-status")
        with gr.Tab("Items") as items_tab:
            items, shown = campaigns_item_panel.build()
        with gr.Tab("Instructions") as instructions_tab:
            texts = [gr.Textbox(label=TASK_LABELS[task], lines=6, max_lines=14,
                                elem_id=f"campaign-instructions-{task}") for task in campaigns.ALL_TASKS]
            save = gr.Button("Save instructions")
            saved = gr.Markdown()
            with gr.Row(equal_height=False):
                intro = gr.Textbox(label="Intro and consent (Markdown): the study link's first page", lines=10,
                                   max_lines=24, elem_id="campaign-intro")
                preview = gr.Markdown(elem_id="campaign-intro-preview", container=True)
            save_intro = gr.Button("Save intro")
            saved_intro = gr.Markdown()
        with gr.Tab("Export") as export_tab:
            campaigns_export.build(ctx, campaign, state)
        with gr.Tab("Prolific") as prolific_tab:
            campaigns_prolific.build(ctx, campaign, state, lambda request: _app_url(ctx, request))
        with gr.Tab("Quality") as quality_tab:
            campaigns_quality.build(ctx, campaign, state)
    seen = gr.State(None)

    preset.change(lambda p, m: (view.licence_markdown(p, m), gr.Textbox(visible=p == "custom"),
                                gr.Number(visible=view.draws_with_diffusers(p))),
                  [preset, model], [licence, model, batch], api_visibility="private", queue=False)
    model.change(view.licence_markdown, [preset, model], licence, api_visibility="private", queue=False)
    create.click(h["create"], [*form, preset, kind, state], [notice, campaign], api_name="create_campaign").success(
        lambda: gr.Accordion(open=False), None, new_box, api_visibility="private", queue=False)
    refresh.click(h["list_campaigns"], state, campaign, api_name="list_campaigns")
    loaded = gr.State("")  # the campaign whose instructions the editors hold
    # The status after the campaign's generator is in the form: a generator picked once the status showed is not
    # reset by a config load that answered later (it did, under load, in a test that picked "custom" at once).
    campaign.change(h["load_config"], [campaign, loaded, state], [*texts, intro, preset, loaded],
                    api_visibility="private").then(h["status"], [campaign, state],
                                                   [status, settings_line, study, generating],
                                                   api_name="campaign_status")
    campaign.change(h["items"], [campaign, state], items["table"], api_name="campaign_items")
    intro.change(_preview, intro, preview, api_visibility="private", queue=False)
    save_intro.click(h["save_intro"], [campaign, intro, state], saved_intro, api_name="save_intro")
    generate.click(h["generate"], [campaign, preset, model, where, batch, state], [notice, generating],
                   api_name="launch_generation")
    save.click(h["save_instructions"], [campaign, *texts, state], saved, api_name="save_instructions")
    items["refresh"].click(h["items"], [campaign, state], items["table"], api_visibility="private")
    items_tab.select(h["items"], [campaign, state], items["table"], api_visibility="private")
    campaigns_item_panel.wire(h, campaign, state, items, shown, status)
    live = LiveProgress(gr.Timer(REFRESH_S, active=False), gr.State(True),
                        {"fn": h["tick"], "inputs": [campaign, seen, state], "outputs": [seen, campaign, status,
                                                                                         generating],
                         "api_visibility": "private", "show_progress": "hidden"})
    live.timer.tick(**live.refresh)
    progress_tab.select(_progress_shown, None, [live.on_progress, live.timer], api_visibility="private",
                        queue=False).then(**live.refresh)
    others = (items_tab, instructions_tab, export_tab, prolific_tab, quality_tab)
    gr.on([tab.select for tab in others], _progress_hidden, None, [live.on_progress, live.timer],
          api_visibility="private", queue=False)
    return live


def _progress_shown() -> tuple:
    """The Progress view is on screen: run its timer."""
    return True, gr.Timer(active=True)


def _progress_hidden() -> tuple:
    """Another view of the tab is on screen: stop the timer."""
    return False, gr.Timer(active=False)


@dataclass
class LiveProgress:
    """The Progress view's refresh: a timer that runs only while the Campaigns tab and its Progress view are both
    on screen (the sub-tabs switch it here, the app's tabs through `follow`), and the tick's event arguments. A tick
    is idempotent: it redraws only what changed since the state it last drew (`view.fingerprint`, which names the
    campaign), so a tick that races a selection, a second tick in flight or a manual redraw show the same."""

    timer: gr.Timer
    on_progress: gr.State  # whether the Progress view is the sub-tab shown
    refresh: dict

    def follow(self, app_tabs: gr.Tabs, label: str) -> None:
        """Run the timer while the app's tab `label` is selected (and Progress within it), and redraw on arrival."""
        def switched(on_progress: bool, evt: gr.SelectData):
            return gr.Timer(active=bool(on_progress) and evt.value == label)

        app_tabs.select(switched, self.on_progress, self.timer, api_visibility="private", queue=False).then(
            **self.refresh)
