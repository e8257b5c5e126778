"""`python -m backend evaluate | sweep | export-patched | benchmarks | leaderboard | failures | compare`.

The same functions the Benchmarks and Sweep tabs call: `evaluate` runs
`job.evaluate_models` in this process (progress bars on stderr) or, with
`--job`, launches the `evaluate` job (any target, torchrun included) and
follows its log. Results go to the store (the `db` setting) unless
`--no-store`, so the leaderboard sees command-line runs too.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys

from backend.cli import options
from backend.cli.options import config_default
from backend.cli.sweep import add_export_options, check_exports, write_exports
from backend.core.auth import cli_actor

TABLE = "excel-tab"


def _progress_bar():
    """A tqdm bar over the whole run (fractions), its description the current model and benchmark."""
    from tqdm import tqdm

    bar = tqdm(total=1000, file=sys.stderr, bar_format="{desc} {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")

    def update(fraction: float, message: str) -> None:
        bar.set_description_str(message.split(":")[0])
        bar.update(int(fraction * 1000) - bar.n)
    return bar, update


def _config(args: argparse.Namespace):
    from backend.benchmarks.job import EvaluateConfig

    return EvaluateConfig.from_dict({"models": args.model, "benchmarks": args.benchmarks, "limit": args.limit,
                                     "device": args.device or "", "precision": args.precision or "",
                                     "batch_size": args.batch_size, "workers": args.workers,
                                     "data_root": args.data_root or ""})


def _evaluate(args: argparse.Namespace) -> int:
    from backend import jobs
    from backend.benchmarks.job import evaluate_models
    from backend.core.store import Store

    config = _config(args)  # bad benchmark names and options fail before any model loads
    store = None if args.no_store else Store(args.db)
    if args.job:
        job_id = jobs.submit(cli_actor(), "evaluate", config.to_dict(), args.target, options.target_options(args),
                             store=store or Store())
        print(f"job {job_id}", file=sys.stderr, flush=True)
        status = jobs.follow(store or Store(), job_id, sys.stderr)
        return 0 if status == "done" else 1
    bar, update = _progress_bar()
    try:
        summaries = evaluate_models(config, store, progress=update)
    finally:
        bar.close()
    tests = _paired_tests(store, summaries) if store is not None else []
    if args.json:
        json.dump({"limit": args.limit, "results": summaries, "paired_tests": tests}, sys.stdout, indent=2)
        print()
        return 0
    _print_summaries(summaries, args.limit)
    for test in tests:
        print(f"{test['benchmark']}: A = {test['a']}, B = {test['b']}: {test['line']}")
    return 0


def _paired_tests(store, summaries: list[dict]) -> list[dict]:
    """Per benchmark, the first model against each other one on the same items (stored per-item flags)."""
    from backend.benchmarks.results import model_label, paired_test

    tests = []
    for benchmark in dict.fromkeys(s["benchmark"] for s in summaries):
        runs = [s for s in summaries if s["benchmark"] == benchmark and "result_id" in s]
        for other in runs[1:]:
            try:
                test = paired_test(store, runs[0]["result_id"], other["result_id"])
            except ValueError:  # a benchmark without per-item flags (a gallery task): nothing to pair
                continue
            tests.append({"benchmark": benchmark, "a": model_label(runs[0]), "b": model_label(other),
                          **_test_fields(test)})
    return tests


def _test_fields(test) -> dict:
    """A `PairedTest` as JSON fields, with the line the table prints."""
    return {**dataclasses.asdict(test), "interval": list(test.interval), "line": test.line()}


def cell(value: float, bounds=None) -> str:
    """A metric in percent, with its 95% interval when it has one: ``76.56 [75.61, 77.52]``."""
    text = f"{100 * value:.2f}"
    return text + (f" [{100 * bounds[0]:.2f}, {100 * bounds[1]:.2f}]" if bounds else "")


def _print_summaries(summaries: list[dict], limit: int | None) -> None:
    """Rows metrics, columns models (percent with the 95% bootstrap interval); one header line per model with
    activation, precision and time."""
    models = list(dict.fromkeys((s["model"], s["activation"], s["precision"]) for s in summaries))
    for summary in summaries:
        print(f"{summary['model']} ({summary['activation']}, {summary['precision']}) on {summary['benchmark']} "
              f"[{summary['version']}]: {summary['seconds']} s")
        for note in summary["notes"]:
            print(f"  note: {note}")
    if limit:
        print(f"first {limit} items per subset: numbers not comparable with full runs")
    values = {(s["model"], s["activation"], s["precision"], f"{s['benchmark']}/{k}"):
              cell(v, s.get("intervals", {}).get(k)) for s in summaries for k, v in s["metrics"].items()}
    metrics = list(dict.fromkeys(key[3] for key in values))
    writer = csv.writer(sys.stdout, dialect=TABLE)
    writer.writerow(["metric", *(f"{m} ({a}, {p})" for m, a, p in models)])
    for metric in metrics:
        writer.writerow([metric, *(values.get((*model, metric), "-") for model in models)])
    print("[low, high]: 95% percentile bootstrap interval over the benchmark's items (docs/REFERENCE.md)")


def _sweep(args: argparse.Namespace) -> int:
    check_exports(args)
    from backend.models.loading import load_model
    from backend.patching.config import SweepConfig
    from backend.patching.sweep import recommend, sweep

    config = SweepConfig.from_dict({"pretrained": args.pretrained, "finetuned": args.finetuned,
                                    "alphas": args.alphas, "compositional": args.compositional,
                                    "object_centric": args.object_centric, "tolerance": args.tolerance,
                                    "limit": args.limit, "data_root": args.data_root or ""})
    pretrained, finetuned = (load_model(spec, device=args.device, precision=args.precision)
                             for spec in (config.pretrained, config.finetuned))
    rows = sweep(pretrained, finetuned, config.alphas, config.benchmarks, config.limit, config.data_root or None,
                 on_alpha=lambda i, row: print(f"alpha {row['alpha']:g} done", file=sys.stderr, flush=True))
    best = recommend(rows, config.compositional, config.object_centric, config.tolerance)
    write_exports(args, {"rows": rows, "compositional": config.compositional,
                         "object_centric": config.object_centric, "recommended": best})
    if args.json:
        json.dump({"pretrained": config.pretrained, "finetuned": config.finetuned,
                   "activation": pretrained.activation, "rows": rows, "recommended": best}, sys.stdout, indent=2)
        print()
        return 0
    writer = csv.writer(sys.stdout, dialect=TABLE)
    writer.writerow(["alpha", config.object_centric, config.compositional])
    for row in rows:
        writer.writerow([f"{row['alpha']:g}", f"{100 * row[config.object_centric]:.2f}",
                         f"{100 * row[config.compositional]:.2f}"])
    print(f"recommended alpha {best['alpha']:g}: {best['criterion']}")
    return 0


def _export_patched(args: argparse.Namespace) -> int:
    from backend.core.settings import get_settings
    from backend.patching.sweep import export_patched

    spec = export_patched(args.pretrained, args.finetuned, args.alpha, args.name,
                          args.models_dir or get_settings().models_dir)
    print(spec)
    return 0


def _benchmarks(args: argparse.Namespace) -> int:
    """Every benchmark, its version, and whether its data is here (else the steps to get it)."""
    from backend.benchmarks import available_benchmarks, get_benchmark, prepare
    from backend.benchmarks.data import DataMissing

    for name in available_benchmarks(args.data_root):
        benchmark = get_benchmark(name)
        print(f"{name}\t{benchmark.version}\t{benchmark.description}")
        if args.check:
            try:
                task = prepare(name, None, args.data_root)
                print(f"  ready: {task.n_items} items, {len(task.images)} images, {len(task.texts)} texts")
            except DataMissing as missing:
                print("  " + str(missing).replace("\n", "\n  "))
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from backend.benchmarks.reference import reference_rows
    from backend.benchmarks.results import leaderboard
    from backend.core.settings import get_settings
    from backend.core.store import Store
    from backend.models.choices import model_names

    store = Store(args.db)
    names = model_names(store, get_settings().models_dir)  # rows named as the Benchmarks tab names them
    board = leaderboard(store, args.benchmarks or (), reference_rows=reference_rows(), names=names)
    sys.stdout.write(board.to_csv())
    return 0


def _failures(args: argparse.Namespace) -> int:
    from backend.benchmarks.results import disagreements, items
    from backend.core.store import Store

    store = Store(args.db)
    rows = (disagreements(store, args.result, args.versus, args.limit) if args.versus else
            items(store, args.result, subtype=args.subtype, limit=args.limit))
    for row in rows:
        print(json.dumps({k: row[k] for k in ("position", "item_id", "subtype", "correct", "texts", "scores",
                                               "images", "other_correct") if k in row}))
    return 0


def _compare(args: argparse.Namespace) -> int:
    from backend.benchmarks.results import paired_test
    from backend.core.store import Store

    test = paired_test(Store(args.db), args.result, args.versus)
    if args.json:
        json.dump(_test_fields(test), sys.stdout, indent=2)
        print()
    else:
        print(f"A = result {args.result}, B = result {args.versus}: {test.line()}")
    return 0


def _runtime(parser: argparse.ArgumentParser) -> None:
    options.add_device(parser)
    options.add_limit_and_data(parser)
    options.add_json(parser)


def add_parsers(subparsers) -> None:
    """Register evaluate, sweep, export-patched, benchmarks, leaderboard and failures."""
    from backend.benchmarks.job import EvaluateConfig  # light: dataclasses, no torch
    from backend.patching.config import SweepConfig

    evaluate = subparsers.add_parser("evaluate", help="run benchmarks on one or more models",
                                     description="Benchmark metrics (percent): rows metrics, columns models, each "
                                                 "with its activation and precision. Results are stored for the "
                                                 "leaderboard.")
    evaluate.add_argument("--model", nargs="+", required=True, metavar="SPEC",
                          help="e.g. ViT-B-32-quickgelu:openai, hf-hub:org/name, local-dir:PATH, or a built-in "
                               "model's name")
    evaluate.add_argument("--benchmarks", nargs="+", required=True, metavar="NAME",
                          help="e.g. sugarcrepe bivlc aro-vg-relation (`benchmarks` lists them)")
    evaluate.add_argument("--batch-size", type=int, default=config_default(EvaluateConfig, "batch_size"))
    evaluate.add_argument("--workers", type=int, default=config_default(EvaluateConfig, "workers"),
                          help="DataLoader workers decoding images")
    evaluate.add_argument("--no-store", action="store_true", help="do not save the results in the store")
    options.add_db(evaluate)
    evaluate.add_argument("--job", action="store_true", help="run as a background job and follow its log")
    options.add_target(evaluate)
    _runtime(evaluate)
    evaluate.set_defaults(handler=_evaluate)

    sweep = subparsers.add_parser("sweep", aliases=["patch"],
                                  help="interpolate pretrained and finetuned weights per alpha (WiSE-FT/CLOVe)",
                                  description="w = (1-a) w_pretrained + a w_finetuned on one model instance, "
                                              "evaluated per alpha; recommends an alpha.")
    sweep.add_argument("--pretrained", required=True, metavar="SPEC")
    sweep.add_argument("--finetuned", required=True, metavar="SPEC")
    sweep.add_argument("--alphas", nargs="+", type=float, default=config_default(SweepConfig, "alphas"))
    sweep.add_argument("--compositional", default=config_default(SweepConfig, "compositional"),
                       metavar="BENCHMARK/METRIC")
    sweep.add_argument("--object-centric", default=config_default(SweepConfig, "object_centric"),
                       metavar="BENCHMARK/METRIC")
    sweep.add_argument("--tolerance", type=float, default=config_default(SweepConfig, "tolerance"),
                       help="object-centric drop allowed for the recommendation (fraction; 0.01 = 1 point)")
    add_export_options(sweep)
    _runtime(sweep)
    sweep.set_defaults(handler=_sweep)

    export = subparsers.add_parser("export-patched", help="write a patched model (safetensors + config)")
    export.add_argument("--pretrained", required=True, metavar="SPEC")
    export.add_argument("--finetuned", required=True, metavar="SPEC")
    export.add_argument("--alpha", required=True, type=float)
    export.add_argument("--name", required=True)
    export.add_argument("--models-dir", default=None, help="default: the models_dir setting")
    export.set_defaults(handler=_export_patched)

    listing = subparsers.add_parser("benchmarks", help="list benchmarks; --check says which have their data")
    listing.add_argument("--check", action="store_true", help="load each and print its size or how to get it")
    listing.add_argument("--data-root", default=None)
    listing.set_defaults(handler=_benchmarks)

    board = subparsers.add_parser("leaderboard", help="stored results as CSV, with chance and published rows")
    board.add_argument("--benchmarks", nargs="*", default=None)
    options.add_db(board)
    board.set_defaults(handler=_leaderboard)

    failures = subparsers.add_parser("failures", help="items a stored result got wrong (JSON lines)")
    failures.add_argument("result", type=int, help="result id (see `leaderboard` or the Benchmarks tab)")
    failures.add_argument("--subtype", default=None)
    failures.add_argument("--versus", type=int, default=None, help="another result id: items where they disagree")
    failures.add_argument("--limit", type=int, default=50)
    options.add_db(failures)
    failures.set_defaults(handler=_failures)

    compare = subparsers.add_parser("compare", help="paired test of two stored results on the same items",
                                    description="Exact McNemar test on the items' correct flags (p-value, "
                                                "discordant items) and a 95% paired bootstrap interval of the "
                                                "accuracy difference A - B.")
    compare.add_argument("result", type=int, help="result A (ids: `leaderboard`, the Benchmarks tab, --json)")
    compare.add_argument("versus", type=int, help="result B, on the same benchmark, version and limit")
    options.add_db(compare)
    options.add_json(compare)
    compare.set_defaults(handler=_compare)
