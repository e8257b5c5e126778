"""The annotator's page: one task at a time, four images large, answered with the keyboard.

Everything is decided by the server (`backend.annotate.assign`): which task,
whether an answer counts, when the session is over. The page only shows the
task and sends answers. Each answer carries the token of the task it answers
(a hidden field), so a double click or a retried request can never answer the
next task by mistake; the server records it once. Who the annotator is lives in
a server-side `gr.State`: nobody can read or answer someone else's tasks.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from backend.annotate import assign, campaigns, prolific
from ui.context import AppContext

N_IMAGES = 4
KEYS = {"select": "Keys: 1-4 pick an image, N none.", "ambiguity": "Keys: 1 or L left, 2 or R right, B both.",
        "i2t": "Keys: 1 first description, 2 second.", "t2i": "Keys: 1 or L left, 2 or R right."}
# Gradio has no shortcut API: this script (given to `launch(head=...)`) clicks the answer buttons by id.
KEYBOARD_SCRIPT = """<script>
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  const ids = {"1": ["answer-1"], "2": ["answer-2"], "3": ["answer-3"], "4": ["answer-4"],
               "n": ["answer-none"], "l": ["answer-1"], "r": ["answer-2"], "b": ["answer-both"]};
  for (const id of ids[event.key.toLowerCase()] || []) {
    const button = document.getElementById(id);
    if (button && button.offsetParent !== null && !button.disabled) {
      event.preventDefault();
      button.click();
      return;
    }
  }
});
</script>"""


@dataclass(frozen=True)
class Annotating:
    """Who is annotating which campaign (kept in server-side state)."""

    campaign: str
    annotator_id: int
    folder: Path
    completion_code: str
    source: str


class AnnotatePage:
    """The components of the page and the handlers that fill them."""

    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.db = ctx.store.path

    # layout
    def build(self) -> None:
        self.state = gr.State(None)
        with gr.Column(visible=True) as self.start_box:
            gr.Markdown("## Annotate\nChoose the campaign you were invited to and type your name or id.")
            with gr.Row():
                self.campaign = gr.Dropdown(self._campaign_names(), label="Campaign", elem_id="annotate-campaign")
                self.name = gr.Textbox(label="Your name or id", elem_id="annotate-name")
            self.start = gr.Button("Start", variant="primary", elem_id="annotate-start")
        with gr.Column(visible=False, elem_id="annotate-task") as self.task_box:
            self.counter = gr.Markdown(elem_id="annotate-counter")
            with gr.Accordion("Instructions", open=False):
                self.instructions = gr.Markdown(elem_id="annotate-instructions")
            self.caption = gr.Markdown(elem_id="annotate-caption")
            with gr.Row(equal_height=True):
                self.images = [gr.Image(show_label=True, interactive=False, height=300, elem_id=f"annotate-image-{k}",
                                        buttons=[]) for k in (1, 2)]
            with gr.Row(equal_height=True):
                self.images += [gr.Image(show_label=True, interactive=False, height=300,
                                         elem_id=f"annotate-image-{k}", buttons=[]) for k in (3, 4)]
            with gr.Row():
                self.answers = {str(k): gr.Button(str(k), elem_id=f"answer-{k}", min_width=80) for k in range(1, 5)}
                self.answers["none"] = gr.Button("None", elem_id="answer-none", variant="stop", min_width=80)
                self.answers["both"] = gr.Button("Both", elem_id="answer-both", visible=False, min_width=80)
            self.keys = gr.Markdown(elem_id="annotate-keys")
            self.token = gr.Textbox(visible="hidden", elem_id="annotate-token")
            self.message = gr.Markdown(elem_id="annotate-message")
        self.done = gr.Markdown(visible=False, elem_id="annotate-done")

    @property
    def outputs(self) -> list:
        return [self.state, self.start_box, self.campaign, self.task_box, self.done, self.counter, self.instructions, self.caption,
                *self.images, *self.answers.values(), self.keys, self.token, self.message]

    def wire(self, demo: gr.Blocks) -> None:
        self.start.click(self.begin, [self.campaign, self.name], self.outputs, api_name="start",
                         concurrency_limit=None)
        self.name.submit(self.begin, [self.campaign, self.name], self.outputs, api_visibility="private",
                         concurrency_limit=None)
        for value, button in self.answers.items():
            button.click(self._answer_with(value), [self.state, self.token], self.outputs, api_visibility="private",
                         concurrency_limit=None, trigger_mode="once")
        hidden_answer = gr.Textbox(visible=False)
        gr.Button(visible=False).click(self.answer, [self.state, self.token, hidden_answer], self.outputs,
                                       api_name="answer", concurrency_limit=None)
        demo.load(self.from_link, None, self.outputs, api_visibility="private")

    # handlers
    def begin(self, campaign: str, name: str, request: gr.Request | None = None):
        """Start (or resume) as a named local annotator."""
        try:
            return self._enter(campaign, prolific.local_identity(name or ""))
        except ValueError as error:
            raise gr.Error(str(error), print_exception=False) from error

    def from_link(self, request: gr.Request | None = None):
        """Opened from a study link: ``?campaign=NAME&PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``.
        `request` is None for API calls, which start with /start instead."""
        params = dict(request.query_params) if request is not None else {}
        try:
            identity = prolific.identity_from_params(params)
            if identity is None:
                return self._view(None, None, campaign=params.get("campaign"))
            return self._enter(params.get("campaign") or "", identity)
        except ValueError as error:
            return self._view(None, None, message=f"**{error}**")

    def answer(self, session: Annotating | None, token: str, value: str):
        """Record `value` as the answer to the task `token` names, then show the next task."""
        if session is None:
            raise gr.Error("Start a session first.", print_exception=False)
        message = ""
        try:
            result = assign.submit(self.db, session.annotator_id, int(token), value)
            message = "" if result.recorded or result.message == "already recorded" else result.message
        except (ValueError, assign.TaskError) as error:
            message = f"**{error}**"
        return self._view(session, assign.next_task(self.db, session.annotator_id), message=message)

    def _answer_with(self, value: str):
        def handler(session: Annotating | None, token: str):
            return self.answer(session, token, value)
        return handler

    # helpers
    def _campaign_names(self) -> list[str]:
        return [row["name"] for row in campaigns.list_campaigns(self.db)]

    def _enter(self, name: str, identity: prolific.Identity):
        names = self._campaign_names()
        name = name or (names[0] if len(names) == 1 else "")
        if not name:
            raise ValueError("choose a campaign")
        campaign = campaigns.get(self.db, name)
        annotator_id = assign.join(self.db, campaign["id"], identity.external_id, identity.source,
                                   identity.study_id, identity.session_id)
        session = Annotating(name, annotator_id, campaigns.campaign_dir(self.ctx.settings.data_dir, name),
                             campaign["config"].completion_code, identity.source)
        return self._view(session, assign.next_task(self.db, annotator_id))

    def _view(self, session: Annotating | None, task: assign.Task | None, message: str = "",
              campaign: str | None = None) -> list:
        """Every output for one state of the page: the start form, a task, or the end of the session."""
        blank = ["", "", "", *[gr.Image(value=None)] * N_IMAGES, *[gr.Button()] * len(self.answers), "", ""]
        if session is None:  # the start form, the campaign preselected when the link names one
            chosen = gr.Dropdown(choices=self._campaign_names(), value=campaign) if campaign else gr.Dropdown()
            return [None, gr.Column(visible=True), chosen, gr.Column(visible=False), gr.Markdown(visible=False),
                    *blank, message]
        if task is None:
            return [session, gr.Column(visible=False), gr.Dropdown(), gr.Column(visible=False),
                    gr.Markdown(self._farewell(session), visible=True), *blank, ""]
        return [session, gr.Column(visible=False), gr.Dropdown(), gr.Column(visible=True),
                gr.Markdown(visible=False), f"**{task.number} / {task.total}**", task.instructions, _caption(task),
                *self._images(session, task), *self._buttons(task), KEYS[task.task], str(task.assignment_id), message]

    def _images(self, session: Annotating, task: assign.Task) -> list:
        labels = [str(k + 1) for k in range(len(task.images))] if task.task == "select" else \
            (["left", "right"] if len(task.images) == 2 else ["image"])
        shown = [gr.Image(value=str(session.folder / path) if path else None, label=label, visible=True)
                 for path, label in zip(task.images, labels)]
        return shown + [gr.Image(value=None, visible=False)] * (N_IMAGES - len(shown))

    def _buttons(self, task: assign.Task) -> list:
        if task.task == "select":
            labels = {str(k + 1): str(k + 1) for k in range(len(task.images))} | {"none": "None"}
        elif task.task == "i2t":
            labels = {"1": f"1: {task.texts[0]}", "2": f"2: {task.texts[1]}"}
        else:
            labels = {"1": "Left", "2": "Right"} | ({"both": "Both"} if task.task == "ambiguity" else {})
        return [gr.Button(labels.get(key, key), visible=key in labels) for key in self.answers]

    def _farewell(self, session: Annotating) -> str:
        """Shown only once every answer is stored (the submit that ended the session has committed)."""
        if session.source != "prolific":
            return "## Thank you!\nAll your answers are stored. You can close this page."
        url = prolific.completion_url(session.completion_code)
        return (f"## Thank you!\nAll your answers are stored. Your completion code is **{session.completion_code}**."
                f"\n\n[Return to Prolific to complete your submission]({url})")


def _caption(task: assign.Task) -> str:
    if task.task == "i2t":
        return "### Which description best represents the image?"
    return f"### {task.text}"


def build(ctx: AppContext) -> AnnotatePage:
    page = AnnotatePage(ctx)
    page.build()
    return page
