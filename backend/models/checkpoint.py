"""The one writer of checkpoint folders (training runs, patched models, converted catalog checkpoints), the
loader of their weights, and what a training resume needs.

A checkpoint is a directory: ``open_clip_config.json`` (architecture, activation,
tokenizer, preprocessing, training config) + ``open_clip_model.safetensors``,
i.e. exactly what ``local-dir:`` loads. A training run's ``last`` checkpoint also
holds ``trainer_state.pt`` (optimizer, step, RNG, loss scaler), read back with
``weights_only=True``.

Atomic switch: ``checkpoints/last`` (and ``best``) is a symbolic link to a
versioned sibling, ``last@step600-x1y2z3``. A save writes and fsyncs a new
version completely, then points the link at it with ``os.replace`` — a single
rename(2), which POSIX makes atomic — and only then deletes older versions. So a
crash at any moment leaves ``last`` pointing at a complete checkpoint (the old
or the new one), and a version no link points to is an interrupted save,
removed by the next one. A symlink was chosen over renaming directories aside
because no window exists in which ``last`` is missing: renaming needs two
steps (old out, new in) and recovery code for the crash between them, while
the link is replaced in one. Paths through the link (``local-dir:.../last``)
load like any directory.

Reading refuses loudly: a missing file, unreadable safetensors or unreadable
trainer state raises `CheckpointError`, never a silent start from step 0.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from backend.core.errors import first_line
from backend.core.files import fsync, sha256_of

WEIGHTS = "open_clip_model.safetensors"
CONFIG = "open_clip_config.json"
STATE = "trainer_state.pt"
LEGACY = "-legacy"  # suffix of a pre-symlink checkpoint directory moved aside on its first new save
# Between a link's name and its version's: never in a name (names are slugs, `backend.core.paths.check_slug`), so
# the versions of "clove" are never mistaken for those of "clove-unpatched" beside it.
VERSION_MARK = "@"
# Versions named before VERSION_MARK existed: "<link>-" + an optional "step<N>-" + mkdtemp's 8 random characters.
OLD_VERSION = re.compile(r"(step\d+-)?[a-z0-9_]{8}")


class CheckpointError(ValueError):
    """A checkpoint that exists but cannot be used; the message names it, what is wrong and what to do."""

    def __init__(self, path: Path, problem: str):
        path = Path(path)
        run = path.parent.parent if path.parent.name == "checkpoints" else path
        super().__init__(f"Checkpoint {path} is unusable: {problem}. Training will not silently start over: "
                         f"delete {run} to start this run from scratch, or choose another run name.")
        self.path = path


def save_checkpoint(directory: Path, weights: torch.nn.Module | Mapping[str, torch.Tensor], model_config: dict,
                    extra: dict, trainer_state: dict | None = None, *, record_sha256: bool = False,
                    verify: Callable[[Path], None] | None = None) -> Path:
    """Write a complete new version of `directory` (a link such as ``checkpoints/last``), then switch the link to it.

    `weights` is a model or its state dict. The version's name carries ``extra["step"]`` when given, for whoever
    lists the folder. `record_sha256` adds the weights file's SHA-256 to the config (``weights_sha256``: what
    `backend.models.checkpoint_files.is_intact` checks); `verify(version)` may refuse the written version
    before the link points at it (it raises, and the version is removed).
    """
    link = Path(directory)
    link.parent.mkdir(parents=True, exist_ok=True)
    step = f"step{extra['step']}-" if "step" in extra else ""
    version = Path(tempfile.mkdtemp(prefix=f"{link.name}{VERSION_MARK}{step}", dir=link.parent))
    try:
        _write_version(version, weights, {**model_config, **extra}, trainer_state, record_sha256)
        if verify is not None:
            verify(version)
    except BaseException:
        shutil.rmtree(version, ignore_errors=True)
        raise
    _set_aside_legacy(link)
    _switch(link, version)
    fsync(link.parent)
    _remove_old_versions(link, keep=version)
    return link


def _write_version(version: Path, weights: torch.nn.Module | Mapping[str, torch.Tensor], config: dict,
                   trainer_state: dict | None, record_sha256: bool) -> None:
    """Weights, config and trainer state into `version`, every file flushed to disk."""
    version.chmod(0o755)
    state = weights.state_dict() if isinstance(weights, torch.nn.Module) else weights
    save_file({k: v.detach().cpu().contiguous() for k, v in state.items()}, version / WEIGHTS)
    if record_sha256:
        config = {**config, "weights_sha256": sha256_of(version / WEIGHTS)}
    (version / CONFIG).write_text(json.dumps(config, indent=2))
    if trainer_state is not None:
        torch.save(trainer_state, version / STATE)
    for path in [*version.iterdir(), version]:
        fsync(path)


def _switch(link: Path, version: Path) -> None:
    """Point `link` at `version` in one atomic step: a fresh link under a temporary name renamed over it."""
    temporary = link.with_name(f".{link.name}.switch")
    temporary.unlink(missing_ok=True)
    os.symlink(version.name, temporary)  # relative: the run folder may be moved or copied whole
    os.replace(temporary, link)


def _set_aside_legacy(link: Path) -> None:
    """A checkpoint written before links existed is a real directory; rename it aside so a link can replace it.

    Between this rename and the switch there is no ``last``; `committed` then finds the legacy copy.
    """
    if link.is_dir() and not link.is_symlink():
        legacy = link.with_name(link.name + LEGACY)
        shutil.rmtree(legacy, ignore_errors=True)
        link.rename(legacy)


def _remove_old_versions(link: Path, keep: Path) -> None:
    """Every version but `keep`, the checkpoint set aside before links existed, and the old scheme's staging
    folder: what no link points to any more."""
    for path in link.parent.iterdir():
        if path == keep or path.is_symlink() or not path.is_dir():
            continue
        name = path.name
        old_style = name.startswith(f"{link.name}-") and OLD_VERSION.fullmatch(name[len(link.name) + 1:])
        if name.startswith(f"{link.name}{VERSION_MARK}") or old_style or name == link.name + LEGACY:
            shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(link.with_name(link.name + ".tmp"), ignore_errors=True)  # the old scheme's staging folder


def remove_checkpoint(directory: Path) -> None:
    """Delete a checkpoint: its link and the version it points to (or a plain folder, as older code wrote)."""
    directory = Path(directory)
    if directory.is_symlink():
        version = directory.resolve()
        directory.unlink()
        shutil.rmtree(version, ignore_errors=True)
    else:
        shutil.rmtree(directory, ignore_errors=True)


def committed(directory: Path) -> Path | None:
    """The checkpoint `directory` names, or None when no save ever completed there.

    A link whose version is gone is an error, not "no checkpoint": something
    deleted the data a resume needs.
    """
    link = Path(directory)
    if link.is_symlink() and not link.exists():
        raise CheckpointError(link, f"it links to {os.readlink(link)}, which does not exist")
    if link.is_dir():
        return link
    legacy = link.with_name(link.name + LEGACY)
    return legacy if legacy.is_dir() else None


def adapter_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The adapter's tensors only: what a LoRA checkpoint saves (`backend.models.lora` adds the adapters)."""
    return {name: value for name, value in model.state_dict().items() if "lora_" in name}


def load_adapter(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> None:
    """Load adapter tensors into a model with the same adapters; anything missing or unexpected is refused."""
    expected = set(adapter_state(model))
    missing, unexpected = sorted(expected - set(weights)), sorted(set(weights) - expected)
    if missing or unexpected:
        raise ValueError(f"the adapter does not fit this model: {len(missing)} adapter tensor(s) missing "
                         f"(e.g. {missing[:2]}), {len(unexpected)} unexpected (e.g. {unexpected[:2]})")
    model.load_state_dict(weights, strict=False)


def load_weights(directory: Path, model: torch.nn.Module) -> None:
    """Load the checkpoint's weights into `model`, or raise `CheckpointError` saying why they cannot be."""
    path = Path(directory) / WEIGHTS
    if not path.is_file():
        raise CheckpointError(directory, f"{WEIGHTS} is missing")
    try:
        weights = load_file(path)
    except Exception as error:  # safetensors raises its own error types for truncated or garbled files
        raise CheckpointError(directory, f"{WEIGHTS} is unreadable ({first_line(error, limit=200)})") from error
    try:
        if _is_adapter(directory):  # a LoRA run saves its adapter only (backend.models.lora)
            load_adapter(model, weights)
        else:
            model.load_state_dict(weights)
    except (RuntimeError, ValueError) as error:
        reason = first_line(error, limit=200)
        raise CheckpointError(directory, f"its weights do not fit this run's model ({reason})") from error


def _is_adapter(directory: Path) -> bool:
    path = Path(directory) / CONFIG
    try:
        return path.is_file() and "lora" in json.loads(path.read_text())
    except ValueError:
        return False


def load_trainer_state(directory: Path) -> dict | None:
    """The trainer state saved with the checkpoint (None when it has none), read with ``weights_only=True``."""
    path = Path(directory) / STATE
    if not path.is_file():
        return None
    try:
        return torch.load(path, weights_only=True)
    except Exception as error:  # pickle, zip and EOF errors all mean the same: the file is damaged
        raise CheckpointError(directory, f"{STATE} is unreadable ({first_line(error, limit=200)})") from error


def load_for_resume(directory: Path, model: torch.nn.Module) -> dict | None:
    """Load the committed checkpoint at `directory` into `model` and return its trainer state.

    None when nothing was ever committed there (a fresh run). Every file is
    checked before anything is loaded, so a refused checkpoint leaves `model` as it was.
    """
    path = committed(directory)
    if path is None:
        return None
    for name in (CONFIG, WEIGHTS, STATE):
        if not (path / name).is_file():
            raise CheckpointError(path, f"{name} is missing (an incomplete or hand-copied checkpoint)")
    try:
        json.loads((path / CONFIG).read_text())
    except ValueError as error:
        raise CheckpointError(path, f"{CONFIG} is not valid JSON ({first_line(error, limit=200)})") from error
    state = load_trainer_state(path)
    load_weights(path, model)
    return state
