"""Sign-in row and the per-visitor session: who is asking, for every handler that needs to know.

Signing in (password or Hugging Face) gives the visitor a signed credential (`backend.core.auth.open_session`):
it names the admin and the address they signed in from, and expires after `auth.SESSION_HOURS`. The page keeps
it in two places: a `gr.State` (server-side, per browser tab or `gradio_client.Client`; a caller cannot send one
of their own), which every handler reads through `actor_of`, and the browser's local storage
(`gr.BrowserState`), from which a reloaded page takes it back. Each request is judged by the credential anew:
sign-out revokes it (every tab holding it loses the rights at once), a request from another address gets none,
and a wrong password costs a try (`backend.core.limits.SIGN_IN_FAILURES`). The backend decides what an actor may
do (`backend.core.auth`). Admin tabs are shown to admins, but hiding them is a courtesy: their endpoints refuse
anyone else.
"""
from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import gradio as gr
from gradio.context import LocalContext

from backend import jobs
from backend.core import auth
from backend.core.auth import Actor, PermissionDenied, require_admin
from backend.core.store import Store
from ui.context import AppContext

T = TypeVar("T")
# The browser's copy of the credential; encrypted with a key of this process (a restart's credentials are new).
STORED_KEY, STORED_SECRET = "complab-admin-session", secrets.token_hex(16)


def actor_of(ctx: AppContext, session: str | None) -> Actor:
    """Who holds the session's credential (`backend.core.auth.session_actor`), judged against the address of the
    request being handled; who a visitor is before signing in when there is none (admin only on a loopback-only
    app)."""
    return auth.session_actor(ctx.settings, ctx.guards.sessions, session, ctx.client(LocalContext.request.get(None)))


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


def admin_actor(ctx: AppContext, session: str | None, action: str) -> Actor:
    """The session's actor if it is an admin; otherwise the backend's refusal, shown as a message."""
    actor = actor_of(ctx, session)
    try:
        require_admin(actor, action)
    except PermissionDenied as error:
        raise shown(error) from error
    return actor


def sign_in_wait(ctx: AppContext, client: str) -> float:
    """Seconds before `client` may try a password again (0: now): too many failures from it, or from everyone."""
    guards = ctx.guards
    return max(guards.sign_in_failures.retry_after(client), guards.sign_in_failures_everyone.retry_after("everyone"))


@dataclass
class Session:
    """The sign-in components; `wire` connects them to the tabs that only admins see."""

    ctx: AppContext
    state: gr.State
    stored: gr.BrowserState
    status: gr.Markdown
    login_inputs: list = field(default_factory=list)  # user, password (password policy only)
    buttons: tuple = ()  # sign in, sign out (password policy only)
    admin_tabs: list = field(default_factory=list)

    def tab_updates(self, actor: Actor) -> list:
        return [gr.Tab(visible=actor.is_admin) for _ in self.admin_tabs]

    def shown_as(self, token: str | None, actor: Actor) -> tuple:
        """The outputs every sign-in handler starts with: the credential (state), the status line, the admin tabs,
        the browser's copy of the credential."""
        return token, status_text(self.ctx, actor), *self.tab_updates(actor), token or ""

    def wire(self, demo: gr.Blocks, admin_tabs: list) -> None:
        """Connect sign-in/out (password policy) or the Hugging Face sign-in (OAuth policy) to the state and tabs,
        and take a reloaded page's credential back from the browser."""
        self.admin_tabs = admin_tabs
        outputs = [self.state, self.status, *self.admin_tabs, self.stored]
        if self.buttons:
            sign_in, sign_out = self.buttons
            sign_in.click(self._login, self.login_inputs, [*outputs, self.login_inputs[1]], api_name="login")
            sign_out.click(self._logout, self.state, outputs, api_name="logout")
            demo.load(self._restore, [self.stored, self.state], outputs, api_visibility="private")
        if auth.policy(self.ctx.settings).mode == "hf-oauth":
            demo.load(self._oauth, self.stored, outputs, api_visibility="private")

    def _login(self, user: str, password: str, request: gr.Request):
        """Sign in with the admin credentials of the settings; a wrong pair is a message and costs a try."""
        client = self.ctx.client(request) or "unknown"
        wait = sign_in_wait(self.ctx, client)
        if wait:
            raise gr.Error(f"Too many failed sign-ins: wait {math.ceil(wait)} s before trying again.",
                           print_exception=False)
        try:
            actor = auth.password_login(self.ctx.settings, user, password)
        except PermissionDenied as error:
            self.ctx.guards.sign_in_failures.spend(client)
            self.ctx.guards.sign_in_failures_everyone.spend("everyone")
            raise gr.Error(str(error), print_exception=False) from error
        return *self.shown_as(auth.open_session(self.ctx.guards.sessions, actor, client), actor), ""

    def _logout(self, token: str | None):
        """Revoke the credential everywhere (other tabs, a copy), then show the page as before signing in."""
        self.ctx.guards.sessions.revoke(token)
        return self.shown_as(None, auth.default_actor(self.ctx.settings))

    def _restore(self, stored: str | None, held: str | None, request: gr.Request):
        """A (re)loaded page: the browser's credential if it still holds, else nothing (and the browser forgets it).

        On a busy server the page's load can be handled after a sign-in the visitor made meanwhile: the credential
        this page already holds (`held`) then stands, instead of the empty one the page was loaded with."""
        client = self.ctx.client(request)
        for token in (held, stored):
            actor = auth.session_actor(self.ctx.settings, self.ctx.guards.sessions, token, client)
            if token and actor.via == "password":
                return self.shown_as(token, actor)
        return self.shown_as(None, auth.default_actor(self.ctx.settings))

    def _oauth(self, stored: str | None, profile: gr.OAuthProfile | None, token: gr.OAuthToken | None,
               request: gr.Request):
        """After "Sign in with Hugging Face" (every page load): admin if the user or one of their organisations is
        listed. A page loaded after Hugging Face's sign-out revokes the credential the browser still held."""
        sessions, client = self.ctx.guards.sessions, self.ctx.client(request) or "unknown"
        username = profile.get("preferred_username") if profile else None
        held = auth.session_actor(self.ctx.settings, sessions, stored, client)
        if held.via == "hf-oauth" and held.name == username:
            return self.shown_as(stored, held)
        sessions.revoke(stored)  # signed out, or another user now
        actor = auth.oauth_actor(self.ctx.settings, username,
                                 lambda: auth.hub_organisations(token.token) if token else [])
        issued = auth.open_session(sessions, actor, client) if actor.via == "hf-oauth" else None
        return self.shown_as(issued, actor)


def build(ctx: AppContext) -> Session:
    """Lay out the sign-in row; `Session.wire` connects it once the admin tabs exist."""
    policy = auth.policy(ctx.settings)
    state, stored = gr.State(None), gr.BrowserState("", storage_key=STORED_KEY, secret=STORED_SECRET)
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
                    sign_out = gr.Button("Sign out", size="sm", elem_id="sign-out")
            inputs, buttons = [user, password], (sign_in, sign_out)
        elif policy.mode == "hf-oauth":
            gr.LoginButton(scale=0)
    return Session(ctx, state, stored, status, inputs, buttons)
