"""Command-line interface. Each subcommand is a small function over the same backend the UI uses."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Callable, Sequence

from backend.perturb import FAMILIES

Command = Callable[[argparse.Namespace], int]


def _probe(args: argparse.Namespace) -> int:
    # Imported here: torch and open_clip take seconds to import, `--help` should not.
    from backend.encoder import EmbeddingCache
    from backend.models import ModelRegistry
    from backend.probe import run_probe

    registry = ModelRegistry(max_models=len(args.model), device=args.device, precision=args.precision)
    result = run_probe(args.image, args.caption, args.model, registry, EmbeddingCache(),
                       families=args.families, seed=args.seed, extra=args.extra)
    for error in result.errors:
        print(f"warning: {error}", file=sys.stderr)
    if args.json:
        json.dump(result.as_dict(), sys.stdout, indent=2)
        print()
        return 0
    for model in result.models:
        print(_summary_line(model))
        for note in model["notes"]:
            print(f"  note: {note}")
    rows = result.rows()
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), dialect="excel-tab")
    writer.writeheader()
    writer.writerows(rows)
    return 0


def _summary_line(model: dict) -> str:
    def pct(value):
        return "n/a" if value is None else f"{100 * value:.1f}%"
    return (f"{model['model']} ({model['activation']}, {model['precision']}): "
            f"accuracy vs negatives {pct(model['accuracy'])} of {model['n_negatives']}, "
            f"augmented {pct(model['augmented_acc'])}, brittleness {pct(model['brittleness'])}")


def _add_probe(subparsers) -> None:
    parser = subparsers.add_parser("probe", help="score a caption and its perturbations against an image",
                                   description="Perturb a caption and score every variant with each model.")
    parser.add_argument("--image", required=True, help="image file")
    parser.add_argument("--caption", required=True)
    parser.add_argument("--model", nargs="+", required=True, metavar="SPEC",
                        help="e.g. ViT-B-32-quickgelu:openai, hf-hub:org/name, local-dir:PATH")
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=None,
                        help="perturbation families (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extra", nargs="*", default=[],
                        help="extra captions to score; prefix '-' for a negative, '+' for a positive")
    parser.add_argument("--device", default=None)
    parser.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default=None)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=_probe)


PARSER_BUILDERS = [_add_probe]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend",
                                     description="Compositionality Lab: probe, benchmark and finetune CLIP-like models.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for add in PARSER_BUILDERS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except ValueError as error:  # input errors (ProbeInputError is one) are the user's to fix
        print(f"error: {error}", file=sys.stderr)
        return 2
