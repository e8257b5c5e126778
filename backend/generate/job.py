"""The `generate` job kind: draw every missing candidate image of an annotation campaign, resumably.

The campaign layer says which (item, slot) images are missing; each image is
stored (content-addressed, `storage`) and recorded with its full record the
moment it exists, so a job that is stopped, cancelled or crashes loses at
most the images in flight (one batch), and a rerun (`jobs resume`, or the
Campaigns tab's Generate button) skips everything already there. A full disk stops the job
with a message saying which file, how many images are stored, and to free
space and resume.

Seeds: image ``slot`` of item ``item_id`` gets ``seeds.image_seed(seed,
item_id, slot)`` (a hash of the three numbers), so a resumed, re-ordered or
sharded run draws exactly the images one uninterrupted run would (batched:
the same seeds, pixels as their own batch made them, below); rerun with the
same ``seed`` (a plug-in generator's plan of an item's slots derives from its
item seed).

Gold items are always drawn by the generator their plug-in names
(`backend.plugins`, ``set_gold_items``), whatever the preset: their right
answers must be known, and only that generator knows what its images show.
Their seeds derive from the campaign's secret, not from ``seed``
(`backend.annotate.quality.secret_seed`): with the public code and the job's
parameters nobody can redraw them (and so hash them, or learn which slot is
right), while a rerun or a store restored from its backup draws them again alike.

Batching: ``batch_size`` images per pipeline call (default 1: each alone). A
batch is filled in order from the diffusers slots still missing, across
items, and stored image by image once drawn; each record names its batch
(`diffusion`'s note on batching says why regeneration needs it, and what it
costs). Plug-in generators (and so gold items) draw one image at a time.

Sharding: under ``torchrun`` rank r of W handles the items whose id % W == r
(a whole item per rank, so its slots share one plan); LOCAL_RANK picks the
GPU. Only rank 0 reports, so progress and the result's counts are rank 0's
share; shards are balanced by construction.
"""
from __future__ import annotations

import dataclasses
import errno
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from backend import plugins
from backend.core import env
from backend.core.paths import PathError, check_slug
from backend.generate.presets import DTYPE_CHOICES, Preset, get_preset, presets
from backend.jobs.kinds import check_known_keys, resume_command

if TYPE_CHECKING:
    from PIL import Image

    from backend.annotate.campaigns import ImageRequest
    from backend.generate.diffusion import LoadedPipeline
    from backend.jobs.reporter import Reporter

DEVICE_CHOICES = ("auto", "cpu", "cuda")
CUSTOM_STEPS, CUSTOM_GUIDANCE = 30, 5.0
MAX_BATCH_SIZE = 64  # images per pipeline call at most: one call holds every image's activations at once
REPORT_EVERY_S = 2.0  # progress rows at most this often (a renderer's images take a millisecond each)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class GenerateConfig:
    campaign: str = ""  # the campaign's name (a slug)
    preset: str = ""  # one of preset_choices(); blank: the campaign's generator setting
    model: str = ""  # preset "custom": a diffusers model id or a local save_pretrained folder
    steps: int | None = None  # None: the preset's
    guidance: float | None = None  # None: the preset's
    images_per_item: int | None = None  # None: the campaign's setting (which it must equal when given)
    batch_size: int = 1  # diffusers images per pipeline call (1..MAX_BATCH_SIZE); each keeps its own generator
    seed: int = 0  # base seed: image seeds are seeds.image_seed(seed, item_id, slot)
    p_none: float = 0.25  # a plug-in generator's share of items with no exact candidate (answer "none")
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    dtype: str = "auto"  # auto (fp16 on GPU, fp32 on CPU) | fp32 | fp16 | bf16
    db: str = ""  # the store holding the campaign; blank: the job's own store (else the db setting)
    data_dir: str = ""  # blank: the settings' data_dir; images go to <data_dir>/campaigns/<campaign>
    limit: int = 0  # at most this many items (0: all)
    assist_model: str = ""  # a model spec: score every candidate for the admin (backend.annotate.assist)

    @property
    def campaign_dir(self) -> Path:
        """The folder the job writes (one active generate job per campaign)."""
        from backend.annotate.campaigns import campaign_dir
        if self.data_dir:
            return campaign_dir(Path(self.data_dir), self.campaign)
        from backend.core.settings import get_settings
        return campaign_dir(get_settings().data_dir, self.campaign)

    def validate(self) -> GenerateConfig:
        problems = []
        try:
            check_slug(self.campaign, "campaign name")
        except PathError as error:
            problems.append(str(error))
        for name in ("preset", "model", "device", "dtype", "db", "data_dir", "assist_model"):
            if not isinstance(getattr(self, name), str):
                problems.append(f"{name} must be text, not {getattr(self, name)!r}")
        if self.preset not in preset_choices():
            problems.append(f"preset must be one of {', '.join(p for p in preset_choices() if p)} (or blank for "
                            f"the campaign's generator), not {self.preset!r}")
        if self.preset == "custom" and not str(self.model).strip():
            problems.append("preset 'custom' needs model: a diffusers model id or a local model folder")
        if self.preset != "custom" and str(self.model).strip():
            problems.append(f"model is only for preset 'custom' (preset {self.preset or 'blank'!r} fixes its model)")
        for name, low in (("steps", 1), ("images_per_item", 2)):
            value = getattr(self, name)
            if value is not None and (not _whole(value) or value < low):
                problems.append(f"{name} must be a whole number >= {low} (or null for the default), not {value!r}")
        if self.guidance is not None and (not _number(self.guidance) or self.guidance < 0):
            problems.append(f"guidance must be a number >= 0 (or null for the preset's), not {self.guidance!r}")
        if self.preset in presets() and presets()[self.preset].generator != "diffusers" and \
                (self.steps is not None or self.guidance is not None):
            problems.append(f"preset {self.preset!r} takes no steps or guidance (its generator is not diffusion)")
        if not _whole(self.batch_size) or not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            problems.append(f"batch_size (images per pipeline call) must be a whole number from 1 to "
                            f"{MAX_BATCH_SIZE}, not {self.batch_size!r}")
        elif self.batch_size > 1 and self.preset in presets() and presets()[self.preset].generator != "diffusers":
            problems.append(f"preset {self.preset!r} draws one image at a time (its generator is not diffusion): "
                            "leave batch_size at 1")
        if not _whole(self.seed) or self.seed < 0:
            problems.append(f"seed must be a whole number >= 0, not {self.seed!r}")
        if not _whole(self.limit) or self.limit < 0:
            problems.append(f"limit must be a whole number >= 0 (0: every item), not {self.limit!r}")
        if not _number(self.p_none) or not 0 <= self.p_none <= 1:
            problems.append(f"p_none must be a probability (0..1), not {self.p_none!r}")
        if isinstance(self.device, str) and self.device not in DEVICE_CHOICES and \
                not (self.device.startswith("cuda:") and self.device[5:].isdigit()):
            problems.append(f"device must be auto, cpu, cuda or cuda:N, not {self.device!r}")
        if self.dtype not in DTYPE_CHOICES:
            problems.append(f"dtype must be one of {', '.join(DTYPE_CHOICES)}, not {self.dtype!r}")
        if problems:
            raise ValueError("Invalid generate config: " + "; ".join(problems))
        if self.preset == "custom" and Path(self.model).expanduser().is_dir():
            self.model = str(Path(self.model).expanduser().resolve())  # jobs run from the project folder
        return self

    def preset_for(self, campaign_generator: str) -> Preset:
        """The recipe this job uses: the configured preset (else the campaign's), with steps/guidance applied."""
        name = self.preset or campaign_generator
        if name == "custom":
            return Preset.custom(self.model, self.steps or CUSTOM_STEPS,
                                 CUSTOM_GUIDANCE if self.guidance is None else self.guidance)
        preset = get_preset(name)
        return preset if preset.generator != "diffusers" else preset.with_settings(self.steps, self.guidance)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> GenerateConfig:
        check_known_keys(cls, values, "generate config")
        return cls(**values).validate()


def preset_choices() -> tuple[str, ...]:
    """What `preset` may be: "" (the campaign's own `generator` setting), every named preset, or "custom"."""
    return ("", *presets(), "custom")


def shard(requests: list, rank: int, world_size: int) -> list:
    """This rank's share: the requests whose item id % world_size == rank."""
    return [request for request in requests if request.item_id % world_size == rank]


def _store_path(config: GenerateConfig, reporter: Reporter) -> Path:
    """The campaign's store: the configured one, else the job's own (the runner's), else the db setting."""
    if config.db:
        return Path(config.db)
    if reporter.store is not None:
        return Path(reporter.store.path)
    from backend.core.settings import get_settings
    return get_settings().db


def run_job(config: GenerateConfig, reporter: Reporter) -> dict:
    """The `generate` kind's entry point: draw the missing images (mirrored to the Space backup when one is
    configured), then score them for the admin when `assist_model` is set."""
    from backend.annotate import mirror
    from backend.core.settings import get_settings

    backup = mirror.start(get_settings())
    try:
        result = draw_missing(config, reporter)
    finally:
        mirror.stop(backup)
    if config.assist_model and reporter.active:
        result["assist"] = _assist(config, reporter)
    return result


def _assist(config: GenerateConfig, reporter: Reporter) -> dict:
    from backend.annotate import assist
    from backend.models.loading import load_model

    reporter.update(message=f"scoring candidates with {config.assist_model}")
    loaded = load_model(config.assist_model, device=None if config.device == "auto" else config.device)
    store_path = _store_path(config, reporter)
    scored = assist.score_candidates(store_path, config.campaign, config.campaign_dir, loaded)
    reporter.log(f"scored {scored} candidates with {config.assist_model} (model assistance, admin only)")
    return assist.report(store_path, config.campaign)


def _remove_interrupted_writes(root: Path, reporter: Reporter) -> None:
    """Delete the temporary files of image writes a killed run left (older than this job's start)."""
    from backend.generate.storage import remove_partial

    job = reporter.store.get_job(reporter.job_id) if reporter.store is not None and reporter.job_id else {}
    removed = remove_partial(root, job.get("started_at") or time.time() - 60) if root.is_dir() else 0
    if removed:
        reporter.log(f"removed {removed} partial file(s) left by an interrupted write in {root}")


def _disk_full(error: OSError, root: Path, stored: int, wanted: int, reporter: Reporter) -> ValueError:
    """A full disk as the job's own message, which the job's status shows. The store stays consistent: an image
    gets its row only once both of its files are complete, and a failed write removes its temporary file."""
    return ValueError(f"no space left on device while writing {error.filename or root}; {stored} of {wanted} "
                      f"images stored; free space on the disk holding {root}, then resume: "
                      f"{resume_command(reporter.job_id)}")


def _plugin_drawer(generator: str):
    """The ``draw_slot`` function of a plug-in's generator; None for diffusers."""
    if generator == "diffusers":
        return None
    found = plugins.hooks().generators.get(generator)
    if found is None:
        raise ValueError(f"no installed plug-in provides the generator {generator!r}")
    return plugins.resolve(found.draw)


@dataclass
class _Keeper:
    """Stores each drawn image and its row the moment it exists, and reports progress at most every few seconds."""

    store_path: Path
    root: Path
    reporter: Reporter
    stored: int  # images there before this run
    wanted: int  # images the campaign needs in all
    todo: int  # images this rank draws
    done: int = 0
    last_report: float = 0.0
    drawing_since: float | None = None

    def start(self) -> None:
        self.drawing_since = self.drawing_since or time.monotonic()

    def keep(self, request: ImageRequest, slot: int, image: Image.Image, record: dict) -> None:
        from backend.annotate import campaigns
        from backend.generate.storage import store_image

        try:
            sha256, path, display_path = store_image(self.root, image)
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise _disk_full(error, self.root, self.stored + self.done, self.wanted, self.reporter) from error
        campaigns.add_candidate(self.store_path, request.item_id, slot,
                                {**record, "sha256": sha256, "path": path, "display_path": display_path})
        self.done += 1
        if time.monotonic() - self.last_report >= REPORT_EVERY_S or self.done == self.todo:
            self.last_report = time.monotonic()
            rate = self.done / max(self.last_report - (self.drawing_since or 0.0), 1e-9)
            self.reporter.progress(self.done / self.todo,
                                   f"{self.done}/{self.todo} images ({rate:.2f}/s), item {request.item_id}")


def _draw_batch(loaded: LoadedPipeline | None, batch: list[tuple[ImageRequest, int, int]], keeper: _Keeper) -> None:
    """Draw a batch of diffusers slots in one pipeline call, keep each image, and empty the batch."""
    from backend.generate.diffusion import generate_batch

    assert loaded is not None  # loaded before the first slot diffusers draws
    drawn = generate_batch(loaded, [request.negative_caption for request, _, _ in batch], [seed for *_, seed in batch])
    for (request, slot, _), (image, record) in zip(batch, drawn):
        keeper.keep(request, slot, image, {**record, "defect": None, "shows_caption": None})
    batch.clear()


def draw_missing(config: GenerateConfig, reporter: Reporter) -> dict:
    """Fill the campaign's missing candidate slots; return the counts."""
    from backend.annotate import campaigns, quality, report
    from backend.generate.seeds import image_seed, item_seed

    started = time.monotonic()
    store_path = _store_path(config, reporter)
    campaign = campaigns.get(store_path, config.campaign)
    per_item = campaign["config"].images_per_item
    if config.images_per_item is not None and config.images_per_item != per_item:
        raise ValueError(f"campaign {config.campaign!r} has {per_item} images per item, not "
                         f"{config.images_per_item}; change the campaign's setting or leave images_per_item blank")
    preset = config.preset_for(campaign["config"].generator)
    rank, world = env.rank(), env.world_size()
    requests = campaigns.image_requests(store_path, config.campaign, per_item)
    status = report.status(store_path, config.campaign)
    wanted = per_item * (sum(status["stages"].values()) + status["gold_items"])
    stored = wanted - sum(len(request.missing_slots) for request in requests)
    mine = shard(requests[:config.limit] if config.limit else requests, rank, world)
    keeper = _Keeper(store_path, config.campaign_dir, reporter, stored, wanted,
                     sum(len(request.missing_slots) for request in mine))
    if rank == 0:
        _remove_interrupted_writes(keeper.root, reporter)
    reporter.log(f"campaign {config.campaign}: {stored} images stored, {keeper.todo} to draw on rank {rank} of "
                 f"{world}; preset {preset.name}: {preset.summary}")
    if preset.generator == "diffusers":
        reporter.log(f"licence: {preset.licence} {preset.licence_url}".strip())

    gold_seed = quality.stored_secret_seed(store_path, campaign["id"], "gold-images")  # never logged
    loaded: LoadedPipeline | None = None
    batch: list[tuple[ImageRequest, int, int]] = []  # diffusers slots to draw in one call: (request, slot, seed)
    for request in mine:
        drawer = _plugin_drawer(plugins.hooks().gold_generator if request.gold else preset.generator)
        base_seed = gold_seed if request.gold else config.seed
        if drawer is None and loaded is None:
            from backend.generate.diffusion import load_pipeline
            reporter.update(message=f"loading {preset.model_id}")  # a status line without skewing the ETA
            loaded = load_pipeline(preset, device=config.device, dtype=config.dtype)
            reporter.log(f"loaded {preset.model_id} (revision {loaded.revision}) on {loaded.device}; "
                         f"{config.batch_size} image(s) per pipeline call")
        for slot in request.missing_slots:
            keeper.start()
            seed = image_seed(base_seed, request.item_id, slot)
            if drawer is not None:
                keeper.keep(request, slot, *drawer(request.caption, request.negative_caption,
                                                   item_seed(base_seed, request.item_id), per_item, slot, seed,
                                                   config.p_none))
                continue
            batch.append((request, slot, seed))
            if len(batch) == config.batch_size:
                _draw_batch(loaded, batch, keeper)
    if batch:
        _draw_batch(loaded, batch, keeper)
    seconds, done = time.monotonic() - started, keeper.done
    left = sum(len(r.missing_slots) for r in campaigns.image_requests(store_path, config.campaign, per_item))
    result = {"campaign": config.campaign, "preset": preset.name, "model": preset.model_id,
              "images_generated": done, "images_skipped": stored, "images_missing_after": left,
              "seconds": round(seconds, 2), "images_per_second": round(done / seconds, 3) if seconds > 0 else None,
              "rank": rank, "world_size": world, "seed": config.seed}
    if loaded is not None:
        result.update(revision=loaded.revision, device=loaded.device, dtype=str(loaded.dtype).removeprefix("torch."),
                      batch_size=config.batch_size)
    reporter.log(f"generated {done} images in {seconds:.1f}s; {stored} were already there, {left} still missing")
    return result
