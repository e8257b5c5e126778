"""What an admin does with campaigns, for the Campaigns tab and the CLI alike: create, generate, export.

Every function takes the acting `Actor` and refuses anyone but an admin; paths
a user names are confined to the allowed roots (the command line's own user may
name any path, as for jobs).
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from backend import jobs, plugins
from backend.annotate import campaigns, db, gold_reviewed, quality, sources, validation
from backend.annotate.campaigns import CampaignConfig
from backend.core import tabular
from backend.core.auth import Actor, require_admin
from backend.core.files import atomic_path, zip_members
from backend.core.paths import confine
from backend.core.settings import Settings
from backend.core.store import Store

BUILT_IN_SOURCES = ("file", "probe", "manifest")


def sources_offered() -> tuple[str, ...]:
    """Every campaign source: the plug-ins' (the built-in world's) first, then a file, a probe result and a
    training manifest."""
    return (*plugins.hooks().campaign_sources, *BUILT_IN_SOURCES)


def _user_path(actor: Actor, path: str | Path, settings: Settings, what: str) -> Path:
    if actor.via == "cli":
        return Path(path).expanduser().resolve()
    return confine(path, settings.allowed_roots, what, base=settings.workspace)


def create_campaign(actor: Actor, name: str, source: str, settings: Settings, *, config: dict | None = None,
                    n_items: int = 20, seed: int = 0, path: str = "", images_dir: str = "",
                    probe_image: str = "") -> dict[str, Any]:
    """A new campaign from a plug-in's source (the built-in world), a SugarCrepe/BiVLC file, a probe's JSON or a
    training manifest, with its gold items: a plug-in's (whose right answers their generator knows,
    `backend.plugins`; a validation campaign's: `backend.annotate.validation.gold_items`), or the admin-decided
    items of the earlier campaign ``config["gold_from"]`` (`backend.annotate.gold_reviewed`). Returns a summary."""
    require_admin(actor, "creating a campaign")
    hooks = plugins.hooks()
    plugin_source = hooks.campaign_sources.get(source)
    preset = {"generator": plugin_source.generator} if plugin_source and plugin_source.generator else {}
    config_obj = CampaignConfig.from_dict({**preset, **(config or {})})
    validating = config_obj.kind == campaigns.VALIDATE
    if validating and config_obj.gold_from:
        raise ValueError("gold_from takes an earlier BiVLC campaign's decided images; a validation campaign's gold "
                         "items come from the built-in world's oracle: leave gold_from empty")
    folder = campaigns.campaign_dir(settings.data_dir, name)
    if any(row["name"] == name for row in campaigns.list_campaigns(settings.db)):  # before any file is written
        raise ValueError(f"a campaign named {name!r} exists already; choose another name")
    if plugin_source is not None:
        items = plugins.resolve(plugin_source.build)(n_items, seed, folder)
    elif source == "file":
        file = _user_path(actor, path, settings, "campaign file")
        images = _user_path(actor, images_dir, settings, "images folder") if images_dir else None
        items = sources.items_from_file(file, images)
    elif source == "probe":
        probe_file = _user_path(actor, path, settings, "probe result")
        if not probe_file.is_file():
            raise ValueError(f"probe result {path} does not exist")
        result = tabular.read_json(probe_file, "probe result")
        items = sources.items_from_probe(result, str(_user_path(actor, probe_image, settings, "probed image")),
                                         failed_only=not validating)
    elif source == "manifest":
        items = sources.items_from_manifest(_user_path(actor, path, settings, "manifest"), seed)
    else:
        raise ValueError(f"source must be one of {', '.join(sources_offered())}, not {source!r}")
    if validating and not all(item.image for item in items):
        raise ValueError("a validation campaign shows each negative with its image: every item needs one (give "
                         "the file's images folder); nothing was created")
    sources.check_images(items, folder)
    secret = quality.new_secret()  # gold from it, not from `seed`: the public code cannot rebuild the answer key
    n_gold, gold_seed = campaigns.gold_count(config_obj), quality.secret_seed(secret, "gold-items")
    if config_obj.gold_from:
        reviewed = gold_reviewed.gold_items(settings.db, settings.data_dir, config_obj.gold_from, n_gold, gold_seed,
                                            folder, config_obj.images_per_item)
        gold = [entry.item for entry in reviewed]
    else:
        reviewed, gold = [], _gold_items(n_gold, gold_seed, folder)
        gold = validation.gold_items(gold) if validating else gold
    campaign_id = campaigns.create(settings.db, name, items + gold, config_obj, source, actor.name, secret)
    gold_reviewed.add_candidates(settings.db, campaign_id, len(items), reviewed)
    return {"id": campaign_id, "name": name, "items": len(items), "gold_items": len(gold), "folder": str(folder),
            "completion_code": config_obj.completion_code}


def _gold_items(n: int, seed: int, folder: Path) -> list:
    """`n` gold items from the plug-in that provides them; none is an error only when some are wanted."""
    build = plugins.hooks().gold_items
    if not n:
        return []
    if not build:
        raise ValueError(f"the campaign wants {n} gold items but no installed plug-in provides them; set "
                         "gold_rate 0")
    return plugins.resolve(build)(n, seed, folder)


def launch_generation(actor: Actor, name: str, settings: Settings, store: Store, *, preset: str = "",
                      target: str = "local", options: dict | None = None, **config: Any) -> int:
    """Start the `generate` job for a campaign's missing images (its configured generator unless `preset`)."""
    require_admin(actor, "generating campaign images")
    if target == "hf":
        raise ValueError("generation cannot run on Hugging Face Jobs: the remote machine has no copy of the "
                         "campaign's store and images; run it here (local) or on this machine's GPUs (torchrun)")
    campaign = campaigns.get(settings.db, name)
    if campaign["config"].kind == campaigns.VALIDATE:
        raise ValueError(f"campaign {name!r} validates negatives with their own images: it has no image to generate "
                         "(its tasks are open already)")
    values = {"campaign": name, "preset": preset or campaign["config"].generator,
              "images_per_item": campaign["config"].images_per_item, "db": str(settings.db),
              "data_dir": str(settings.data_dir), **config}
    return jobs.submit(actor, "generate", values, target, options, store=store, settings=settings,
                       name=f"generate {name}")


def export_rows(store_path: Path | str, name: str, folder: Path) -> list:
    """The BiVLC rows of a campaign: every item that passed both steps, with its original and chosen image."""
    from backend.annotate.export import ExportRow

    campaign_id = campaigns.get(store_path, name)["id"]
    rows = []
    for item in db.rows(store_path, "select * from items where campaign_id = ? and gold = 0 and stage in "
                                    "('done', 'unambiguous') and image is not null order by position", (campaign_id,)):
        decision = db.loads(item["outcome"], {}).get("select", {}).get("decision")
        candidate = db.rows(store_path, "select path from candidates where item_id = ? and slot = ?",
                            (item["id"], int(decision) - 1))
        rows.append(ExportRow(item_id=item["id"], image=str(folder / item["image"]), caption=item["caption"],
                              negative_caption=item["negative_caption"],
                              negative_image=str(folder / candidate[0]["path"]), type=item["type"],
                              subtype=item["subtype"]))
    return rows


def raw_answers(store_path: Path | str, name: str) -> list[dict]:
    """Every answer as recorded, admin overrides included, with the annotator's Prolific study and session and
    whether the item is gold: what the answers CSV holds."""
    campaign_id = campaigns.get(store_path, name)["id"]
    return db.rows(store_path, "select ? as campaign, a.item_id, a.stage, coalesce(n.external_id, a.actor) as "
                               "annotator, a.choice, a.correct, a.time_ms, a.created_at as answered_at, a.source, "
                               "n.study_id, n.session_id, i.gold from answers a join items i on i.id = a.item_id "
                               "left join annotators n on n.id = a.annotator_id "
                               "where a.campaign_id = ? order by a.id", (name, campaign_id))


def export_campaign(actor: Actor, name: str, settings: Settings, out_dir: str = "", repo_id: str = "",
                    private: bool = True) -> dict[str, Any]:
    """Save the BiVLC-schema dataset (a validation campaign: its validated negatives as a SugarCrepe-format
    benchmark and a training manifest, `backend.annotate.validation`) and the answers CSV (and push the BiVLC
    dataset when `repo_id` is given)."""
    from backend.annotate.export import push_dataset, save_dataset, write_answers_csv

    require_admin(actor, "exporting a campaign")
    folder = campaigns.campaign_dir(settings.data_dir, name)
    out = _user_path(actor, out_dir, settings, "export folder") if out_dir else settings.downloads_dir / name
    if campaigns.get(settings.db, name)["config"].kind == campaigns.VALIDATE:
        if repo_id:
            raise ValueError("pushing to the Hub is for BiVLC datasets; a validation campaign's export is files: "
                             "upload its folder")
        written = validation.export_validated(settings.db, name, folder, out)
        n_answers = write_answers_csv(raw_answers(settings.db, name), out / "answers.csv")
        return {**written, "answers_csv": str(out / "answers.csv"), "answers": n_answers, "pushed": ""}
    rows = export_rows(settings.db, name, folder)
    if not rows:
        raise ValueError(f"campaign {name!r} has no item that passed both annotation steps yet: nothing to export")
    dataset_dir = save_dataset(rows, out / "dataset")
    n_answers = write_answers_csv(raw_answers(settings.db, name), out / "answers.csv")
    pushed = ""
    if repo_id:
        push_dataset(rows, repo_id, settings.hf_token, private=private)
        pushed = f"https://huggingface.co/datasets/{repo_id}"
    return {"rows": len(rows), "dataset": str(dataset_dir), "answers_csv": str(out / "answers.csv"),
            "answers": n_answers, "pushed": pushed}


EXPORT_MEMBERS = ("dataset", validation.FOLDER, "answers.csv", "README.md")  # what an export folder may hold


def zip_export(exported: dict[str, Any], target: Path) -> dict[str, Any]:
    """Zip what an export (`export_campaign`'s answer) wrote: the dataset folder, the answers CSV, a card if any,
    into `target`; the zip's path and its number of files."""
    folder = Path(exported["dataset"]).parent
    files = zip_members(folder, [member for member in EXPORT_MEMBERS if (folder / member).exists()], target)
    return {"zip": str(target), "zip_files": files}


def backup_database(actor: Actor, settings: Settings) -> Path:
    """A consistent copy of the whole store (SQLite's online backup), for download."""
    require_admin(actor, "downloading the database")
    target = settings.downloads_dir / f"lab-backup-{time.strftime('%Y%m%d-%H%M%S')}.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as partial:  # never a half-copied store under a backup's name
        source, copy = sqlite3.connect(settings.db), sqlite3.connect(partial)
        try:
            source.backup(copy)
        finally:
            source.close()
            copy.close()
    return target

