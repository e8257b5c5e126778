"""The study link's page (``/study?campaign=NAME&PROLIFIC_PID=...``): the campaign's intro, consent, then its tasks.

A page of its own on the same server in every mode (`app.py` adds it as a route that no navigation bar shows),
so a participant sees the study and nothing else: no other tab, no start form, no list of campaigns. A link
without a Prolific id, or naming no campaign that exists, says only that the link is not valid (it never lists
the campaigns). Reopening the link after the first start skips the intro and resumes the session.
"""
from __future__ import annotations

from typing import Any

import gradio as gr

from backend.annotate import campaigns, prolific, resume
from ui.context import AppContext
from ui.tabs.annotate import AnnotatePage

PATH = prolific.STUDY_PATH
INVALID = ("## This link is not valid\nCheck that you opened the study from Prolific, with the whole link. If it "
           "still does not work, please return your submission and message the researcher.")


class StudyPage(AnnotatePage):
    """`AnnotatePage` without its start form, behind the campaign's intro."""

    FORM = False

    def build(self) -> None:
        self.invited = gr.State(None)  # (campaign, identity) between the intro and the consent
        self.notice = gr.Markdown(elem_id="study-notice")
        with gr.Column(visible=False, elem_id="study-intro") as self.intro_box:
            self.intro = gr.Markdown(elem_id="study-intro-text")
            self.agree = gr.Button("I agree: start", variant="primary", elem_id="study-agree")
        super().build()

    @property
    def study_outputs(self) -> list:
        return [self.invited, self.intro_box, self.intro, self.notice, *self.outputs]

    def wire(self, demo: gr.Blocks) -> None:
        self.wire_answers({"api_visibility": "private"})
        demo.load(self.open_link, None, self.study_outputs, api_visibility="private", concurrency_limit=None,
                  postprocess=False)
        self.agree.click(self.consent, self.invited, self.study_outputs, api_visibility="private",
                         concurrency_limit=None, postprocess=False, show_progress="hidden")

    def open_link(self, request: gr.Request | None = None) -> list:
        """The intro of the campaign the link names; a link opened again goes straight to its session."""
        params = dict(request.query_params) if request is not None else {}
        name = str(params.get("campaign") or "")
        try:
            identity = prolific.identity_from_params(params)
            campaign = campaigns.get(self.db, name) if identity is not None else None
        except ValueError:
            campaign = None
        if campaign is None or identity is None:
            return self._page(notice=INVALID)
        if resume.started(self.db, campaign["id"], identity.external_id):
            return self._start(name, identity, request)
        return self._page(invited=(name, identity), intro=campaign["config"].intro)

    def consent(self, invited: tuple[str, prolific.Identity] | None, request: gr.Request | None = None) -> list:
        """The participant agreed: their session starts (its tasks reserved now)."""
        if invited is None:
            return self._page(notice=INVALID)
        return self._start(*invited, request)

    def _start(self, name: str, identity: prolific.Identity, request: gr.Request | None) -> list:
        try:
            return [None, gr.Column(visible=False), "", "", *self._enter(name, identity, request=request)]
        except ValueError as error:
            return self._page(notice=f"**{error}**")

    def _page(self, invited: Any = None, intro: str = "", notice: str = "") -> list:
        return [invited, gr.Column(visible=bool(intro)), intro, notice, *[gr.skip()] * len(self.outputs)]


def hide_navbar() -> None:
    """No navigation bar on this page. Gradio draws one as soon as an app has two pages; a Navbar made with
    visible=False is never mounted, so it never tells the page to hide the bar: "hidden" does (its type hint
    says bool only)."""
    gr.Navbar(visible="hidden")  # type: ignore[arg-type]


def add_route(ctx: AppContext, demo: gr.Blocks) -> None:
    """The study page at ``/study`` of `demo` (called outside its Blocks context), in no navigation bar."""
    with demo.route("Study", PATH, show_in_navbar=False):
        hide_navbar()
        page = StudyPage(ctx)
        page.build()
        page.wire(demo)
