"""The papers' own checkpoints, as data: where each lives, and how ``catalog:NAME`` becomes a loadable folder.

Entries come from `catalog.json`: a name, the paper, the source (an open_clip
tag, a URL, a Hugging Face hub file, or none known), the SHA-256 where one is
published, the architecture and the activation it was trained with. `prepare`
resolves a ``catalog:NAME`` spec:
1. the raw file is looked for in ``<models_dir>/catalog/downloads/``, in
   ``<models_dir>/`` (where a user may drop it) and, for hub files, in the Hugging
   Face cache; only if none has it is it downloaded, and only from the entry's
   own URL or hub repo, into ``<models_dir>/catalog/downloads/``;
2. its SHA-256 must match the catalog's or, where none is published, the one
   recorded when the first copy was converted (``<models_dir>/catalog/checksums.json``);
3. it is read weights-only, unwrapped, its loralib LoRA factors merged (DAC, TSVLC), patched into a
   base model if the entry says so (CLoVe), and written with its activation to ``<models_dir>/catalog/<name>/``,
   which later loads re-use after a hash check (see `backend.models.checkpoint_files`).
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from backend.core import env, paths
from backend.core.errors import first_line
from backend.core.files import sha256_of
from backend.core.settings import get_settings
from backend.models.checkpoint_files import (
    CatalogError,
    ChecksumBook,
    build_model,
    check_sha256,
    download_hub,
    download_url,
    is_intact,
    read_merged_state_dict,
    write_open_clip_dir,
)
from backend.patching.interpolation import PatchingError, interpolate

if TYPE_CHECKING:
    import torch

CATALOG_PREFIX = "catalog:"

DATA_FILE = Path(__file__).with_name("catalog.json")
KINDS = ("tag", "url", "hub", "manual")
ACTIVATIONS = ("gelu", "quickgelu")
REQUIRED_FIELDS = ("name", "label", "paper", "kind", "architecture", "activation", "origin", "format",
                   "licence", "size", "found_at")
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class CatalogEntry:
    """One released checkpoint, as the catalog data describes it."""

    name: str
    label: str
    paper: str
    kind: str  # tag | url | hub | manual
    architecture: str
    activation: str
    origin: str  # "openai" when the weights descend from OpenAI CLIP
    format: str
    licence: str
    size: str
    found_at: tuple[str, ...]
    spec: str | None = None  # tag entries: the open_clip spec
    url: str | None = None
    hub_repo: str | None = None
    filename: str | None = None
    sha256: str | None = None
    size_bytes: int | None = None
    patch: dict | None = None  # {"base": "ARCH:tag or ARCH:/file", "alpha": float}
    notes: str = ""

    def required(self, name: Literal["spec", "url", "hub_repo", "filename"]) -> str:
        """A field `validate` demands of this entry's kind (tag: spec; url: url and filename; hub: hub_repo and
        filename; manual: filename): asking an entry for a field its kind lacks is a bug."""
        value = getattr(self, name)
        if not value:
            raise CatalogError(f"catalog entry {self.name!r} ({self.kind}) has no {name}")
        return value

    @property
    def model_spec(self) -> str:
        """The spec the model list offers: a tag entry's own spec (comparable with older results), else catalog:NAME."""
        return self.required("spec") if self.kind == "tag" else CATALOG_PREFIX + self.name

    @property
    def source(self) -> str:
        """Where the raw file comes from, in words a user can follow."""
        if self.kind == "url":
            return self.required("url")
        if self.kind == "hub":
            return f"https://huggingface.co/{self.hub_repo} (file {self.filename})"
        return self.required("spec") if self.kind == "tag" else "location unknown"


@dataclass
class Prepared:
    """What `prepare` hands to the model loader: an ordinary spec, and notes for the user."""

    spec: str
    notes: list[str] = field(default_factory=list)


def validate(raw: dict, allow_plain_http: bool = False) -> CatalogEntry:
    """Check one entry's data; the catalog is read at import, so a bad entry fails loudly and early."""
    name = raw.get("name", "?")
    problems = [f"lacks {key}" for key in REQUIRED_FIELDS if raw.get(key) in (None, "", [])]
    problems += [f"unknown field {key}" for key in raw if key not in CatalogEntry.__dataclass_fields__]
    if raw.get("kind") not in KINDS:
        problems.append(f"kind {raw.get('kind')!r} is not one of {KINDS}")
    if raw.get("activation") not in ACTIVATIONS:
        problems.append(f"activation {raw.get('activation')!r} is not one of {ACTIVATIONS}")
    needs = {"tag": ("spec",), "url": ("url", "filename"), "hub": ("hub_repo", "filename"), "manual": ("filename",)}
    problems += [f"a {raw.get('kind')} entry needs {key}" for key in needs.get(raw.get("kind") or "", ())
                 if not raw.get(key)]
    sha = raw.get("sha256")
    if sha is not None and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
        problems.append("sha256 must be 64 lowercase hex digits or null")
    url = raw.get("url") or ""
    if url and not (url.startswith("https://") or (allow_plain_http and url.startswith("http://127.0.0.1:"))):
        problems.append("url must be https")
    if problems:
        raise CatalogError(f"catalog entry {name!r}: " + "; ".join(problems))
    try:  # names become folders and files under the models folder: slugs only
        paths.check_slug(name, "catalog name")
        if raw.get("filename"):
            paths.check_slug(raw["filename"], "catalog file name")
    except paths.PathError as error:
        raise CatalogError(f"catalog entry {name!r}: {error}") from None
    return CatalogEntry(**{**raw, "found_at": tuple(raw["found_at"])})


def load_entries(path: Path = DATA_FILE) -> dict[str, CatalogEntry]:
    """Every entry of a catalog file, by name. A file name belongs to one source: downloads and recorded
    checksums are kept by file name."""
    entries = [validate(raw) for raw in json.loads(Path(path).read_text())["entries"]]
    owners: dict[str, str] = {}
    for entry in entries:
        if entry.filename and owners.setdefault(entry.filename, entry.source) != entry.source:
            raise CatalogError(f"two catalog sources download to the same file name {entry.filename}")
    return {entry.name: entry for entry in entries}


ENTRIES: dict[str, CatalogEntry] = load_entries()


def get_entry(name: str) -> CatalogEntry:
    """The entry called `name`, or an error listing the names there are."""
    if name not in ENTRIES:
        raise CatalogError(f"'{name}' is not in the model catalog; known: {', '.join(sorted(ENTRIES))}")
    return ENTRIES[name]


def default_models_dir() -> Path:
    """The settings' models folder: the app, the CLI and jobs read the same one."""
    return get_settings().models_dir


def downloads_dir(models_dir: Path) -> Path:
    return Path(models_dir) / "catalog" / "downloads"


def ready_dir(entry: CatalogEntry, models_dir: Path) -> Path:
    return Path(models_dir) / "catalog" / entry.name


def raw_candidates(entry: CatalogEntry, models_dir: Path) -> list[Path]:
    """Where a raw file is looked for, in order: the lab's downloads, then the models folder itself."""
    filename = entry.required("filename")
    return [downloads_dir(models_dir) / filename, Path(models_dir) / filename]


def find_raw(entry: CatalogEntry, models_dir: Path) -> Path | None:
    """The raw file if it is on this machine already (no network call), else None."""
    for candidate in raw_candidates(entry, models_dir):
        if candidate.is_file():
            return candidate
    if entry.kind == "hub":
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(entry.required("hub_repo"), entry.required("filename"))
        return Path(cached) if isinstance(cached, str) else None
    return None


def is_ready(entry: CatalogEntry, models_dir: Path) -> bool:
    """True when the converted folder exists (cheap: no hashing; `prepare` verifies before use)."""
    folder = ready_dir(entry, models_dir)
    return (folder / "open_clip_config.json").is_file() and (folder / "open_clip_model.safetensors").is_file()


def checksum_book(models_dir: Path) -> ChecksumBook:
    return ChecksumBook(Path(models_dir) / "catalog" / "checksums.json")


def fetch(entry: CatalogEntry, models_dir: Path) -> Path:
    """Download the raw file from the entry's own URL or hub repo into the lab's downloads folder."""
    if entry.kind not in ("url", "hub"):
        raise CatalogError("no download location is known")
    if env.hub_offline():
        raise CatalogError("HF_HUB_OFFLINE=1 (or COMPLAB_OFFLINE=1) is set, so nothing was downloaded")
    folder = downloads_dir(models_dir)
    folder.mkdir(parents=True, exist_ok=True)
    filename = entry.required("filename")
    target = paths.confine(folder / filename, [folder], "catalog download")
    if entry.kind == "hub":
        return download_hub(entry.required("hub_repo"), filename, folder)
    download_url(entry.required("url"), target)
    return target


def verify(entry: CatalogEntry, path: Path, models_dir: Path) -> tuple[str, str, bool]:
    """(note, sha256, first copy?) for the raw file, or an error; a bad copy in the lab's downloads is deleted."""
    owned = path.resolve().is_relative_to(downloads_dir(models_dir).resolve())
    expected, origin = entry.sha256, "published checksum"
    if expected is None:
        expected = checksum_book(models_dir).get(entry.required("filename"))
        origin = "SHA-256 recorded from its first copy"
    if expected is None:
        sha = sha256_of(path)
        return (f"{entry.filename}: no published checksum; this first copy's SHA-256 {sha} is recorded in "
                f"{checksum_book(models_dir).path} and later copies must match it", sha, True)
    return f"{entry.filename}: SHA-256 verified ({origin})", check_sha256(path, expected, origin, owned), False


def _patched(entry: CatalogEntry, patch: dict, state: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], str]:
    """CLoVe: the fine-tune interpolated into its base model's weights at the paper's alpha (`entry.patch`)."""
    base_spec, alpha = patch["base"], float(patch["alpha"])
    architecture, pretrained = base_spec.split(":", 1)
    try:
        base = build_model(architecture, pretrained, quick_gelu=entry.activation == "quickgelu").state_dict()
    except Exception as error:
        reason = first_line(error, limit=200)
        raise CatalogError(f"the base model {base_spec} it is patched into could not be loaded (it needs network "
                           f"once, or its weights in the Hugging Face cache): {reason}") from None
    key = "positional_embedding"  # a longer text context is cut to the base's, as CLoVe's own loader does
    if key in state and key in base and state[key].shape[0] > base[key].shape[0]:
        state[key] = state[key][:base[key].shape[0]]
    try:
        return interpolate(base, state, alpha), f"patched into {base_spec} at alpha {alpha:g} (WiSE-FT)"
    except PatchingError as error:
        raise CatalogError(f"the fine-tune does not match its base model: {error}") from None


def how_to_get(entry: CatalogEntry, models_dir: Path) -> str:
    """The ways to make an entry available, for messages and the model list's details."""
    put = f"put {entry.filename} in {downloads_dir(models_dir)} or {models_dir}"
    if entry.kind in ("url", "hub"):
        return (f"load it once on a machine with network access and copy its converted folder "
                f"{ready_dir(entry, models_dir)} here, or download {entry.source} yourself and {put}")
    return f"no download location is known (see {', '.join(entry.found_at)}); if you have the file, {put}"


def _lock(name: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(name, threading.Lock())


def _obtain(entry: CatalogEntry, models_dir: Path) -> Path:
    """The raw file from this machine, else downloaded; else an error saying where it looked and how to get it."""
    raw = find_raw(entry, models_dir)
    if raw is not None:
        return raw
    try:
        return fetch(entry, models_dir)
    except CatalogError as error:
        looked = ", ".join(str(path) for path in raw_candidates(entry, models_dir))
        hub = " and the Hugging Face cache" if entry.kind == "hub" else ""
        raise CatalogError(f"{entry.label} is not on this machine (looked in {looked}{hub}) and {error}. "
                           f"To get it: {how_to_get(entry, models_dir)}.") from None


def prepare(name: str, models_dir: Path | None = None) -> Prepared:
    """Turn ``catalog:NAME`` into an ordinary spec: a tag, or the verified, converted local folder."""
    entry = get_entry(name)
    if entry.kind == "tag":
        return Prepared(entry.required("spec"), [f"{entry.label}: open_clip pretrained {entry.spec}"])
    models_dir = Path(models_dir or default_models_dir())
    folder = ready_dir(entry, models_dir)
    with _lock(entry.name):
        if is_intact(folder):
            return Prepared(f"local-dir:{folder}", [f"{entry.label}: converted copy {folder} verified"])
        raw = _obtain(entry, models_dir)
        note, sha, first_copy = verify(entry, raw, models_dir)
        notes = [f"{entry.label}: read {raw} (source: {entry.source})", note]
        state, merge_notes = read_merged_state_dict(raw)
        notes += merge_notes
        if entry.patch:
            state, patch_note = _patched(entry, entry.patch, state)
            notes.append(patch_note)
        provenance = {"name": entry.name, "source": entry.source, "source_sha256": sha, "patch": entry.patch}
        write_open_clip_dir(folder, state, entry.architecture, entry.activation, provenance)
        if first_copy:  # recorded only once the file proved usable, so a refused file pins nothing
            checksum_book(models_dir).record(entry.required("filename"), entry.source, sha)
        return Prepared(f"local-dir:{folder}", notes)
