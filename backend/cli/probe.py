"""`python -m backend probe`: perturb a caption and score every variant against an image with each model."""
from __future__ import annotations

import argparse
import csv
import json
import sys

from backend import plugins
from backend.cli import options
from backend.perturb import FAMILIES
from backend.perturb.grammar import DEFAULT_GRAMMAR_MODEL


def _probe(args: argparse.Namespace) -> int:
    # Imported here: torch and open_clip take seconds to import, `--help` should not.
    from backend.models.registry import EmbeddingCache, ModelRegistry
    from backend.perturb import PROBE_DEFAULT_FAMILIES
    from backend.probe import run_probe

    specs = args.model
    if not specs:  # the model the app opens with, so `probe` works offline out of the box
        from backend.models.choices import PRETRAINED_CHOICES, default_models
        specs = default_models()
        if not specs:
            print("error: no --model given and no default model is available (no well-known pretrained "
                  "model in the local Hugging Face cache, and no built-in model is installed); "
                  "pass --model SPEC", file=sys.stderr)
            return 2
        why = ("its weights are in the local Hugging Face cache" if specs[0] in PRETRAINED_CHOICES else
               "built in; no well-known pretrained model is in the local Hugging Face cache")
        print(f"note: no --model given; using the default model {specs[0]} ({why})", file=sys.stderr)
    registry = ModelRegistry(max_models=len(specs), device=args.device, precision=args.precision)
    grammar = None
    if args.grammar_model:  # a failed load raises GrammarModelError (a ValueError): main reports it
        from backend.perturb.grammar import GrammarFilter
        grammar = GrammarFilter.from_pretrained(args.grammar_model, threshold=args.grammar_threshold,
                                                device=args.device)
    from backend.perturb.blind import load_scorer

    blind = load_scorer(args.blind_model, args.device)  # a failed load raises ScorerError (a ValueError)
    result = run_probe(args.image, args.caption, specs, registry, EmbeddingCache(),
                       families=args.families or list(PROBE_DEFAULT_FAMILIES), seed=args.seed, extra=args.extra,
                       plausible_only=args.plausible_only, grammar_filter=grammar, blind_scorer=blind)
    for error in result.errors:
        print(f"warning: {error}", file=sys.stderr)
    if args.json:
        json.dump(result.as_dict(), sys.stdout, indent=2)
        print()
        return 0
    for model in result.models:
        print(_summary_line(model))
        if model["n_unreadable"]:
            print(f"  note: {model['n_unreadable']} variant(s) it reads with <unk> are left out of its metrics")
        if model["plausible_only"]:
            print(f"  note: metrics over plausible negatives only; {model['n_implausible']} implausible left out")
        for note in model["notes"]:
            print(f"  note: {note}")
        for warning in model["warnings"]:
            print(f"  WARNING: its numbers are not meaningful for this caption: {warning}")
    from backend.probe import percent

    print(f"text only (blind): accuracy vs negatives {percent(result.blind['accuracy'])} of "
          f"{result.blind['n_negatives']} ({result.blind['scorer']}): a model at or below this is explained by "
          "language priors alone")
    rows = result.rows()
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), dialect="excel-tab")
    writer.writeheader()
    writer.writerows(rows)
    return 0


def _summary_line(model: dict) -> str:
    from backend.probe import percent  # backend.probe imports torch: only when a probe ran
    return (f"{model['model']} ({model['activation']}, {model['precision']}): "
            f"accuracy vs negatives {percent(model['accuracy'])} of {model['n_negatives']}, "
            f"augmented {percent(model['augmented_acc'])}, brittleness {percent(model['brittleness'])}")


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("probe", help="score a caption and its perturbations against an image",
                                   description="Perturb a caption and score every variant with each model.")
    parser.add_argument("--image", required=True, help="image file")
    parser.add_argument("--caption", required=True)
    parser.add_argument("--model", nargs="+", default=None, metavar="SPEC",
                        help="e.g. ViT-B-32-quickgelu:openai, hf-hub:org/name, local-dir:PATH (default: "
                             "the app's default model: the first well-known pretrained model whose weights "
                             "are already in the local Hugging Face cache, else the first built-in model ("
                             f"{', '.join(plugins.hooks().models) or 'none installed'}); the choice is printed to "
                             "stderr)")
    parser.add_argument("--families", nargs="+", default=None,
                        help="perturbation families (default: every family but negclip_swap, NegCLIP's own noisy "
                             f"swaps): {' '.join(FAMILIES)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extra", nargs="*", default=[],
                        help="extra captions to score; prefix '-' for a negative, '+' for a positive")
    parser.add_argument("--plausible-only", action="store_true",
                        help="metrics over plausible negatives only, leaving out those absurd on their face "
                             "(\"a bench sitting on a man\"); the table still lists every variant")
    parser.add_argument("--grammar-model", nargs="?", const=DEFAULT_GRAMMAR_MODEL, default=None, metavar="ID",
                        help="also mark generated negatives that a CoLA classifier (hub id or local folder) "
                             f"finds ungrammatical as implausible; alone: {DEFAULT_GRAMMAR_MODEL}, as in BiVLC")
    parser.add_argument("--grammar-threshold", type=float, default=0.5, metavar="P",
                        help="with --grammar-model: a negative whose probability of being acceptable is "
                             "below P is implausible (default 0.5)")
    parser.add_argument("--blind-model", default="ngram", metavar="ID",
                        help="the text-only scorer of the blind row: 'ngram' (default, offline: a trigram model "
                             "over public COCO captions shipped with the lab), or a Hugging Face causal or "
                             "masked language model (hub id or local folder)")
    options.add_device(parser)
    options.add_json(parser)
    parser.set_defaults(handler=_probe)
