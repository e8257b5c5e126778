"""`python -m backend campaign ...`: create, generate, status, assist, override, export, list, prolific, and the
quality commands (competence, exclude, restore, adjudicate: `backend.cli.campaign_quality`).

The same service functions as the Campaigns tab, acting as the machine's own
admin (`backend.core.auth.cli_actor`). Nothing here imports torch except `assist`.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from backend.annotate import campaigns, report, resolution, service
from backend.cli import campaign_quality, options
from backend.cli import prolific as prolific_cli
from backend.core.auth import cli_actor
from backend.core.settings import Settings
from backend.core.store import Store
from backend.core.text import terminal_safe


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.load()
    if args.db:
        settings = dataclasses.replace(settings, db=args.db.resolve())
    Store(settings.db)  # brings the schema up to date
    return settings


def _print(value, as_json: bool) -> None:
    if as_json:
        options.print_json(value)
    else:
        for key, item in value.items():
            print(terminal_safe(f"{key}\t{json.dumps(item, default=str) if isinstance(item, (dict, list)) else item}"))


def _create(args: argparse.Namespace) -> int:
    config = json.loads(args.config) if args.config else {}
    for key in ("kind", "overlap", "gold_rate", "gold_from", "tasks_per_session", "resolution",
                "min_seconds_per_task"):
        if getattr(args, key) is not None:
            config[key] = getattr(args, key)
    if args.baseline:
        config["human_baseline"] = True
    summary = service.create_campaign(cli_actor(), args.name, args.source, _settings(args), config=config,
                                      n_items=args.items, seed=args.seed, path=args.file or "",
                                      images_dir=args.images or "", probe_image=args.probe_image or "")
    _print(summary, args.json)
    return 0


def _generate(args: argparse.Namespace) -> int:
    settings = _settings(args)
    extra = {key: value for key, value in (("steps", args.steps), ("guidance", args.guidance), ("model", args.model),
                                           ("device", args.device), ("dtype", args.dtype), ("seed", args.seed),
                                           ("assist_model", args.assist_model), ("batch_size", args.batch_size))
             if value is not None}
    job_id = service.launch_generation(cli_actor(), args.name, settings, Store(settings.db), preset=args.preset or "",
                                       target=args.target, options=options.target_options(args), **extra)
    print(f"started generate job {job_id}; follow it with: python -m backend jobs show {job_id}")
    return 0


def _status(args: argparse.Namespace) -> int:
    state = report.status(_settings(args).db, args.name)
    if args.json:
        _print(state, True)
    else:
        print(terminal_safe(report.to_markdown(state)))
    return 0


def _assist(args: argparse.Namespace) -> int:
    from backend.annotate import assist
    from backend.models.choices import default_models
    from backend.models.loading import load_model

    settings = _settings(args)
    spec = args.model or next(iter(default_models()), "")
    if not spec:
        raise ValueError("no --model given and no default model is available: pass --model SPEC")
    loaded = load_model(spec, device=args.device)
    n = assist.score_candidates(settings.db, args.name, campaigns.campaign_dir(settings.data_dir, args.name), loaded)
    _print({"scored": n, "model": spec, **assist.report(settings.db, args.name)}, args.json)
    return 0


def _override(args: argparse.Namespace) -> int:
    stage = resolution.override(_settings(args).db, args.item, args.task, args.decision, cli_actor().name)
    print(f"item {args.item} is now {stage}")
    return 0


def _export(args: argparse.Namespace) -> int:
    result = service.export_campaign(cli_actor(), args.name, _settings(args), args.out or "", args.push or "",
                                     private=not args.public)
    if args.zip:
        result.update(service.zip_export(result, Path(args.zip).expanduser().resolve()))
    _print(result, args.json)
    return 0


def _intro(args: argparse.Namespace) -> int:
    """Print the study link's intro, or replace it with a Markdown file's text (what the Campaigns tab edits)."""
    settings = _settings(args)
    if args.file:
        campaigns.update_config(settings.db, args.name, intro=Path(args.file).read_text())
    print(terminal_safe(campaigns.get(settings.db, args.name)["config"].intro))
    return 0


def _list(args: argparse.Namespace) -> int:
    for row in campaigns.list_campaigns(_settings(args).db):
        print(terminal_safe(f"{row['name']}\t{row['source']}\t{row['created_by']}"))
    return 0


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("campaign", help="BiVLC-style annotation campaigns",
                                   description="Create a campaign, generate its images, follow it, export it.")
    commands = parser.add_subparsers(dest="campaign_command", required=True)

    def command(name: str, handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        options.add_db(sub, Path)
        options.add_json(sub)
        sub.set_defaults(handler=handler)
        return sub

    create = command("create", _create, "create a campaign from the built-in world, a file, a probe result or a "
                                        "training manifest")
    create.add_argument("name")
    create.add_argument("--kind", choices=campaigns.KINDS, default=None,
                        help="bivlc (default: generated images, steps 3 and 4) or validate (is each generated "
                             "negative false of its image? no images to generate)")
    offered = service.sources_offered()
    create.add_argument("--source", choices=offered, default=offered[0])
    create.add_argument("--file", help="SugarCrepe .json or BiVLC-format .csv/.jsonl (source file); probe JSON "
                                       "(source probe); a training manifest .csv/.jsonl (source manifest)")
    create.add_argument("--images", help="folder the file's image names are relative to (e.g. COCO val2017)")
    create.add_argument("--probe-image", help="the image the probe was run on (source probe)")
    plugin_sources = ", ".join(offered[:-len(service.BUILT_IN_SOURCES)]) or "none"
    create.add_argument("--items", type=int, default=20,
                        help=f"how many items a plug-in's source makes (sources {plugin_sources})")
    create.add_argument("--seed", type=int, default=0,
                        help="seed of the source's items (gold items come from the campaign's secret)")
    create.add_argument("--overlap", type=int, default=None)
    create.add_argument("--resolution", choices=campaigns.RESOLUTION_RULES, default=None)
    create.add_argument("--gold-rate", dest="gold_rate", type=float, default=None)
    create.add_argument("--gold-from", dest="gold_from", default=None,
                        help="an earlier campaign: its items whose step 3 an admin decided become the gold items "
                             "(photos like the campaign's own; default: the built-in world's shapes)")
    create.add_argument("--tasks-per-session", dest="tasks_per_session", type=int, default=None)
    create.add_argument("--min-seconds", dest="min_seconds_per_task", type=float, default=None,
                        help="answers given sooner after their task was shown are refused and counted (default "
                             f"0: none; the Campaigns tab offers {campaigns.RECOMMENDED_MIN_SECONDS:g})")
    create.add_argument("--baseline", action="store_true", help="also collect BiVLC's human baseline (I2T, T2I)")
    create.add_argument("--config", help="further settings as JSON, e.g. '{\"reclaim_after_s\": 300}'")

    generate = command("generate", _generate, "start the job that generates the campaign's missing images")
    generate.add_argument("name")
    generate.add_argument("--preset", help="a preset (`generate.presets`: bivlc, sdxl-turbo, sd-turbo and the "
                                           "plug-ins') or custom (default: the campaign's generator)")
    generate.add_argument("--model", help="diffusers model id or folder (preset custom)")
    generate.add_argument("--steps", type=int)
    generate.add_argument("--guidance", type=float)
    generate.add_argument("--seed", type=int,
                          help="base seed of the items' images (gold images: from the campaign's secret)")
    generate.add_argument("--batch-size", dest="batch_size", type=int,
                          help="diffusers images per pipeline call (default 1; each keeps its own generator and "
                               "regenerates exactly, its record naming its batch)")
    generate.add_argument("--device")
    generate.add_argument("--dtype", choices=["auto", "fp32", "fp16", "bf16"])
    generate.add_argument("--assist-model", dest="assist_model",
                          help="also score every candidate with this CLIP model (admin-only assistance)")
    options.add_target(generate)

    status = command("status", _status, "items per stage, annotators, gold accuracy, agreement, baseline")
    status.add_argument("name")

    assist = command("assist", _assist, "score every candidate with a CLIP model and compare with known answers")
    assist.add_argument("name")
    assist.add_argument("--model", default=None, help="a model spec (default: the app's default model)")
    assist.add_argument("--device", default=None)

    override = command("override", _override, "decide an item's select, ambiguity or validate task by hand")
    override.add_argument("item", type=int)
    override.add_argument("task", choices=resolution.OVERRIDABLE)
    override.add_argument("decision", help="1-4 or none (select); original, negative or both (ambiguity); false, "
                                           "true or disfluent (validate)")

    export = command("export", _export, "save the BiVLC dataset (a validation campaign: its validated negatives as "
                                        "a SugarCrepe-format benchmark and a training manifest) and the answers "
                                        "CSV; --push a BiVLC dataset to the Hub")
    export.add_argument("name")
    export.add_argument("--out", help="folder (default: <downloads>/<name>)")
    export.add_argument("--push", metavar="REPO_ID", help="also push the dataset to this Hub dataset repo (HF_TOKEN)")
    export.add_argument("--public", action="store_true", help="make a pushed dataset public")
    export.add_argument("--zip", metavar="PATH", help="also zip the export (dataset folder, answers.csv) into PATH")

    intro = command("intro", _intro, "print the study link's intro and consent page, or set it from a Markdown file")
    intro.add_argument("name")
    intro.add_argument("--file", help="a Markdown file: the new intro")

    command("list", _list, "the campaigns in the store")
    campaign_quality.add_parsers(command, _settings, _print)
    prolific_cli.add_parsers(commands, _settings, _print)
