"""``campaign:<name>``: an annotation campaign's export, scored exactly like BiVLC.

``service.export_campaign`` writes ``<out>/dataset`` (BiVLC's columns plus
item_id, ``save_to_disk``, image bytes embedded) and ``<out>/answers.csv``,
where ``<out>`` is ``<downloads_dir>/<name>`` unless the admin named another
folder. A campaign is found, first match wins, at:

1. ``<benchmarks_dir>/campaigns/<name>/dataset`` (an export copied or
   written next to the other benchmarks, e.g. on another machine), then
2. ``<downloads_dir>/<name>/dataset`` (the export's default place).

The version is ``sha256:`` and the first 16 hex digits of a SHA-256 over the saved
table's Arrow shards (names and bytes), so two exports
of the same campaign with different items never compare as one item set.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from backend.benchmarks import hub
from backend.benchmarks.bivlc import HEADLINE, bivlc_task
from backend.benchmarks.data import DataMissing, default_root, steps_message
from backend.benchmarks.evaluator import Benchmark, BenchmarkFamily, register_family
from backend.benchmarks.grouping import TWO_BY_TWO_CHANCE
from backend.benchmarks.task import Task
from backend.core.paths import check_slug

PREFIX = "campaign"


def _downloads_dir() -> Path:
    from backend.core.settings import get_settings

    return get_settings().downloads_dir


def search_dirs(root: Path) -> list[Path]:
    """Where exports are looked for, in order: the benchmarks folder's campaigns/, then the downloads folder."""
    return [root / "campaigns", _downloads_dir()]


def _is_export(folder: Path) -> bool:
    info = folder / "dataset_info.json"
    return hub.is_saved_dataset(folder) and '"item_id"' in info.read_text(encoding="utf-8")


def find_export(name: str, root: Path) -> Path | None:
    """The first ``<dir>/<name>/dataset`` that is a saved campaign export, or None."""
    for base in search_dirs(root):
        if _is_export(base / name / "dataset"):
            return base / name / "dataset"
    return None


def available(root: Path) -> list[str]:
    """Every exported campaign under the search folders (a name found twice is listed once)."""
    names = [child.name for base in search_dirs(root) if base.is_dir()
             for child in sorted(base.iterdir()) if _is_export(child / "dataset")]
    return list(dict.fromkeys(names))


def export_digest(folder: Path) -> str:
    """SHA-256 over the saved table's Arrow shards (names and bytes), first 16 hex digits."""
    digest = hashlib.sha256()
    for shard in sorted(folder.glob("*.arrow")):
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
    import datasets

    folder = _locate(name, root)
    return bivlc_task(datasets.load_from_disk(str(folder)), limit, str(folder), f"{PREFIX}:{name}")


def make(name: str) -> Benchmark:
    """The benchmark of campaign ``name``; its version hashes the export found under the default data root."""
    if not name:
        raise ValueError("campaign:NAME needs a campaign name")
    check_slug(name, "campaign name")  # it becomes a folder name: no '/' or '..' out of the search folders
    folder = find_export(name, default_root())
    version = f"sha256:{export_digest(folder)}" if folder else "not exported yet"
    return Benchmark(f"{PREFIX}:{name}",
                     f"Annotation campaign {name!r} exported in BiVLC's schema, scored with BiVLC's rules.",
                     version, lambda limit, root: _build(name, limit, root),
                     chance=dict(TWO_BY_TWO_CHANCE), headline=HEADLINE)


register_family(BenchmarkFamily(PREFIX, "an exported annotation campaign, scored like BiVLC", make, available))
