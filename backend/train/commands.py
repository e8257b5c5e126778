"""`python -m backend train ...` and `python -m backend toyworld pretrain ...`."""
from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import yaml

# The recipe that produces the shipped built-in model (docs/TOYWORLD.md has its numbers).
# augment "none": those numbers were measured without augmentation (before it existed), and the
# recipe must reproduce them.
TOY_PRETRAIN = {"base_model": "toyworld:random", "data": "toyworld-pretrain", "loss": "clip", "steps": 1500,
                "batch_size": 256, "lr": 2e-3, "warmup_steps": 100, "weight_decay": 0.1,
                "dataset_size": 40000, "eval_every": 500, "augment": "none",
                "eval_benchmarks": ["toy-sugarcrepe", "toy-retrieval", "toy-pretrain-retrieval"]}


# Finetunes of the shipped model on the world's dense captions (the acceptance runs of
# the finetuning issue); "control" is plain CLIP on the same data, "hn_only" is
# Kamath et al.'s hard-negative-only ablation (w_hp = 0). augment "none": docs/TOYWORLD.md's numbers
# for these runs were measured without augmentation.
TOY_FINETUNE_BASE = {"base_model": "toyworld", "data": "toyworld-finetune", "steps": 600, "batch_size": 128,
                     "lr": 2e-3, "warmup_steps": 50, "dataset_size": 4000, "eval_every": 200, "augment": "none",
                     "families": ["negclip_swap"],
                     "eval_benchmarks": ["toy-sugarcrepe", "toy-hard-positives", "toy-retrieval"]}
TOY_FINETUNES = {
    "control": {"loss": "clip"},
    "negclip": {"loss": "negclip"},
    "ce_clip": {"loss": "ce_clip"},
    "hp_hn": {"loss": "hp_hn"},
    "hn_only": {"loss": "hp_hn", "loss_weights": {"w_hp": 0.0}},
}


def toy_finetune_config(recipe: str, seed: int = 0, output_dir: str = "", **overrides):
    from backend.train.config import TrainConfig

    if recipe not in TOY_FINETUNES:
        raise ValueError(f"Unknown recipe {recipe!r}; one of {', '.join(TOY_FINETUNES)}")
    return TrainConfig.from_dict({**TOY_FINETUNE_BASE, **TOY_FINETUNES[recipe], "seed": seed,
                                  "name": f"toyworld-{recipe}-seed{seed}", "output_dir": output_dir, **overrides})


def parse_overrides(pairs: list[str]) -> dict:
    """`key=value` pairs, values read as YAML (numbers, lists, booleans)."""
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set takes key=value, got {pair!r}")
        values[key.strip()] = yaml.safe_load(value)
    return values


def load_config(path: str | None, overrides: list[str]):
    from backend.train.config import TrainConfig

    values = yaml.safe_load(Path(path).read_text()) or {} if path else {}
    return TrainConfig.from_dict({**values, **parse_overrides(overrides)})


def _train(args: argparse.Namespace) -> int:
    from backend.jobs.reporter import Reporter
    from backend.store import Store
    from backend.train.loop import run_job

    config = load_config(args.config, args.set)
    if args.job_id is not None and not args.db:
        raise ValueError("--job-id needs --db, the store that holds the job")
    rank = int(os.environ.get("RANK", 0))  # under torchrun only rank 0 reports
    reporter = Reporter(Store(args.db), args.job_id, rank=rank) if args.db else Reporter(rank=rank)
    result = run_job(config, reporter)
    print(json.dumps(result, indent=2))
    return 0


def _pretrain(args: argparse.Namespace) -> int:
    from backend.models import BUILTIN_MODELS
    from backend.train.config import TrainConfig
    from backend.train.loop import train

    config = TrainConfig.from_dict({**TOY_PRETRAIN, "seed": args.seed, "name": f"toyworld-pretrain-seed{args.seed}",
                                    "output_dir": args.output_dir, **parse_overrides(args.set)})
    result = train(config)
    print(json.dumps(result, indent=2))
    if args.install:
        target = BUILTIN_MODELS["toyworld"]
        shutil.rmtree(target, ignore_errors=True)
        # `last` is a link to the current version (backend.train.checkpoint): copy what it points to
        shutil.copytree(Path(result["last"]).resolve(), target, ignore=shutil.ignore_patterns("trainer_state.pt"))
        print(f"installed as the built-in model 'toyworld' at {target}")
    return 0


def _finetune(args: argparse.Namespace) -> int:
    from backend.train.loop import train

    overrides = {"output_dir": args.output_dir, **parse_overrides(args.set)}  # --set wins over flags
    result = train(toy_finetune_config(args.recipe, args.seed, **overrides))
    print(json.dumps(result, indent=2))
    return 0


def add_parsers(subparsers) -> None:
    train = subparsers.add_parser("train", help="finetune a model (NegCLIP, CE-CLIP, HP+HN, TROHN-Img, CLIP)",
                                  description="Run a training config; resumes from the run's last checkpoint.")
    train.add_argument("--config", help="YAML file with TrainConfig fields")
    train.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields")
    train.add_argument("--job-id", type=int, default=None, help="job row to report to (set by backend.jobs)")
    train.add_argument("--db", default=None, help="SQLite store of that job")
    train.set_defaults(handler=_train)

    world = subparsers.add_parser("toyworld", help="the built-in compositional world")
    actions = world.add_subparsers(dest="action", required=True)
    pretrain = actions.add_parser("pretrain", help="reproduce the shipped tiny CLIP")
    pretrain.add_argument("--seed", type=int, default=0)
    pretrain.add_argument("--output-dir", default="", help="default: the runs_dir setting")
    pretrain.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    pretrain.add_argument("--install", action="store_true", help="copy the result to models/toyclip-v1")
    pretrain.set_defaults(handler=_pretrain)
    finetune = actions.add_parser("finetune", help="finetune the shipped model with a named recipe")
    finetune.add_argument("--recipe", required=True, choices=list(TOY_FINETUNES))
    finetune.add_argument("--seed", type=int, default=0)
    finetune.add_argument("--output-dir", default="", help="default: the runs_dir setting")
    finetune.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    finetune.set_defaults(handler=_finetune)
