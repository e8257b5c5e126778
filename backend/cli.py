"""Command-line interface. Each subcommand is a small function over the same backend the UI uses."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Callable, Sequence

from backend.annotate.cli import add_campaign_parser
from backend.auth import PermissionDenied
from backend.jobs.cli import add_jobs_parser
from backend.settings import add_settings_parser
from backend.train import commands as train_commands

Command = Callable[[argparse.Namespace], int]
# backend.perturb.grammar.DEFAULT_GRAMMAR_MODEL (a test checks): importing it would load spaCy for --help.
DEFAULT_GRAMMAR_MODEL = "textattack/roberta-base-CoLA"


def _probe(args: argparse.Namespace) -> int:
    # Imported here: torch and open_clip take seconds to import, `--help` should not.
    from backend.encoder import EmbeddingCache
    from backend.models import ModelRegistry
    from backend.perturb import PROBE_DEFAULT_FAMILIES
    from backend.probe import run_probe

    specs = args.model
    if not specs:  # the model the app opens with, so `probe` works offline out of the box
        from backend.catalog import PRETRAINED_CHOICES, default_models
        specs = default_models()
        if not specs:
            print("error: no --model given and no default model is available (no well-known pretrained "
                  "model in the local Hugging Face cache, and the built-in toyworld model is missing); "
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
    result = run_probe(args.image, args.caption, specs, registry, EmbeddingCache(),
                       families=args.families or list(PROBE_DEFAULT_FAMILIES), seed=args.seed, extra=args.extra,
                       plausible_only=args.plausible_only, grammar_filter=grammar)
    for error in result.errors:
        print(f"warning: {error}", file=sys.stderr)
    if args.json:
        json.dump(result.as_dict(), sys.stdout, indent=2)
        print()
        return 0
    for model in result.models:
        print(_summary_line(model))
        if model["plausible_only"]:
            print(f"  note: metrics over plausible negatives only; {model['n_implausible']} implausible left out")
        for note in model["notes"]:
            print(f"  note: {note}")
        for warning in model["warnings"]:
            print(f"  WARNING: its numbers are not meaningful for this caption: {warning}")
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


def _add_runtime_options(parser: argparse.ArgumentParser) -> None:
    """Where and how models run, and the output format: the same for every model command."""
    parser.add_argument("--device", default=None, help="cuda, cuda:1, mps or cpu (default: the best available)")
    parser.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default=None,
                        help="default: bf16/fp16 autocast on GPU, fp32 on CPU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _add_probe(subparsers) -> None:
    parser = subparsers.add_parser("probe", help="score a caption and its perturbations against an image",
                                   description="Perturb a caption and score every variant with each model.")
    parser.add_argument("--image", required=True, help="image file")
    parser.add_argument("--caption", required=True)
    parser.add_argument("--model", nargs="+", default=None, metavar="SPEC",
                        help="e.g. ViT-B-32-quickgelu:openai, hf-hub:org/name, local-dir:PATH (default: "
                             "the app's default model: the first well-known pretrained model whose weights "
                             "are already in the local Hugging Face cache, else the built-in 'toyworld' "
                             "model; the choice is printed to stderr)")
    parser.add_argument("--families", nargs="+", default=None,
                        help="perturbation families (default: every family but negclip_swap, NegCLIP's own noisy "
                             "swaps): aro_order negclip_swap replace binding_swap ce_clip hard_positive")
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
    _add_runtime_options(parser)
    parser.set_defaults(handler=_probe)


def _evaluate(args: argparse.Namespace) -> int:
    # Imported here: torch and open_clip take seconds to import, `--help` should not.
    from backend.benchmarks import evaluate_report, get_benchmark
    from backend.models import ModelLoadError, load_model

    for name in args.benchmarks:
        get_benchmark(name)  # a bad name fails before any model is loaded
    reports = []
    for spec in args.model:  # one model in memory at a time
        try:
            loaded = load_model(spec, device=args.device, precision=args.precision)
        except ModelLoadError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        reports.append(evaluate_report(args.benchmarks, loaded, limit=args.limit))
        del loaded
    if args.json:
        json.dump({"limit": args.limit, "models": [r.as_dict() for r in reports]}, sys.stdout, indent=2)
        print()
        return 0
    for report in reports:
        print(f"{report.identity['model']} ({report.identity['activation']}, {report.identity['precision']}): "
              f"{report.seconds:.1f} s")
        for note in report.notes:
            print(f"  note: {note}")
    versions = sorted({v for r in reports for v in r.benchmark_versions.values()})
    print(f"benchmark version: {', '.join(versions)}" + (f" (first {args.limit} items)" if args.limit else ""))
    writer = csv.writer(sys.stdout, dialect="excel-tab")
    writer.writerow(["metric", *(f"{r.identity['model']} ({r.identity['activation']}, {r.identity['precision']})"
                                 for r in reports)])
    for metric in reports[0].metrics:
        writer.writerow([metric, *(f"{100 * r.metrics[metric]:.1f}" for r in reports)])
    return 0


def _add_evaluate(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="run benchmarks on one or more models",
                                   description="Benchmark metrics (percent) per model: rows metrics, "
                                               "columns models, each with its activation and precision.")
    parser.add_argument("--model", nargs="+", required=True, metavar="SPEC",
                        help="e.g. ViT-B-32-quickgelu:openai, hf-hub:org/name, local-dir:PATH")
    parser.add_argument("--benchmarks", nargs="+", required=True, metavar="NAME",
                        help="e.g. toy-sugarcrepe toy-bivlc toy-retrieval")
    parser.add_argument("--limit", type=int, default=None,
                        help="use only the first N items per type (quick looks; numbers not comparable)")
    _add_runtime_options(parser)
    parser.set_defaults(handler=_evaluate)


def _patch(args: argparse.Namespace) -> int:
    from backend.models import load_model
    from backend.patching import sweep

    pretrained, finetuned = (load_model(spec, device=args.device, precision=args.precision)
                             for spec in (args.pretrained, args.finetuned))
    rows = sweep(pretrained, finetuned, args.alphas, args.benchmarks)
    if args.json:
        json.dump({"pretrained": args.pretrained, "finetuned": args.finetuned, "activation": pretrained.activation,
                   "rows": rows}, sys.stdout, indent=2)
        print()
        return 0
    writer = csv.writer(sys.stdout, dialect="excel-tab")
    writer.writerow(["alpha", *[name for name in rows[0] if name != "alpha"]])
    for row in rows:
        writer.writerow([f"{row['alpha']:g}", *(f"{100 * v:.1f}" for k, v in row.items() if k != "alpha")])
    return 0


def _add_patch(subparsers) -> None:
    parser = subparsers.add_parser("patch", help="interpolate pretrained and finetuned weights (WiSE-FT/CLOVe)",
                                   description="w = (1-a) w_pretrained + a w_finetuned, evaluated per alpha.")
    parser.add_argument("--pretrained", required=True, metavar="SPEC")
    parser.add_argument("--finetuned", required=True, metavar="SPEC")
    parser.add_argument("--alphas", nargs="+", type=float, default=[0, 0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--benchmarks", nargs="+", required=True, metavar="NAME")
    _add_runtime_options(parser)
    parser.set_defaults(handler=_patch)


PARSER_BUILDERS = [_add_probe, _add_evaluate, _add_patch, train_commands.add_parsers, add_jobs_parser,
                   add_settings_parser, add_campaign_parser]


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
    except (ValueError, PermissionDenied) as error:  # input errors (ProbeInputError is one) are the user's to fix
        print(f"error: {error}", file=sys.stderr)
        return 2
