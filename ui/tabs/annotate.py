"""The annotator's page: one task at a time, four images large, answered with the keyboard.

Everything is decided by the server (`backend.annotate.assign`): which task,
whether an answer counts, when the session is over. The page only shows the
task and sends answers. Each answer carries the token of the task it answers
(a hidden field), so a double click or a retried request can never answer the
next task by mistake; the server records it once. Who the annotator is lives in
a server-side `gr.State`: nobody can read or answer someone else's tasks.

Each kind of task has a panel of its own: step 3's four images and buttons,
a pair of images (step 4 and T2I), one image and two descriptions (I2T), one
image and three answers (a validation campaign's question).
Why: Gradio rebuilds a component and its config for every property it is sent
(a label, a visibility), and an annotator's tasks alternate between step 3
and step 4 more often than not, so relabelling one set of images and buttons
cost more server time than the answer itself. Going from one kind to the next
now only switches panels, and an answer sends values. Handlers return what the
browser gets (``postprocess=False``): text as is, images as file references;
Gradio's per-output postprocessing ran each of ~20 outputs on a worker thread.
`bench/annotate_latency.py` measures the result.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr

from backend.annotate import assign, campaigns, db, prolific, resume, undo, verify
from ui import gate
from ui.context import AppContext
from ui.tabs.annotate_text import KEYS, PAGE_STYLE, VALIDATE_BUTTONS, WAIT_POLL_S, caption, ending, too_many

N_IMAGES = 4
PANELS = ("select", "pair", "i2t", "validate")
PANEL_OF_TASK = {"select": "select", "ambiguity": "pair", "t2i": "pair", "i2t": "i2t", "validate": "validate"}
# (element id suffix, label, answer sent) of each panel's buttons
SELECT_BUTTONS = [(str(k), str(k), str(k)) for k in range(1, N_IMAGES + 1)] + [("none", "None", "none")]
PAIR_BUTTONS = [("left", "Left", "left"), ("right", "Right", "right"), ("both", "Both", "both")]
TEXT_BUTTONS = [("text-1", "1", "1"), ("text-2", "2", "2")]

# Where the browser remembers its last start (campaign, name, resume key) to fill the form in after a reload. Not
# a secret (the page's config carries it): fixed, so a restarted server still reads what browsers remembered.
REMEMBERED_KEY, REMEMBERED_SECRET = "complab-annotate", "complab-annotate-v1"


@dataclass(frozen=True)
class Annotating:
    """Who is annotating which campaign (kept in server-side state), and what their page shows."""

    campaign: str
    annotator_id: int
    folder: Path
    completion_code: str
    source: str
    images: int = N_IMAGES  # candidates per item in this campaign: the step 3 panel shows that many
    panel: str = ""  # the panel on screen ("select", "pair", "i2t"); "" on a fresh page: everything is sent
    both: bool = True  # whether the pair panel shows its Both button (step 4 does, T2I does not)
    seen: tuple[str, ...] = ()  # the kinds of task this page has shown: their instructions were opened once
    opened: bool = False  # whether the page opened the instructions for the task on screen


def _image(name: str | None) -> dict | None:
    """An image as the browser gets it: its opaque name at the task images' route (`ui.gate.TaskImageRoute`).
    Without Gradio's file marker (``meta``), so that Gradio neither copies the file into its cache nor names it."""
    if name is None:
        return None
    return {"path": name, "url": gate.task_image_url(name), "orig_name": name}


class AnnotatePage:
    """The components of the page and the handlers that fill them."""

    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.db = ctx.store.path
        self.need_key = resume.keys_required(ctx.settings)  # see backend.annotate.resume

    # layout
    FORM = True  # whether the page has the start form (a campaign to choose, a name to type); a study page has not

    def build(self) -> None:
        self.state = gr.State(None)
        # Outside the task's column: Gradio 6 shows a visible="hidden" child when its column is made visible.
        self.token = gr.Textbox(visible="hidden", elem_id="annotate-token")
        with gr.Column(visible=self.FORM) as self.start_box:
            gr.Markdown("## Annotate\nChoose the campaign you were invited to and type your name or id.")
            with gr.Row():
                # a typed name too: a campaign created after this page was built is joinable at once (the
                # handler checks that it exists)
                self.campaign = gr.Dropdown(self._campaign_names() if self.FORM else [], label="Campaign",
                                            elem_id="annotate-campaign", allow_custom_value=True)
                self.name = gr.Textbox(label="Your name or id", elem_id="annotate-name")
                self.key = gr.Textbox("", label="Resume key", visible=self.need_key, elem_id="annotate-key",
                                      placeholder="e.g. K7PQ-3XMA-HW2R",
                                      info="only to continue a session begun in another browser")
            self.start = gr.Button("Start", variant="primary", elem_id="annotate-start")
        with gr.Column(visible=False, elem_id="annotate-task") as self.task_box:
            self.counter = gr.Markdown(elem_id="annotate-counter")
            with gr.Accordion("Instructions", open=False, elem_id="annotate-instructions-box") as self.accordion:
                self.instructions = gr.Markdown(elem_id="annotate-instructions")
            self.caption = gr.Markdown(elem_id="annotate-caption")
            with gr.Column(visible=False, elem_id="annotate-select") as self.select_panel:
                self.select_images = []
                for row in ((1, 2), (3, 4)):
                    with gr.Row(equal_height=True):
                        self.select_images += [self._image(str(k), f"annotate-image-{k}") for k in row]
                with gr.Row():
                    self.select_buttons = self._buttons(SELECT_BUTTONS)
            with gr.Column(visible=False, elem_id="annotate-pair") as self.pair_panel:
                with gr.Row(equal_height=True):
                    self.pair_images = [self._image(side, f"annotate-{side}") for side in ("left", "right")]
                with gr.Row():
                    self.pair_buttons = self._buttons(PAIR_BUTTONS)
            with gr.Column(visible=False, elem_id="annotate-i2t") as self.i2t_panel:
                self.i2t_image = self._image("image", "annotate-i2t-image")
                self.text_buttons = self._buttons(TEXT_BUTTONS)
            with gr.Column(visible=False, elem_id="annotate-validate") as self.validate_panel:
                self.validate_image = self._image("image", "annotate-validate-image")
                with gr.Row():
                    self.validate_buttons = self._buttons(VALIDATE_BUTTONS)
            self.keys = gr.Markdown(elem_id="annotate-keys")
            self.message = gr.Markdown(elem_id="annotate-message")
            self.undo = gr.Button("Undo my last answer", elem_id="annotate-undo", size="sm", variant="secondary")
            self.resume_note = gr.Markdown(elem_id="annotate-resume-note")
        self.done = gr.Markdown(visible=False, elem_id="annotate-done")
        self.waiting = gr.Timer(WAIT_POLL_S, active=False)  # runs only while the page waits for a task
        self.remembered = gr.BrowserState({}, storage_key=REMEMBERED_KEY, secret=REMEMBERED_SECRET)
        gr.HTML(head=PAGE_STYLE, visible="hidden", container=False, padding=False, elem_id="annotate-style")

    @staticmethod
    def _image(label: str, elem_id: str) -> gr.Image:
        return gr.Image(label=label, show_label=True, interactive=False, height=300, elem_id=elem_id, buttons=[])

    @staticmethod
    def _buttons(specs: list[tuple[str, str, str]]) -> list[gr.Button]:
        return [gr.Button(label, elem_id=f"answer-{suffix}", min_width=80,
                          variant="stop" if suffix == "none" else "secondary") for suffix, label, _ in specs]

    @property
    def task_outputs(self) -> list:
        """What an answer fills: the next task (its panel's images and texts), or the end of the session."""
        return [self.state, self.task_box, self.done, self.counter, self.accordion, self.instructions, self.caption,
                self.select_panel, *self.select_images, self.pair_panel, *self.pair_images, self.pair_buttons[2],
                self.i2t_panel, self.i2t_image, *self.text_buttons, self.validate_panel, self.validate_image, self.keys,
                self.token, self.message, self.waiting]

    @property
    def outputs(self) -> list:
        """What starting (or a study link) fills: the start form, the task with every panel set up, and the
        name, resume key and its note."""
        return [self.state, self.start_box, self.campaign, *self.select_buttons, *self.task_outputs[1:], self.name,
                self.key, self.resume_note]

    def wire(self, demo: gr.Blocks) -> None:
        # postprocess=False everywhere: the handlers return the browser's values (see the module docstring).
        form = [self.campaign, self.name, self.key]
        # No progress overlay: on a refusal (no name, someone else's name) Gradio would leave its "Error" badge
        # over every output, the form included, and the annotator could not correct it and press Start again.
        triggers: list[tuple[Callable, dict[str, Any]]] = [(self.start.click, {"api_name": "start"}),
                                                           (self.name.submit, {"api_visibility": "private"})]
        started = [trigger(self.begin, [*form, self.state], self.outputs, concurrency_limit=None, postprocess=False,
                           show_progress="hidden", **api) for trigger, api in triggers]
        for event in started:
            event.success(_remember, form, self.remembered, api_visibility="private", queue=False)
        self.wire_answers({"api_name": "answer"})
        # A study's participants arrive together: opening the page must not wait in a queue of two.
        demo.load(self.from_link, [self.remembered, self.state], self.outputs, api_visibility="private",
                  concurrency_limit=None, postprocess=False)

    def wire_answers(self, api: dict[str, Any]) -> None:
        """The answer buttons, the /answer endpoint (named by `api`) and the waiting page's timer."""
        buttons = zip(self.select_buttons + self.pair_buttons + self.text_buttons + self.validate_buttons,
                      SELECT_BUTTONS + PAIR_BUTTONS + TEXT_BUTTONS + VALIDATE_BUTTONS)
        for button, (_, _, value) in buttons:
            button.click(self._answer_with(value), [self.state, self.token], self.task_outputs,
                         api_visibility="private", concurrency_limit=None, trigger_mode="once", postprocess=False)
        hidden_answer = gr.Textbox(visible=False)
        gr.Button(visible=False).click(self.answer, [self.state, self.token, hidden_answer], self.task_outputs,
                                       concurrency_limit=None, postprocess=False, **api)
        undo_api = {"api_name": "undo"} if "api_name" in api else api
        self.undo.click(self.take_back, self.state, self.task_outputs, concurrency_limit=None, trigger_mode="once",
                        postprocess=False, **undo_api)
        self.waiting.tick(self.poll, self.state, self.task_outputs, api_visibility="private", concurrency_limit=None,
                          postprocess=False, show_progress="hidden")

    # handlers
    def begin(self, campaign: str, name: str, key: str = "", session: Annotating | None = None,
              request: gr.Request | None = None):
        """Start (or resume) as a named local annotator. Resuming a name from another browser session needs its
        resume key where keys are required (`backend.annotate.resume`); API callers pass it as `key`."""
        try:
            return self._enter(campaign, prolific.local_identity(name or ""), key or "", session, request)
        except ValueError as error:
            raise gr.Error(str(error), print_exception=False) from error

    def from_link(self, remembered: dict | None = None, session: Annotating | None = None,
                  request: gr.Request | None = None):
        """Opened from a study link: ``?campaign=NAME&PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``; without
        one, the start form, filled in with what this browser last started with (`remembered`).
        `request` is None for API calls, which start with /start instead. A busy server may handle the page's
        load after its annotator pressed Start: the session they started (`session`) is kept, not replaced
        by the start form."""
        if isinstance(session, Annotating):
            return [gr.skip()] * len(self.outputs)
        params = dict(request.query_params) if request is not None else {}
        remembered = remembered if isinstance(remembered, dict) else {}
        try:
            identity = prolific.identity_from_params(params)
            if identity is None:
                return self._view(None, None, campaign=params.get("campaign") or remembered.get("campaign"),
                                  remembered=remembered)
            return self._enter(params.get("campaign") or "", identity, request=request)
        except ValueError as error:
            return self._view(None, None, message=f"**{error}**")

    def answer(self, session: Annotating | None, token: str, value: str, request: gr.Request | None = None):
        """Record `value` as the answer to the task `token` names, then show the next task. When the store could
        not save it (a full disk), or the client sent more answers than a person gives (`ui.context.Guards`), the
        same task stays on screen with that said: the answer was not taken. A too quick answer is refused by the
        server (`backend.annotate.quality`): the task is shown again with the reason."""
        if session is None:
            raise gr.Error("Start a session first.", print_exception=False)
        client = self.ctx.annotator_client(request)
        wait = self.ctx.guards.annotate_answers.spend(client) if client else 0.0
        if wait:
            return self._unchanged(f"**{too_many('answers', wait)}**")
        message = ""
        try:
            result = assign.submit(self.db, session.annotator_id, int(token), value)
            message = "" if result.recorded or result.message == "already recorded" else result.message
            shown = assign.serve(self.db, session.annotator_id)
        except db.StoreFull as error:
            return self._unchanged(f"**{str(error).capitalize()}.**")
        except (ValueError, assign.TaskError) as error:
            message = f"**{error}**"
            shown = assign.serve(self.db, session.annotator_id)
        return self._task_view(session, shown, message)

    def take_back(self, session: Annotating | None):
        """Undo: the annotator's own last answer is withdrawn while nothing was decided with it
        (`backend.annotate.undo`), and its task is shown again; else the reason, and the page stays."""
        if session is None:
            raise gr.Error("Start a session first.", print_exception=False)
        try:
            undo.undo_last(self.db, session.annotator_id)
        except db.StoreFull as error:
            return self._unchanged(f"**{str(error).capitalize()}.**")
        except assign.TaskError as error:
            return self._unchanged(f"**You cannot undo: {error}.**")
        return self._task_view(session, assign.serve(self.db, session.annotator_id),
                               "Your last answer was withdrawn: answer this task again.")

    def _unchanged(self, message: str) -> list:
        """`task_outputs` that leave the page as it is and say `message`."""
        return [*[gr.skip()] * (len(self.task_outputs) - 2), message, gr.skip()]

    def poll(self, session: Annotating | None):
        """While waiting (others hold every open task): the first task once one is free, else nothing changes."""
        if session is None:
            return [None, *[gr.skip()] * (len(self.task_outputs) - 2), gr.Timer(active=False)]
        shown = assign.serve(self.db, session.annotator_id)
        if isinstance(shown, assign.Ended) and shown.state == "wait":
            return gr.skip()
        return self._task_view(session, shown)

    def _answer_with(self, value: str):
        def handler(session: Annotating | None, token: str, request: gr.Request | None = None):
            return self.answer(session, token, value, request)
        return handler

    # helpers
    def _campaign_names(self) -> list[str]:
        return [row["name"] for row in campaigns.list_campaigns(self.db)]

    def _enter(self, name: str, identity: prolific.Identity, key: str = "", current: Annotating | None = None,
               request: gr.Request | None = None):
        """Start or continue `identity`'s session in campaign `name`; a client starting sessions faster than people
        do is refused (`ui.context.Guards`), before anything is written."""
        client = self.ctx.annotator_client(request)
        wait = self.ctx.guards.annotate_joins.spend(client) if client else 0.0
        if wait:
            raise ValueError(too_many("session starts", wait))
        names = self._campaign_names()
        name = name or (names[0] if len(names) == 1 else "")
        if not name:
            raise ValueError("choose a campaign")
        campaign = campaigns.get(self.db, name)
        verify.admit(self.ctx.settings, campaign["id"], identity)  # a Prolific link: its study and submission
        holder = current.annotator_id if isinstance(current, Annotating) and current.campaign == name else None
        entry = resume.enter(self.db, campaign["id"], identity, key, required=self.need_key, current=holder,
                             client=client)
        config = campaign["config"]
        session = Annotating(name, entry.annotator_id, campaigns.campaign_dir(self.ctx.settings.data_dir, name),
                             config.completion_code, identity.source, min(config.images_per_item, N_IMAGES))
        return self._view(session, assign.serve(self.db, entry.annotator_id), key=entry.issued or key)

    def _view(self, session: Annotating | None, shown: assign.Task | assign.Ended | None, message: str = "",
              campaign: str | None = None, remembered: dict | None = None, key: str = "") -> list:
        """`outputs`: the start form (filled in with what this browser `remembered`), a task, or the end of the
        session. What the page shows is not known here (a first visit, a reload), so every panel is set up."""
        if session is None:  # the start form, the campaign preselected when the link names one
            # the campaigns as they are now: one created after the server started can be chosen at once
            chosen = gr.Dropdown(choices=self._campaign_names(), value=campaign)
            remembered = remembered or {}
            return [None, gr.Column(visible=True), chosen, *[gr.Button()] * len(SELECT_BUTTONS),
                    gr.Column(visible=False), gr.Markdown(visible=False), "", gr.Accordion(open=False), "", "",
                    *self._panels([], None, N_IMAGES, switch=True, both=None), "", "", message,
                    gr.Timer(active=False), remembered.get("name") or gr.Textbox(),
                    remembered.get("key") or gr.Textbox(), ""]
        assert shown is not None
        state, *rest = self._task_view(replace(session, panel="", seen=(), opened=False), shown, message)
        buttons = [k <= session.images for k in range(1, N_IMAGES + 1)] + [True]  # None is always there
        return [state, gr.Column(visible=False), gr.Dropdown(), *[gr.Button(visible=visible) for visible in buttons],
                *rest, gr.Textbox(), key or gr.Textbox(), self._resume_note(session, key)]

    def _resume_note(self, session: Annotating, key: str) -> str:
        """The key to continue this session elsewhere, where keys are required (local names only)."""
        if not (self.need_key and key and session.source == "local"):
            return ""
        return (f"Your resume key: **{key}**. This browser remembers it; to continue in another browser, type it "
                "with your name.")

    def _task_view(self, session: Annotating, shown: assign.Task | assign.Ended, message: str = "") -> list:
        """`task_outputs` for the task `shown`, or why there is none (`assign.Ended`: the end of the session, a
        wait that the page's timer ends, a full study). Values only, unless the panel on screen
        changes (then which panel is visible), the pair panel's Both button must appear or go, or the
        instructions open or close: they are open on the first task of each kind, so a participant arriving
        from a study link reads them before answering, and reads step 4's when step 4 first comes."""
        fresh = session.panel == ""
        task = shown if isinstance(shown, assign.Task) else None
        panel = PANEL_OF_TASK[task.task] if task is not None else "done"
        both = task.task != "t2i" if task is not None and panel == "pair" else session.both
        panels = self._panels(self._published(session, task), task, session.images,
                              switch=fresh or panel != session.panel,
                              both=both if fresh or both != session.both else None, fresh=fresh)
        new = task is not None and task.task not in session.seen
        instructions = gr.Accordion(open=True) if new else \
            gr.Accordion(open=False) if fresh or session.opened else gr.Accordion()
        after = replace(session, panel=panel, both=both, opened=new,
                        seen=(*session.seen, task.task) if task is not None and new else session.seen)
        if task is None:
            assert isinstance(shown, assign.Ended)
            return [after, gr.Column(visible=False),
                    gr.Markdown(ending(session.source, session.completion_code, shown), visible=True), "",
                    instructions, "", "", *panels, "", "", "", gr.Timer(active=shown.state == "wait")]
        return [after, gr.Column(visible=True), gr.Markdown(visible=False) if fresh else "",
                f"**{task.number} / {task.total}**", instructions, task.instructions, caption(task), *panels,
                KEYS[task.task], str(task.assignment_id), message,
                gr.Timer(active=False) if fresh or session.panel == "done" else gr.skip()]

    def _published(self, session: Annotating, task: assign.Task | None) -> list[dict | None]:
        """The task's images as the browser gets them, their names remembered for the route that serves them."""
        if task is None:
            return []
        self.ctx.task_images.publish(task.assignment_id, session.folder, task.names, task.images)
        return [_image(name) for name in task.names]

    @staticmethod
    def _panels(files: list[dict | None], task: assign.Task | None, images: int, switch: bool, both: bool | None,
                fresh: bool = False) -> list:
        """The panels' part of `task_outputs`: the current task's images (`files`) and texts in its panel (None in
        the others); which panel is visible when `switch`; the Both button shown or hidden unless `both` is None.
        On a `fresh` page, step 3 images beyond the campaign's `images` per item are hidden."""
        panel = PANEL_OF_TASK[task.task] if task is not None else ""

        def slots(name: str, n: int) -> list:
            return (files + [None] * n)[:n] if panel == name else [None] * n

        select = slots("select", N_IMAGES)
        if fresh and images < N_IMAGES:
            select = [gr.Image(value=value, visible=k < images) for k, value in enumerate(select)]
        texts = ["1", "2"]
        if task is not None and panel == "i2t":
            texts = [f"{k + 1}: {text}" for k, text in enumerate(task.texts)]
        visible = [gr.Column(visible=panel == name) if switch else gr.Column() for name in PANELS]
        return [visible[0], *select, visible[1], *slots("pair", 2), "Both" if both is None else gr.Button(visible=both),
                visible[2], *slots("i2t", 1), *texts, visible[3], *slots("validate", 1)]


def _remember(campaign: str, name: str, key: str) -> dict:
    """What this browser keeps (localStorage) after a start: the form, to fill it in after a reload."""
    return {"campaign": campaign, "name": name, "key": key}


def build(ctx: AppContext) -> AnnotatePage:
    page = AnnotatePage(ctx)
    page.build()
    return page
