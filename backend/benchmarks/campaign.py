"""``campaign:<name>``: an annotation campaign's export, scored like BiVLC or like SugarCrepe.

``service.export_campaign`` writes, into ``<out>`` (``<downloads_dir>/<name>`` unless the admin named another
folder), ``answers.csv`` and, by the campaign's kind:

- a BiVLC campaign: ``dataset`` (BiVLC's columns plus item_id, ``save_to_disk``, image bytes embedded), scored
  exactly like BiVLC;
- a validation campaign (`backend.annotate.validation`): ``validated`` (SugarCrepe's JSON files of the negatives
  the crowd validated, their images, a training manifest), scored exactly like SugarCrepe (a tie is wrong).

A campaign is found, first match wins, at:

1. ``<benchmarks_dir>/campaigns/<name>/{dataset,validated}`` (an export copied or
   written next to the other benchmarks, e.g. on another machine), then
2. ``<downloads_dir>/<name>/{dataset,validated}`` (the export's default place).

The version is ``sha256:`` and the first 16 hex digits of a SHA-256 over the saved
table's Arrow shards, or the validation export's JSON files (names and bytes), so two exports
of the same campaign with different items never compare as one item set.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from backend.annotate import validation
from backend.benchmarks import hub
from backend.benchmarks.bivlc import HEADLINE, bivlc_task
from backend.benchmarks.data import DataMissing, default_root, steps_message
from backend.benchmarks.evaluator import Benchmark, BenchmarkFamily, register_family
from backend.benchmarks.grouping import TWO_BY_TWO_CHANCE
from backend.benchmarks.sugarcrepe import sugarcrepe_task
from backend.benchmarks.task import Task
from backend.core.paths import check_slug

PREFIX = "campaign"


def _downloads_dir() -> Path:
    from backend.core.settings import get_settings

    return get_settings().downloads_dir


def search_dirs(root: Path) -> list[Path]:
    """Where exports are looked for, in order: the benchmarks folder's campaigns/, then the downloads folder."""
    return [root / "campaigns", _downloads_dir()]


def _is_bivlc_export(folder: Path) -> bool:
    info = folder / "dataset_info.json"
    return hub.is_saved_dataset(folder) and '"item_id"' in info.read_text(encoding="utf-8")


def _export_in(folder: Path) -> Path | None:
    """A campaign's export folder ``folder`` holds: its BiVLC dataset or its validated negatives."""
    if _is_bivlc_export(folder / "dataset"):
        return folder / "dataset"
    if validation.is_export(folder / validation.FOLDER):
        return folder / validation.FOLDER
    return None


def find_export(name: str, root: Path) -> Path | None:
    """The first ``<dir>/<name>/dataset`` or ``<dir>/<name>/validated`` that is a campaign export, or None."""
    for base in search_dirs(root):
        found = _export_in(base / name)
        if found is not None:
            return found
    return None


def available(root: Path) -> list[str]:
    """Every exported campaign under the search folders (a name found twice is listed once)."""
    names = [child.name for base in search_dirs(root) if base.is_dir()
             for child in sorted(base.iterdir()) if _export_in(child) is not None]
    return list(dict.fromkeys(names))


def export_digest(folder: Path) -> str:
    """SHA-256 over the saved table's Arrow shards or the validation export's JSON files (names and bytes), first
    16 hex digits."""
    digest = hashlib.sha256()
    for shard in sorted([*folder.glob("*.arrow"), *folder.glob("*.json")]):
        digest.update(shard.name.encode())
        digest.update(shard.read_bytes())
    return digest.hexdigest()[:16]


def _locate(name: str, root: Path) -> Path:
    folder = find_export(name, root)
    if folder is None:
        looked = " and ".join(str(base / name / "dataset") for base in search_dirs(root))
        raise DataMissing(steps_message(f"{PREFIX}:{name}", root / "campaigns" / name, [
            f"no export of campaign {name!r} was found (looked in {looked})",
            (f"export it: python -m backend campaign export {name} (or the Campaigns tab), which writes "
            f"<downloads_dir>/{name}/dataset; or copy an export's folder to {root / 'campaigns' / name}")]))
    return folder


def _build(name: str, limit: int | None, root: Path) -> Task:
    folder = _locate(name, root)
    if folder.name == validation.FOLDER:
        return sugarcrepe_task(validation.read_export(folder), folder / validation.IMAGES, limit, categories=None)
    import datasets

    return bivlc_task(datasets.load_from_disk(str(folder)), limit, str(folder), f"{PREFIX}:{name}")


def make(name: str) -> Benchmark:
    """The benchmark of campaign ``name``; its version hashes the export found under the default data root."""
    if not name:
        raise ValueError("campaign:NAME needs a campaign name")
    check_slug(name, "campaign name")  # it becomes a folder name: no '/' or '..' out of the search folders
    folder = find_export(name, default_root())
    version = f"sha256:{export_digest(folder)}" if folder else "not exported yet"
    build = lambda limit, root: _build(name, limit, root)  # noqa: E731
    if folder is not None and folder.name == validation.FOLDER:
        subsets = list(validation.read_export(folder))
        return Benchmark(f"{PREFIX}:{name}", f"Validation campaign {name!r}: the generated negatives its annotators "
                         "judged false of the image, in SugarCrepe's format, scored with SugarCrepe's rules (a tie "
                         "is wrong).", version, build, chance=dict.fromkeys([*subsets, "overall", "micro"], 0.5),
                         headline=("micro", "overall"))
    return Benchmark(f"{PREFIX}:{name}",
                     f"Annotation campaign {name!r} exported in BiVLC's schema, scored with BiVLC's rules.",
                     version, build, chance=dict(TWO_BY_TWO_CHANCE), headline=HEADLINE)


register_family(BenchmarkFamily(PREFIX, "an exported annotation campaign, scored like BiVLC", make, available))
