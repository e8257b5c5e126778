"""Compositionality Lab: the composition root. Builds the Blocks app from `ui/` and launches it."""
from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from pathlib import Path

import gradio as gr
from gradio import utils as gradio_utils
from starlette.middleware import Middleware

from backend import jobs, plugins
from backend.annotate import mirror, prolific_poll
from backend.core import auth
from backend.core.gpu import on_zero_gpu
from backend.core.limits import CACHE_CHECK_S, CACHE_MAX_AGE_S, MAX_UPLOAD_BYTES
from backend.core.settings import SHIPPED_MODELS, Settings, get_settings
from backend.core.store import Store, StoreBusy, StoreDamaged, check_integrity, move_aside
from backend.models import choices
from backend.models.registry import EmbeddingCache, ModelRegistry
from ui import gate, limits, refusals, session, session_state, signatures, study
from ui.context import AppContext
from ui.tabs import annotate, annotate_text, benchmarks, campaigns, probe, sweep, train

# Gradio summarises up to 10,000 past events with pandas after EVERY event by default (5-13 ms each, growing):
# the largest fixed cost of an annotator's answer. Every 1000 events is plenty for its monitoring page. Read
# when a queue is created, so setting it here (before any app is built) is in time.
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")

# Every CACHE_CHECK_S, Gradio deletes the files its cache got (uploads, downloads handed out, campaign images
# shown) more than CACHE_MAX_AGE_S ago (`ui.limits.UploadQuota` counts uploads over that time).
CLEAN_CACHE = (CACHE_CHECK_S, CACHE_MAX_AGE_S)
log = logging.getLogger(__name__)
HEADER = ("# Compositionality Lab\nProbe CLIP-like models with caption perturbations: which hard negatives does a "
          "model wrongly prefer, which meaning-preserving rewrites does it wrongly reject?")


def default_context(settings: Settings | None = None) -> AppContext:
    """Wire the shared backend objects from the settings; local model paths are confined to the allowed roots."""
    settings = settings or get_settings()
    store = checked_store(settings)
    mirror.start(settings)  # on a Space: restore campaigns from the backup repo, then mirror them to it
    jobs.reconcile(store, settings)  # runs whose process died while the app was down are settled now
    registry = ModelRegistry(max_models=3, allowed_roots=list(settings.allowed_roots), models_dir=settings.models_dir,
                             max_parameters=settings.max_model_parameters)
    # Probes run in a worker process of their own, so the crowd's handlers keep their share of the CPU; on ZeroGPU
    # in this one, whose GPU functions `spaces` runs (`backend.probe.runner`).
    return AppContext(settings=settings, registry=registry,
                      cache=EmbeddingCache(), model_choices=choices.model_choices(),
                      default_models=choices.default_models(), store=store,
                      examples=plugin_examples(settings.workspace / "examples"), probe_worker=not on_zero_gpu())


def checked_store(settings: Settings) -> Store:
    """The store, once SQLite's quick_check finds it sound. A damaged one is refused with what to do (a traceback
    or a half-working app before); on a Space whose campaigns are backed up, it is moved aside instead and the app
    starts on a new store, which `mirror.start` fills from the backup (a Space that refused to start would only
    restart, again and again)."""
    try:
        check_integrity(settings.db)
    except StoreBusy as error:
        raise SystemExit(f"error: {error}") from None
    except StoreDamaged as error:
        if not (settings.on_space and settings.backup_repo and settings.hf_token):
            raise SystemExit(f"error: {error}") from None
        log.error("%s Moved it to %s; the campaigns come back from %s.", error, move_aside(settings.db),
                  settings.backup_repo)
    return Store(settings.db)


def plugin_examples(folder: Path) -> list[list[str]]:
    """The Probe tab's examples: every plug-in's, written under `folder` (`backend.plugins`, ``add_examples``)."""
    return [row for build in plugins.hooks().examples for row in plugins.resolve(build)(folder)]


def build_app(ctx: AppContext) -> gr.Blocks:
    """The whole app. Admin tabs exist only where an admin is possible (see `backend.core.auth.policy`)."""
    session_state.install()  # a new session's block configs from the app's template (ui/session_state.py)
    signatures.install()  # Gradio's updates without re-deriving signatures (ui/signatures.py)
    if on_zero_gpu():  # ZeroGPU counts the GPU functions when the app is built: define them (its auto-wrap off)
        from backend.models import encoder  # noqa: F401  (the Probe's `embed_on_device`)
    with gr.Blocks(title="Compositionality Lab", delete_cache=CLEAN_CACHE) as demo:
        study.hide_navbar()  # the study page is a route of this app, reached only by its link
        gr.Markdown(HEADER)
        visitor = session.build(ctx)
        banner = _backup_banner(ctx)
        with gr.Tabs() as tabs:
            with gr.Tab("Probe", id="probe") as probe_tab:
                probe_inputs = probe.build(ctx, visitor)
            with gr.Tab("Benchmarks", id="benchmarks") as benchmarks_tab:
                benchmark_models = benchmarks.build(ctx, visitor, probe_inputs, tabs)
            with gr.Tab("Annotate", id="annotate"):
                annotate.build(ctx).wire(demo)
            admin_tabs = []
            if auth.policy(ctx.settings).admin_possible:
                admin_tabs = _admin_tabs(ctx, visitor, tabs)
        # Models that joined since the page opened (finished runs, exported patched models) show up on return.
        for tab, models in ((probe_tab, probe_inputs["models"]), (benchmarks_tab, benchmark_models)):
            if models is not None:
                tab.select(lambda: gr.Dropdown(choices=ctx.current_model_choices()), None, models,
                           api_visibility="private", queue=False)
        visitor.wire(demo, [*banner, *admin_tabs])
    study.add_route(ctx, demo)
    refusals.keep_shown(demo)
    return demo


def _backup_banner(ctx: AppContext) -> list:
    """Under the header, for admins only (shown and hidden with the admin tabs): campaign data that a restart
    would lose (on a Space without HF_TOKEN, or a backup that could not start). Empty when all is well."""
    text = mirror.warning(ctx.settings)
    if not text or not auth.policy(ctx.settings).admin_possible:
        return []
    return [gr.Markdown(f"⚠️ {text}", visible=auth.default_actor(ctx.settings).is_admin, elem_id="backup-warning")]


def _admin_tabs(ctx: AppContext, visitor: session.Session, app_tabs: gr.Tabs) -> list:
    """Train, Sweep and Campaigns: shown to admins (hidden is a courtesy: their endpoints refuse anyone else). The
    Campaigns tab's progress refreshes itself only while that tab is shown (`app_tabs` switches it)."""
    shown = auth.default_actor(ctx.settings).is_admin
    tabs = []
    for name, module in (("Train", train), ("Sweep", sweep), ("Campaigns", campaigns)):
        with gr.Tab(name, id=name.lower(), visible=shown) as tab:
            live = module.build(ctx, visitor)
        if live is not None:
            live.follow(app_tabs, name)
        tabs.append(tab)
    return tabs


def build_annotate_app(ctx: AppContext) -> gr.Blocks:
    """The annotation flow alone (and the study page at /study): no other tab, and no admin endpoint at all."""
    session_state.install()
    signatures.install()
    with gr.Blocks(title="Annotation", delete_cache=CLEAN_CACHE) as demo:
        study.hide_navbar()
        annotate.build(ctx).wire(demo)
    study.add_route(ctx, demo)
    refusals.keep_shown(demo)
    return demo


def launch_options(ctx: AppContext, uploads: bool = True) -> dict:
    """What `launch` needs besides the app: address, port, theme, the keyboard script, the folders files may
    be served from (and those never), the largest upload (Gradio refuses a bigger file with HTTP 413 before it
    is stored) and the request guards (`middleware`). `uploads` False: the upload route is closed (the
    annotation-only app)."""
    return {"server_name": ctx.settings.server_name, "server_port": ctx.settings.server_port,
            "theme": gr.themes.Soft(), "head": annotate_text.KEYBOARD_SCRIPT,
            "allowed_paths": [str(path) for path in served_folders(ctx.settings)],
            "blocked_paths": [str(path) for path in never_served(ctx.settings)],
            "max_file_size": MAX_UPLOAD_BYTES,
            "footer_links": ["gradio", "settings"],  # no "Use via API" under a participant's page
            "app_kwargs": {"middleware": middleware(ctx, uploads)}}


def middleware(ctx: AppContext, uploads: bool = True) -> list[Middleware]:
    """The guards in front of Gradio, outermost first: the Host allow-list (open-local policy only, `ui.gate`),
    the body cap, the probes' door (before the upload quota: a refused upload spends none of it) and the
    upload quota (`ui.limits`), the public files and the task images' route (`ui.gate`)."""
    settings = ctx.settings
    guards = []
    if auth.policy(settings).mode == "open-local":
        guards.append(Middleware(gate.HostCheck))
    return [*guards, Middleware(limits.BodyLimit),
            Middleware(limits.ProbeGate, allowance=ctx.guards.guest_probes, line=ctx.guards.probe_line,
                       probe_events=ctx.guards.probe_events, behind_proxy=settings.on_space),
            Middleware(limits.UploadQuota, enabled=uploads, behind_proxy=settings.on_space),
            Middleware(gate.PublicFiles, cache=Path(gradio_utils.get_upload_folder()),
                       public_images=[settings.workspace / "examples"], private=[mirror.tables_folder(settings)]),
            task_image_route(ctx)]


def task_image_route(ctx: AppContext) -> Middleware:
    """The route of the images annotators see (`ui.gate.TaskImageRoute`): their task pages need it."""
    return Middleware(gate.TaskImageRoute, images=ctx.task_images)


def served_folders(settings: Settings) -> list[Path]:
    """Folders Gradio may read files from (Gradio's ``allowed_paths``): examples, campaign images (data_dir) and the
    extra roots an admin allowed (where a campaign's original images may live). Anyone may fetch by path only the
    examples (`ui.gate.PublicFiles`): campaign images reach admins' views through Gradio's cache and annotators
    through the task images' route. Never the workspace itself (it holds the store), runs and models, nor
    downloads (database backups, campaign exports: handlers hand their files out through Gradio's cache
    instead, `ui.context.offer`)."""
    own = {settings.workspace, SHIPPED_MODELS, settings.runs_dir, settings.models_dir, settings.downloads_dir}
    extra = [root for root in settings.allowed_roots if root not in own]
    return list(dict.fromkeys([settings.workspace / "examples", settings.data_dir, *extra]))


def never_served(settings: Settings) -> list[Path]:
    """Refused even where they lie inside a served folder (an admin's allowed root that holds the workspace):
    the store and its SQLite side files, runs, models, downloads, the campaign backup's tables (unless configured
    around a served folder, which Gradio would then refuse to show as well)."""
    store = [settings.db.with_name(settings.db.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    served = [folder.resolve() for folder in served_folders(settings)]
    private = [settings.runs_dir, settings.models_dir, settings.downloads_dir, mirror.tables_folder(settings)]
    return [path for path in [*store, *private]
            if not any(folder.is_relative_to(path.resolve()) for folder in served)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Compositionality Lab")
    parser.add_argument("--mode", choices=["full", "annotate"], default="full",
                        help="annotate: serve only the annotation flow (what a Prolific study link points to)")
    args = parser.parse_args(argv)
    ctx = default_context()
    flush_backup_on_sigterm()
    prolific_poll.start(ctx.settings)  # with a Prolific token: running studies synced every prolific_poll_s
    if args.mode == "annotate":
        build_annotate_app(ctx).queue(default_concurrency_limit=2).launch(**launch_options(ctx, uploads=False))
        return
    demo = build_app(ctx).queue(default_concurrency_limit=2)
    demo.launch(prevent_thread_lock=True, **launch_options(ctx))
    # Once the server answers: the perturbation engine (spaCy, WordNet) and the model code (torch, open_clip)
    # load in the background (in the probes' worker, which starts now), so the first probe does not wait for them.
    # Started before the launch, they held the interpreter while the app was built and doubled the time to the
    # first page.
    threading.Thread(target=ctx.probes.warm_up, daemon=True).start()
    demo.block_thread()


def flush_backup_on_sigterm() -> None:
    """On SIGTERM (what a Space gets when it restarts, sleeps or is rebuilt), stop campaign writes, commit the
    campaign backup, then exit. Python's default for SIGTERM ends the process at once, and the backup commits
    only every few minutes: every answer acknowledged since the last commit was lost."""
    def shut_down(signum: int, frame: object) -> None:
        mirror.shutdown()
        log.info("campaign backup committed; exiting on SIGTERM")
        logging.shutdown()
        os._exit(0)  # the server's threads hold no state worth waiting for: SQLite has every committed row
    signal.signal(signal.SIGTERM, shut_down)


if __name__ == "__main__":
    main()
