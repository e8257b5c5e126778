"""What the tabs share: the settings, one model registry, one embedding cache, where probes run, the model list,
the store, and the guards on what visitors may spend (sign-in sessions, rate limits, the probe's line)."""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr
from gradio import processing_utils
from gradio import utils as gradio_utils

from backend.annotate.images import TaskImages
from backend.core import auth, limits
from backend.core.credentials import Credentials
from backend.core.ratelimit import RateLimit, Slots, client_key
from backend.core.settings import Settings
from backend.core.store import Store
from backend.models import choices
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe.runner import InProcess, InWorker

LOOPBACK = ("127.0.0.1", "::1", "localhost")
BUSY = ("The server is busy with other probes: try again in a minute (probes run one at a time, so that "
        "annotators working here keep a quick page).")


@dataclass
class Guards:
    """One per app: admin sessions (`backend.core.credentials`), failed sign-ins per address and from everyone,
    visitors' probes per address, and the probes' line (`backend.core.ratelimit`; numbers in
    `backend.core.limits`)."""

    sessions: Credentials = field(default_factory=auth.admin_sessions)
    sign_in_failures: RateLimit = field(
        default_factory=lambda: RateLimit(limits.SIGN_IN_FAILURES, limits.SIGN_IN_WINDOW_S))
    sign_in_failures_everyone: RateLimit = field(
        default_factory=lambda: RateLimit(limits.SIGN_IN_FAILURES_EVERYONE, limits.SIGN_IN_WINDOW_S))
    guest_probes: RateLimit = field(default_factory=lambda: RateLimit(limits.GUEST_PROBES_PER_MINUTE, 60))
    probe_line: Slots = field(default_factory=lambda: Slots(limits.PROBES_RUNNING, limits.PROBES_WAITING, BUSY,
                                                            spacing_s=limits.PROBE_SPACING_S))
    # The queue's event ids (fn_index) of the Probe's handlers (the Probe tab adds them): `ui.limits.ProbeGate`
    # refuses a visitor who spent their probes before these events are queued.
    probe_events: set[int] = field(default_factory=set)
    # Annotators' session starts and answers per client (`ui.tabs.annotate`). A loopback client is everyone on
    # this machine, or everyone behind a local reverse proxy: not limited, unless `limit_loopback` (tests).
    annotate_joins: RateLimit = field(
        default_factory=lambda: RateLimit(limits.ANNOTATE_JOINS_PER_CLIENT, limits.ANNOTATE_JOIN_WINDOW_S))
    annotate_answers: RateLimit = field(default_factory=lambda: RateLimit(limits.ANNOTATE_ANSWERS_PER_MINUTE, 60))
    limit_loopback: bool = False


@dataclass
class AppContext:
    settings: Settings
    registry: ModelRegistry
    cache: EmbeddingCache
    model_choices: list[str]
    default_models: list[str]
    store: Store
    examples: list[list] = field(default_factory=list)  # [image path, caption]
    guards: Guards = field(default_factory=Guards)
    # Where probes run (`backend.probe.runner`): here, with `registry` and `cache`, or (`probe_worker`, as `app.py`
    # runs them) in a worker process of their own, whose registry is made like `registry` (which stays empty).
    probe_worker: bool = False
    probes: InProcess | InWorker = field(init=False)
    task_images: TaskImages = field(init=False)  # the names of the images annotators are shown (`ui.gate`)

    def __post_init__(self) -> None:
        self.probes = InWorker(self.registry) if self.probe_worker else InProcess(self.registry, self.cache)
        self.task_images = TaskImages(self.store.path)

    def current_model_choices(self) -> list[tuple[str, str]]:
        """(label, spec) pairs as of now (`backend.models.choices.offered`): every tab's model lists."""
        return choices.offered(self.model_choices, self.store, self.settings.models_dir)

    def made_here(self) -> list[tuple[str, str]]:
        """The models made here (finished runs, exported patched models): what views poll to refresh their lists."""
        return choices.made_here(self.store, self.settings.models_dir)

    def run_names(self) -> dict[str, str]:
        """Spec -> name of every finished training run's checkpoint and exported patched model: how the model
        lists, the leaderboard, its CSV and its chart name them."""
        return choices.model_names(self.store, self.settings.models_dir)

    def offered_specs(self) -> list[str]:
        """Every spec the model list offers (some may still need a download)."""
        return [spec for _, spec in self.current_model_choices()]

    def guest_models(self) -> list[str]:
        """What visitors who are not signed in may probe: the admin's list (the guest_models setting), else the
        listed models whose weights are on this machine now (no download, and a model an admin put there)."""
        if self.settings.guest_models:
            return list(self.settings.guest_models)
        local = [spec for _, spec in self.made_here()]
        listed = [choice.spec for choice in (choices.describe(spec, self.settings.models_dir)
                                             for spec in self.model_choices) if choice.available]
        return list(dict.fromkeys([*listed, *local]))

    def client(self, request: gr.Request | None) -> str | None:
        """Which client a request comes from (`backend.core.ratelimit.client_key`); None without a request."""
        if request is None or getattr(request, "client", None) is None:
            return None
        return client_key(request.client.host, dict(request.headers), behind_proxy=self.settings.on_space)

    def annotator_client(self, request: gr.Request | None) -> str:
        """The client whose annotation the per-client limits count; "" (not limited) without a request, or for a
        loopback client unless the guards say otherwise."""
        client = self.client(request) or ""
        if client in LOOPBACK and not self.guards.limit_loopback:
            return ""
        return client


def offer(path: str | Path) -> str:
    """A file for a download output: a copy in Gradio's cache (a folder named by the content's hash), which the
    page fetches and Gradio deletes after `backend.core.limits.CACHE_MAX_AGE_S`. The downloads folder itself is
    never served (`app.served_folders`): anyone could fetch a database backup or a campaign's answers there by
    guessing its name."""
    return processing_utils.save_file_to_cache(path, cache_dir=gradio_utils.get_upload_folder())


def offer_new(name: str, write: Callable[[Path], object]) -> str:
    """A file made for one download (a probe's results, the leaderboard): `write(path)` fills it in a temporary
    folder, which is removed once the file is in Gradio's cache (`offer`): a visitor's download leaves nothing
    behind on the server."""
    with tempfile.TemporaryDirectory(prefix="download-") as folder:
        path = Path(folder) / name
        write(path)
        return offer(path)
