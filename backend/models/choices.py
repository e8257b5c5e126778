"""Which models the app offers, which it picks by default, and which of them are on this machine now.

The default is the first well-known pretrained model whose weights are already
in the local Hugging Face cache (no download at start-up), else the first model a
plug-in ships (the built-in world's, in the repo), so an offline machine opens with a
working Probe tab.

The list also offers the papers' own checkpoints (`backend/models/catalog.json`),
each labelled with its availability, read from disk only (no network call): on
disk means converted or raw in the models folder, or in the Hugging Face cache.
One that is not reads e.g. "NegCLIP (ARO) — not downloaded: needs network";
loading it then downloads it where there is network, and otherwise says what
was tried and how to get it.

Models made here join the list as they appear, without restarting the app:
finished training runs' checkpoints (read from the store) and exported patched
models (read from the models folder). `offered` is the one list every tab's
model dropdowns show (Probe, Benchmarks, Train's base model, both of the Sweep's).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from backend import plugins
from backend.models import catalog
from backend.models.catalog import CATALOG_PREFIX
from backend.models.spec import CONFIG_NAME, ModelLoadError, parse_spec

if TYPE_CHECKING:
    from backend.core.store import Store

PRETRAINED_CHOICES = [
    "ViT-B-32-quickgelu:openai",
    "ViT-B-32:laion2b_s34b_b79k",
    "ViT-L-14-quickgelu:openai",
]
# The Hugging Face repo of each offered tag's weights, as open_clip 3.3.0's pretrained table gives it (a test keeps
# them equal): the model list is built when the app starts, and importing open_clip to read them costs seconds.
TAG_REPOS = {
    "ViT-B-32-quickgelu:openai": "timm/vit_base_patch32_clip_224.openai",
    "ViT-B-32:laion2b_s34b_b79k": "laion/CLIP-ViT-B-32-laion2B-s34B-b79K",
    "ViT-L-14-quickgelu:openai": "timm/vit_large_patch14_clip_224.openai",
}
_WEIGHT_FILES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")
NEEDS_NETWORK = " — not downloaded: needs network"
LOCATION_UNKNOWN = " — not on disk: location unknown"
PATCHED_FOLDER = "patched"  # under the models folder: where `backend.patching.sweep.export_patched` writes


@dataclass(frozen=True)
class ModelChoice:
    """One model list item: its label (availability included), its spec, and what is known about its files."""

    label: str
    spec: str
    available: bool
    detail: str  # where the weights are, or what is missing and how to get it


def tag_repo(spec: str) -> str:
    """The Hugging Face repo holding a pretrained tag's weights ('' when open_clip names none)."""
    if spec in TAG_REPOS:
        return TAG_REPOS[spec]
    import open_clip

    parsed = parse_spec(spec)
    architecture, tag = parsed.required("architecture"), parsed.required("pretrained")
    cfg = open_clip.get_pretrained_cfg(architecture.replace("-quickgelu", ""), tag) or {}
    return (cfg.get("hf_hub") or "").strip("/")


def is_cached(spec: str) -> bool:
    """True when a pretrained tag's weights are already on disk (checked without any network call)."""
    from huggingface_hub import try_to_load_from_cache

    if parse_spec(spec).source != "tag":
        return False
    repo = tag_repo(spec)
    return bool(repo) and any(isinstance(try_to_load_from_cache(repo, name), str) for name in _WEIGHT_FILES)


def builtin_choices() -> list[str]:
    """The models plug-ins ship whose checkpoint folder is on disk (the built-in world's, `backend.plugins`)."""
    return [alias for alias, model in plugins.hooks().models.items() if (model.folder / CONFIG_NAME).is_file()]


def model_choices() -> list[str]:
    """Every spec the model list offers: the built-in model, well-known pretrained tags, then the catalog."""
    specs = [*builtin_choices(), *PRETRAINED_CHOICES, *(e.model_spec for e in catalog.ENTRIES.values())]
    return list(dict.fromkeys(specs))


def default_models() -> list[str]:
    cached = [spec for spec in PRETRAINED_CHOICES if is_cached(spec)]
    return cached[:1] or builtin_choices()[:1]


def _entry_for(spec: str) -> catalog.CatalogEntry | None:
    """The catalog entry a spec names: ``catalog:NAME``, or the open_clip tag of a baseline entry."""
    if spec.startswith(CATALOG_PREFIX):
        return catalog.ENTRIES.get(spec[len(CATALOG_PREFIX):])
    return next((e for e in catalog.ENTRIES.values() if e.kind == "tag" and e.spec == spec), None)


def _spec_on_disk(spec: str) -> bool:
    """A patch base: a pretrained tag in the Hugging Face cache, or an existing local checkpoint file."""
    parsed = parse_spec(spec)
    return is_cached(spec) if parsed.source == "tag" else Path(parsed.pretrained or parsed.location or "").exists()


def _describe_entry(entry: catalog.CatalogEntry, models_dir: Path) -> ModelChoice:
    if entry.kind == "tag":
        tag_spec = entry.required("spec")
        cached = is_cached(tag_spec)
        return ModelChoice(entry.label + ("" if cached else NEEDS_NETWORK), tag_spec, cached,
                           "in the Hugging Face cache" if cached else f"open_clip downloads {tag_spec} on first use")
    spec = entry.model_spec
    raw = catalog.find_raw(entry, models_dir)
    if catalog.is_ready(entry, models_dir):
        return ModelChoice(entry.label, spec, True, f"converted copy in {catalog.ready_dir(entry, models_dir)}")
    base = (entry.patch or {}).get("base")
    if raw is not None and (base is None or _spec_on_disk(base)):
        return ModelChoice(entry.label, spec, True, f"{raw} (checked and converted on first use)")
    missing = f"the base weights {base}" if raw is not None else entry.filename
    suffix = LOCATION_UNKNOWN if entry.kind == "manual" else NEEDS_NETWORK
    return ModelChoice(entry.label + suffix, spec, False,
                       f"{missing} not on disk; {catalog.how_to_get(entry, models_dir)}")


def describe(spec: str, models_dir: Path | None = None) -> ModelChoice:
    """The model list item for any spec: catalog entries by name and availability, tags by cache state."""
    models_dir = Path(models_dir or catalog.default_models_dir())
    entry = _entry_for(spec)
    if entry is not None:
        return _describe_entry(entry, models_dir)
    try:
        parsed = parse_spec(spec)
    except ModelLoadError as error:
        return ModelChoice(spec, spec, False, str(error))
    if parsed.source == "tag" and not is_cached(spec):
        return ModelChoice(spec + NEEDS_NETWORK, spec, False, f"open_clip downloads {spec} on first use")
    return ModelChoice(spec, spec, True, "")


def catalog_choices(models_dir: Path | None = None) -> list[ModelChoice]:
    """Every catalog entry as a model list item, with what is on disk now."""
    return [describe(entry.model_spec, models_dir) for entry in catalog.ENTRIES.values()]


def labelled_choices(specs: list[str], models_dir: Path | None = None) -> list[tuple[str, str]]:
    """(label, spec) pairs for a dropdown, availability read afresh (a refresh shows new downloads)."""
    return [(choice.label, choice.spec) for choice in (describe(spec, models_dir) for spec in specs)]


def _on_disk_rule(entry: catalog.CatalogEntry) -> str:
    """When the model list shows an entry as available, in the README's words."""
    if entry.kind == "tag":
        return "weights in the Hugging Face cache"
    rule = f"`{entry.filename}` in `<models_dir>/catalog/downloads/` or `<models_dir>/`"
    rule += ", or in the Hugging Face cache" if entry.kind == "hub" else ""
    rule += f", or converted in `<models_dir>/catalog/{entry.name}/`"
    if entry.patch:
        rule += f"; and the base `{entry.patch['base']}` in the Hugging Face cache"
    return rule


def catalog_table() -> str:
    """The README's Markdown table of the catalog, generated from the same data the app reads."""
    rows = ["| model (spec) | paper | source | architecture / activation | SHA-256 | on disk when | found at |",
            "|---|---|---|---|---|---|---|"]
    for entry in catalog.ENTRIES.values():
        source = {"tag": f"open_clip tag `{entry.spec}`", "url": entry.url,
                  "hub": f"hub `{entry.hub_repo}` / `{entry.filename}`"}.get(entry.kind, "**location unknown**")
        patch = f", patched into `{entry.patch['base']}` at {entry.patch['alpha']}" if entry.patch else ""
        sha = ("open_clip's" if entry.kind == "tag" else "published" if entry.sha256 else "recorded at first copy")
        found = " ".join(f"[{index + 1}]({url})" for index, url in enumerate(entry.found_at))
        rows.append(f"| {entry.label} (`{entry.model_spec}`) | {entry.paper} | {source}{patch} | "
                    f"{entry.architecture} / {entry.activation} | {sha} | {_on_disk_rule(entry)} | {found} |")
    return "\n".join(rows)


def trained_models(store: Store) -> list[tuple[str, str]]:
    """(label, model spec) of finished train runs' best (else last) checkpoints, newest first.

    The label is the run's name, so two runs' checkpoints never show up as "best" and "best'".
    """
    found: dict[str, str] = {}
    for job in store.list_jobs("train", limit=None):
        result = job.get("result")
        if job["status"] != "done" or not isinstance(result, dict):
            continue
        for key in ("best", "last"):
            if result.get(key) and Path(result[key]).is_dir():
                found.setdefault(f"local-dir:{result[key]}", f"{job['name']} ({key})")
                break
    return [(label, spec) for spec, label in found.items()]


def patched_models(models_dir: Path | str) -> list[tuple[str, str]]:
    """(label, spec) of every exported patched model."""
    folder = Path(models_dir) / PATCHED_FOLDER
    found = []
    for config_path in sorted(folder.glob("*/open_clip_config.json")):
        if not config_path.parent.is_symlink():  # a version folder behind a checkpoint's link (see save_checkpoint)
            continue
        origin = json.loads(config_path.read_text()).get("patched_from", {})
        label = f"{config_path.parent.name} (patched, alpha {origin.get('alpha', '?')})"
        found.append((label, f"local-dir:{config_path.parent}"))
    return found


def made_here(store: Store, models_dir: Path | str) -> list[tuple[str, str]]:
    """The models this lab made: finished runs' checkpoints, then exported patched models (a cheap read: one
    query and one folder listing, so views can poll it to know when their lists changed)."""
    return [*trained_models(store), *patched_models(models_dir)]


def model_names(store: Store, models_dir: Path | str) -> dict[str, str]:
    """Spec -> name of every model made here: how the model lists, the leaderboard (the tab, its CSV and chart,
    ``python -m backend leaderboard``) and the failure browser name a run's checkpoint or a patched model; the
    newest run wins a shared spec, as in the model lists."""
    names: dict[str, str] = {}
    for label, spec in made_here(store, models_dir):
        names.setdefault(spec, label)
    return names


def offered(specs: list[str], store: Store, models_dir: Path | str) -> list[tuple[str, str]]:
    """(label, spec) pairs of every model list as of now: `specs` (the built-in model, pretrained tags, the catalog)
    labelled with whether they are on disk, then the models made here."""
    labels = {spec: label for label, spec in labelled_choices(specs, Path(models_dir))}
    for label, spec in made_here(store, models_dir):
        labels.setdefault(spec, label)
    return [(label, spec) for spec, label in labels.items()]
