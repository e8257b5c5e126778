"""Sign-in row and the per-visitor session: who is asking, for every handler that needs to know.

The signed-in actor lives in a `gr.State`, which Gradio keeps on the server per
browser session (or per `gradio_client.Client`); a caller cannot send one of
their own. Handlers read it through `actor_of`; the backend decides what that
actor may do (`backend.core.auth`). Admin tabs are shown to admins, but hiding them
is a courtesy: their endpoints refuse anyone else.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import gradio as gr

from backend import jobs
from backend.core import auth
from backend.core.auth import Actor, PermissionDenied, require_admin
from backend.core.store import Store
from ui.context import AppContext

T = TypeVar("T")


def actor_of(ctx: AppContext, session: Actor | None) -> Actor:
    """The session's actor, else who a visitor is before signing in (admin only on a loopback-only app)."""
    return session if isinstance(session, Actor) else auth.default_actor(ctx.settings)


def admin_initial(ctx: AppContext, read: Callable[[], Sequence[T]]) -> Sequence[T]:
    """What an admin view lists when the page is built. The page's config, which every visitor downloads, holds the
    hidden admin tabs too: stored admin data (runs, sweeps) goes in only where every visitor is an admin
    (open-local); elsewhere the view starts empty and an admin's refresh fills it."""
    return read() if auth.default_actor(ctx.settings).is_admin else []


def status_text(ctx: AppContext, actor: Actor) -> str:
    policy = auth.policy(ctx.settings)
    if actor.is_admin and actor.via != "open-local":
        return f"Signed in as **{actor.name}** (admin)."
    who = f"Signed in as **{actor.name}** (not an admin). " if actor.via == "hf-oauth" else ""
    return who + policy.reason


def shown(error: Exception) -> gr.Error:
    """A refusal or bad input as the message the visitor reads (no traceback in the server log)."""
    return gr.Error(str(error), print_exception=False)


def job_of_kind(store: Store, job_id: int | str, kind: str, other_kind: str) -> dict:
    """Job `job_id` if it is a `kind` job; otherwise the visitor reads why not (`other_kind` is formatted with
    the job's `id` and `kind`)."""
    try:
        job = jobs.get(store, job_id)
    except jobs.JobError as error:
        raise shown(error) from error
    if job["kind"] != kind:
        raise gr.Error(other_kind.format(**job), print_exception=False)
    return job


def admin_actor(ctx: AppContext, session: Actor | None, action: str) -> Actor:
    """The session's actor if it is an admin; otherwise the backend's refusal, shown as a message."""
    actor = actor_of(ctx, session)
    try:
        require_admin(actor, action)
    except PermissionDenied as error:
        raise shown(error) from error
    return actor


@dataclass
class Session:
    """The sign-in components; `wire` connects them to the tabs that only admins see."""

    ctx: AppContext
    state: gr.State
    status: gr.Markdown
    login_inputs: list = field(default_factory=list)  # user, password (password policy only)
    buttons: tuple = ()  # sign in, sign out (password policy only)
    admin_tabs: list = field(default_factory=list)

    def tab_updates(self, actor: Actor) -> list:
        return [gr.Tab(visible=actor.is_admin) for _ in self.admin_tabs]

    def wire(self, demo: gr.Blocks, admin_tabs: list) -> None:
        """Connect sign-in/out (password policy) or the Hugging Face sign-in (OAuth policy) to the state and tabs."""
        self.admin_tabs = admin_tabs
        outputs = [self.state, self.status, *self.admin_tabs]
        if self.buttons:
            sign_in, sign_out = self.buttons
            sign_in.click(self._login, self.login_inputs, [*outputs, self.login_inputs[1]], api_name="login")
            sign_out.click(self._logout, None, outputs, api_name="logout")
        if auth.policy(self.ctx.settings).mode == "hf-oauth":
            demo.load(self._oauth, None, outputs, api_visibility="private")

    def _login(self, user: str, password: str):
        """Sign in with the admin credentials of the settings; a wrong pair is a message, nothing else changes."""
        try:
            actor = auth.password_login(self.ctx.settings, user, password)
        except PermissionDenied as error:
            raise gr.Error(str(error), print_exception=False) from error
        return actor, status_text(self.ctx, actor), *self.tab_updates(actor), ""

    def _logout(self):
        actor = auth.default_actor(self.ctx.settings)
        return None, status_text(self.ctx, actor), *self.tab_updates(actor)

    def _oauth(self, profile: gr.OAuthProfile | None, token: gr.OAuthToken | None):
        """After "Sign in with Hugging Face": admin if the user or one of their organisations is listed."""
        username = profile.get("preferred_username") if profile else None
        actor = auth.oauth_actor(self.ctx.settings, username,
                                 lambda: auth.hub_organisations(token.token) if token else [])
        return actor, status_text(self.ctx, actor), *self.tab_updates(actor)


def build(ctx: AppContext) -> Session:
    """Lay out the sign-in row; `Session.wire` connects it once the admin tabs exist."""
    policy = auth.policy(ctx.settings)
    state = gr.State(None)
    with gr.Row(elem_id="session-row"):
        status = gr.Markdown(status_text(ctx, auth.default_actor(ctx.settings)), elem_id="session-status")
        inputs: list[gr.Textbox] = []
        buttons: tuple[gr.Button, ...] = ()
        if policy.mode == "password":
            with gr.Column(scale=0, min_width=420), gr.Accordion("Admin sign-in", open=False):
                with gr.Row():
                    user = gr.Textbox(label="Admin user", min_width=150)
                    password = gr.Textbox(label="Password", type="password", min_width=150)
                with gr.Row():
                    sign_in = gr.Button("Sign in", variant="primary", size="sm", elem_id="sign-in")
                    sign_out = gr.Button("Sign out", size="sm")
            inputs, buttons = [user, password], (sign_in, sign_out)
        elif policy.mode == "hf-oauth":
            gr.LoginButton(scale=0)
    return Session(ctx, state, status, inputs, buttons)
