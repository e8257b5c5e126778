"""`python -m backend toyworld pretrain | finetune`: reproduce the shipped tiny CLIP, or finetune it with a named
recipe (docs/TOYWORLD.md). Added to the command line by `backend.toyworld.plugin`."""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from backend.toyworld import recipes
from backend.toyworld.plugin import SHIPPED_MODEL
from backend.train.config import parse_overrides


def _pretrain(args: argparse.Namespace) -> int:
    from backend.train.config import TrainConfig
    from backend.train.loop import train

    config = TrainConfig.from_dict({**recipes.PRETRAIN, "seed": args.seed,
                                    "name": f"toyworld-pretrain-seed{args.seed}",
                                    "output_dir": args.output_dir, **parse_overrides(args.set)})
    result = train(config)
    print(json.dumps(result, indent=2))
    if args.install:
        target = SHIPPED_MODEL
        shutil.rmtree(target, ignore_errors=True)
        # `last` is a link to the current version (backend.models.checkpoint): copy what it points to
        shutil.copytree(Path(result["last"]).resolve(), target, ignore=shutil.ignore_patterns("trainer_state.pt"))
        print(f"installed as the built-in model 'toyworld' at {target}")
    return 0


def _finetune(args: argparse.Namespace) -> int:
    from backend.train.loop import train

    overrides = {"output_dir": args.output_dir, **parse_overrides(args.set)}  # --set wins over flags
    result = train(recipes.finetune_config(args.recipe, args.seed, **overrides))
    print(json.dumps(result, indent=2))
    return 0


def add_parsers(subparsers) -> None:
    world = subparsers.add_parser("toyworld", help="the built-in compositional world")
    actions = world.add_subparsers(dest="action", required=True)
    pretrain = actions.add_parser("pretrain", help="reproduce the shipped tiny CLIP")
    pretrain.add_argument("--seed", type=int, default=0)
    pretrain.add_argument("--output-dir", default="", help="default: the runs_dir setting")
    pretrain.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    pretrain.add_argument("--install", action="store_true", help="copy the result to models/toyclip-v1")
    pretrain.set_defaults(handler=_pretrain)
    finetune = actions.add_parser("finetune", help="finetune the shipped model with a named recipe")
    finetune.add_argument("--recipe", required=True, choices=list(recipes.FINETUNES))
    finetune.add_argument("--seed", type=int, default=0)
    finetune.add_argument("--output-dir", default="", help="default: the runs_dir setting")
    finetune.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    finetune.set_defaults(handler=_finetune)
