"""Evaluation throughput on SugarCrepe: our streaming evaluator against clip_benchmark's loop; alpha-sweep cost.

Data: the real SugarCrepe captions (``--data``, the 7 JSON files at the pinned
commit, checked by the loader's SHA-256s), the first ``--items`` items of each
subset, with one generated 640x480 JPEG per distinct COCO file name (smooth
random colour fields plus grain, ~100-200 KB like COCO's, so decoding costs
what a photo costs). Model: open_clip ViT-B-32, random init (no weights
needed), saved once; every side builds it the same way and loads that file,
so both evaluate bitwise-identical weights.

Measured, each side in a subprocess of its own (so peak RSS is its own; its
DataLoader workers' peak is read from RUSAGE_CHILDREN), after the same one-batch
warm-up, data already on disk, model already loaded:

* ours: ``sugarcrepe.build`` (JSON read, checksum, image check) then
  ``run_task`` with a ``StreamEncoder``: each distinct image decoded and encoded
  once (DataLoader workers), each distinct text once, shortest first, trimmed;
* peer: clip_benchmark 1.6.2 as its CLI runs SugarCrepe: per subset its
  ``SugarCrepe`` dataset (first N items), a DataLoader with the same batch size
  and workers and its ``image_captions_collate_fn``, then
  ``image_caption_selection.evaluate``: every item's image and both captions
  encoded in the item's batch, 77 tokens.

Same batch size, same workers. On CUDA ours runs bf16 autocast (the lab's
default precision) and clip_benchmark its amp (fp16 autocast); on CPU both fp32.
Accuracies are compared per subset (on CPU fp32 they must be identical;
under autocast both round differently, so a few near-tied items may flip).

``--suite 2x2`` and ``--suite retrieval`` (``all``, the default, runs the three comparisons and the sweep) compare
the same two loops on a 2x2 benchmark (NaturalBench-Retrieval's layout) and on a retrieval gallery (our
``coco-retrieval`` loader), both built from the same captions and JPEGs: see ``eval_throughput_tasks.py``.

Sweep cost: ``--alphas`` evaluations of ``--sweep-items`` items per subset,
(a) in place: ONE model instance, per alpha ``backend.patching.sweep.apply_alpha``
(``torch.lerp`` of the pretrained and finetuned state dicts into the model's
tensors, under no_grad) then ``evaluate_many``; (b) the plain way: per
evaluation ``create_model`` + ``load_state_dict`` from the safetensors file then
``evaluate_many``. Checks: alpha 0 scores like the pretrained file, alpha 1
like the finetuned file.

    .venv/bin/python bench/eval_throughput.py [--data ../shared/data/sugar-crepe] [--items N] [--batch-size 64]
        [--workers 2] [--device auto] [--alphas 11] [--sweep-items 10] [--keep DIR]
        [--suite all|sugarcrepe|2x2|retrieval]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import eval_throughput_tasks as tasks  # noqa: E402 (this folder is on sys.path when the script runs)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")  # clip_benchmark's progress bar

ARCH = "ViT-B-32"
SIDES = ("ours", "peer")
TARGET_SPEEDUP, TARGET_SWEEP = 2.0, 1.2  # issue 23: ours >= 2x clip_benchmark


# -- data and weights (parent) -------------------------------------------------------------------

def synth_jpeg(job: tuple[str, int]) -> int:
    """One 640x480 JPEG: a smooth random colour field plus grain (a photo's entropy, not white noise's)."""
    import numpy as np
    from PIL import Image

    path, seed = job
    rng = np.random.default_rng(seed)
    field = Image.fromarray(rng.integers(0, 256, (15, 20, 3), dtype=np.uint8)).resize((640, 480), Image.BICUBIC)
    grain = rng.normal(0, 6, (480, 640, 3))
    Image.fromarray((np.asarray(field) + grain).clip(0, 255).astype(np.uint8)).save(path, quality=90)
    return os.path.getsize(path)


def lay_out_data(data: Path, root: Path, items: int | None) -> dict:
    """The real JSON files under ``root/sugarcrepe``, a JPEG per COCO file that the first ``items`` name."""
    from backend.benchmarks import sugarcrepe

    (root / sugarcrepe.ANNOTATIONS).mkdir(parents=True)
    images = root / sugarcrepe.COCO_VAL2017
    images.mkdir(parents=True)
    names: set[str] = set()
    n_items = 0
    for subset in sugarcrepe.SUBSETS:
        shutil.copy(data / f"{subset}.json", root / sugarcrepe.ANNOTATIONS / f"{subset}.json")
        rows = list(json.loads((data / f"{subset}.json").read_text()).values())[:items]
        n_items += len(rows)
        names.update(row["filename"] for row in rows)
    jobs = [(str(images / name), int(name.split(".")[0])) for name in sorted(names)]
    with multiprocessing.Pool(os.cpu_count()) as pool:
        sizes = pool.map(synth_jpeg, jobs, chunksize=16)
    return {"items": n_items, "images": len(names), "mean_jpeg_kib": sum(sizes) / len(sizes) / 1024}


def save_weights(work: Path) -> None:
    """Two random-init ViT-B-32 state dicts: 'pretrained' (seed 0) and 'finetuned' (seed 1)."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    for seed, name in ((0, "pretrained"), (1, "finetuned")):
        torch.manual_seed(seed)
        model = open_clip.create_model(ARCH)
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, work / f"{name}.safetensors")


# -- children -----------------------------------------------------------------------------------

def cpu_seconds() -> float:
    """CPU time of this process and its finished children (DataLoader workers end with their loader)."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


class Timer:
    """Wall and CPU seconds of a block: on a shared machine CPU time is the steadier of the two."""

    def __enter__(self) -> "Timer":
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()
        return self

    def __exit__(self, *exc) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, cpu_seconds() - self.cpu

    def as_dict(self) -> dict[str, float]:
        return {"seconds": self.wall, "cpu_seconds": self.cpu}


def make_model(weights: Path, device: str):
    """What every side evaluates: open_clip's ViT-B-32 with the saved weights, its transform and tokenizer."""
    import open_clip
    from safetensors.torch import load_file

    model, _, preprocess = open_clip.create_model_and_transforms(ARCH)
    model.load_state_dict(load_file(weights))
    return model.to(device).eval(), preprocess, open_clip.get_tokenizer(ARCH)


def loaded_model(weights: Path, device: str):
    from backend.models.loading import LoadedModel, pick_precision

    model, preprocess, tokenizer = make_model(weights, device)
    return LoadedModel(f"{ARCH} random init (bench)", model, preprocess, tokenizer, "gelu", device,
                       pick_precision(device))


def warm_up(model, tokenizer, device: str, autocast) -> None:
    """One small forward of each tower, so one-time costs (allocator, kernels) fall outside the timing."""
    import torch

    with torch.inference_mode(), autocast:
        model.encode_image(torch.randn(8, 3, 224, 224, device=device))
        model.encode_text(tokenizer(["a warm-up caption"] * 8).to(device))


def run_ours(args: argparse.Namespace) -> dict:
    from backend.benchmarks import run_task, sugarcrepe
    from backend.benchmarks.stream import StreamEncoder

    loaded = loaded_model(args.work / "pretrained.safetensors", args.device)
    warm_up(loaded.model, loaded.tokenizer, args.device, loaded.autocast())
    with Timer() as timer:
        task = sugarcrepe.build(args.items, args.work / "benchmarks")
        result = run_task(task, StreamEncoder(loaded, batch_size=args.batch_size, workers=args.workers))
    ties = (result.scores[:, 0, 0] == result.scores[:, 1, 0]).sum().item()
    return {**timer.as_dict(), "acc": {s: result.metrics[s] for s in sugarcrepe.SUBSETS}, "ties": ties,
            "precision": loaded.precision, "encoded": {"images": len(task.images), "texts": len(task.texts)}}


def run_peer(args: argparse.Namespace) -> dict:
    import torch
    from clip_benchmark.datasets.builder import image_captions_collate_fn
    from clip_benchmark.datasets.sugar_crepe import SugarCrepe
    from clip_benchmark.metrics import image_caption_selection
    from torch.utils.data import DataLoader, Subset

    from backend.benchmarks import sugarcrepe

    model, preprocess, tokenizer = make_model(args.work / "pretrained.safetensors", args.device)
    amp = args.device.startswith("cuda")
    warm_up(model, tokenizer, args.device, torch.autocast(args.device.split(":")[0], enabled=amp))
    root = args.work / "benchmarks"
    acc, images = {}, 0
    with Timer() as timer:
        for subset in sugarcrepe.SUBSETS:
            dataset = SugarCrepe(root=str(root / sugarcrepe.COCO_VAL2017),
                                 ann_file=str(root / sugarcrepe.ANNOTATIONS / f"{subset}.json"), transform=preprocess)
            dataset = Subset(dataset, range(min(len(dataset), args.items or len(dataset))))
            loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                                collate_fn=image_captions_collate_fn)
            acc[subset] = image_caption_selection.evaluate(model, loader, tokenizer, args.device, amp=amp)["acc"]
            images += len(dataset)
    return {**timer.as_dict(), "acc": acc, "precision": "fp16 amp" if amp else "fp32",
            "encoded": {"images": images, "texts": 2 * images}}


def sweep_metrics(loaded, args: argparse.Namespace) -> dict[str, float]:
    from backend.benchmarks import evaluate_many

    return evaluate_many(["sugarcrepe"], loaded, limit=args.sweep_items, batch_size=args.batch_size,
                         root=args.work / "benchmarks", workers=args.workers)


def alphas(count: int) -> list[float]:
    return [i / (count - 1) for i in range(count)]


def run_in_place(args: argparse.Namespace) -> dict:
    """ONE model instance; per alpha the lerped weights are written into it, then it is evaluated."""
    from safetensors.torch import load_file

    from backend.patching.sweep import apply_alpha

    loaded = loaded_model(args.work / "pretrained.safetensors", args.device)
    warm_up(loaded.model, loaded.tokenizer, args.device, loaded.autocast())
    start_sd = load_file(args.work / "pretrained.safetensors", device=args.device)
    end_sd = load_file(args.work / "finetuned.safetensors", device=args.device)
    sweep_metrics(loaded, args)  # builds (and caches) the task outside the timing, as the reload side does
    rows = []
    with Timer() as timer:
        for alpha in alphas(args.alphas):
            apply_alpha(loaded.model, start_sd, end_sd, alpha)
            rows.append(sweep_metrics(loaded, args))
    return {**timer.as_dict(), "rows": rows}


def run_reload(args: argparse.Namespace) -> dict:
    """Per evaluation a fresh model: create_model + load_state_dict from the file, then evaluate."""
    first = loaded_model(args.work / "pretrained.safetensors", args.device)
    warm_up(first.model, first.tokenizer, args.device, first.autocast())
    sweep_metrics(first, args)
    del first
    with Timer() as timer:
        rows = [sweep_metrics(loaded_model(args.work / "pretrained.safetensors", args.device), args)
                for _ in range(args.alphas)]
    finetuned = sweep_metrics(loaded_model(args.work / "finetuned.safetensors", args.device), args)
    return {**timer.as_dict(), "rows": rows, "finetuned": finetuned}


def ours_side(run):
    """A child that times ``run`` with our evaluator (the same model, warm-up and encoder settings as ``run_ours``)."""
    def child(args: argparse.Namespace) -> dict:
        from backend.benchmarks.stream import StreamEncoder

        loaded = loaded_model(args.work / "pretrained.safetensors", args.device)
        warm_up(loaded.model, loaded.tokenizer, args.device, loaded.autocast())
        return run(args, loaded, lambda m: StreamEncoder(m, batch_size=args.batch_size, workers=args.workers), Timer)
    return child


def peer_side(run):
    """A child that times ``run`` with clip_benchmark's loop (the same model and warm-up as ``run_peer``)."""
    def child(args: argparse.Namespace) -> dict:
        import torch

        model, preprocess, tokenizer = make_model(args.work / "pretrained.safetensors", args.device)
        amp = args.device.startswith("cuda")
        warm_up(model, tokenizer, args.device, torch.autocast(args.device.split(":")[0], enabled=amp))
        return run(args, model, preprocess, tokenizer, amp, Timer)
    return child


CHILDREN = {"ours": run_ours, "peer": run_peer, "in-place": run_in_place, "reload": run_reload,
            "ours-2x2": ours_side(tasks.run_ours_2x2), "peer-2x2": peer_side(tasks.run_peer_2x2),
            "ours-retrieval": ours_side(tasks.run_ours_retrieval),
            "peer-retrieval": peer_side(tasks.run_peer_retrieval)}


def child_main(args: argparse.Namespace) -> None:
    import torch

    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    out = CHILDREN[args.child](args)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["worker_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if args.device.startswith("cuda"):
        out["gpu_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
    print("RESULT " + json.dumps(out))


def spawn(child: str, args: argparse.Namespace) -> dict:
    """Run one side in a fresh interpreter; its last 'RESULT' line is its report."""
    command = [sys.executable, __file__, "--child", child, "--work", str(args.work), "--device", args.device,
               "--batch-size", str(args.batch_size), "--workers", str(args.workers),
               "--alphas", str(args.alphas), "--sweep-items", str(args.sweep_items)]
    if args.items:
        command += ["--items", str(args.items)]
    done = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        sys.exit(f"{child} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


# -- report (parent) ----------------------------------------------------------------------------

def rounds(pair: tuple[str, str], args: argparse.Namespace) -> list[dict[str, dict]]:
    """``--repeats`` rounds of both children, the order alternating, so drifting load hits both alike."""
    out = []
    for index in range(args.repeats):
        order = pair if index % 2 == 0 else pair[::-1]
        out.append({child: spawn(child, args) for child in order})
    return out


def median_of(runs: list[dict[str, dict]], child: str, key: str) -> float:
    return statistics.median(run[child][key] for run in runs)


def ratio_of(runs: list[dict[str, dict]], top: str, bottom: str, key: str = "seconds") -> float:
    """Median over rounds of the per-round ratio (each round's two children ran back to back)."""
    return statistics.median(run[top][key] / run[bottom][key] for run in runs)


def memory_text(side: dict) -> str:
    text = f"peak RSS {side['peak_rss_mib']:.0f} MiB (largest worker {side['worker_peak_rss_mib']:.0f} MiB)"
    return text + (f", GPU peak {side['gpu_peak_mib']:.0f} MiB" if "gpu_peak_mib" in side else "")


def report_throughput(runs: list[dict[str, dict]], data: dict) -> bool:
    for side in SIDES:
        r, seconds = runs[-1][side], median_of(runs, side, "seconds")
        print(f"  {side}: {data['items'] / seconds:7.1f} samples/s (median {seconds:.1f} s wall, "
              f"{median_of(runs, side, 'cpu_seconds'):.1f} s CPU; {r['precision']}; encoded "
              f"{r['encoded']['images']} images, {r['encoded']['texts']} texts), {memory_text(r)}")
    ratio = ratio_of(runs, "peer", "ours")
    per_round = ", ".join(f"{run['peer']['seconds'] / run['ours']['seconds']:.2f}" for run in runs)
    print(f"  speed-up ours/peer: {ratio:.2f}x wall (rounds: {per_round}), "
          f"{ratio_of(runs, 'peer', 'ours', 'cpu_seconds'):.2f}x CPU; target >= {TARGET_SPEEDUP}x: "
          f"{'PASS' if ratio >= TARGET_SPEEDUP else 'FAIL'}")
    ours, peer = runs[-1]["ours"]["acc"], runs[-1]["peer"]["acc"]
    same = all(abs(ours[s] - peer[s]) < 1e-6 for s in ours)
    print(f"  accuracies {'identical' if same else 'DIFFER'} per subset "
          f"(exact ties in our scores: {runs[-1]['ours']['ties']}):")
    for subset in ours:
        print(f"    {subset:12s} ours {ours[subset]:.4f}  peer {peer[subset]:.4f}")
    return ratio >= TARGET_SPEEDUP


def sweep_checks(in_place: dict, reload: dict) -> dict[str, bool]:
    return {"alpha 0 == pretrained file": in_place["rows"][0] == reload["rows"][0],
            "alpha 1 == finetuned file": in_place["rows"][-1] == reload["finetuned"],
            "every reload identical": all(row == reload["rows"][0] for row in reload["rows"])}


def report_sweep(runs: list[dict[str, dict]], args: argparse.Namespace) -> bool:
    ratio = ratio_of(runs, "in-place", "reload")
    for child, label in (("in-place", "in place (apply_alpha on one instance)"),
                         ("reload", "reload per evaluation (create_model + load_state_dict)")):
        print(f"  {label}: median {median_of(runs, child, 'seconds'):.1f} s wall, "
              f"{median_of(runs, child, 'cpu_seconds'):.1f} s CPU, {memory_text(runs[-1][child])}")
    print(f"  sweep cost in-place/reload: {ratio:.2f}x wall, {ratio_of(runs, 'in-place', 'reload', 'cpu_seconds'):.2f}x "
          f"CPU; target <= {TARGET_SWEEP}x: {'PASS' if ratio <= TARGET_SWEEP else 'FAIL'}")
    checks = sweep_checks(runs[-1]["in-place"], runs[-1]["reload"])
    print("  checks: " + ", ".join(f"{name}: {'ok' if ok else 'FAILED'}" for name, ok in checks.items()))
    overall = [f"{row['sugarcrepe/overall']:.3f}" for row in runs[-1]["in-place"]["rows"]]
    print(f"  overall accuracy per alpha 0..1: {' '.join(overall)}")
    return ratio <= TARGET_SWEEP and all(checks.values())


def parent_main(args: argparse.Namespace) -> None:
    args.work.mkdir(parents=True, exist_ok=True)
    data = lay_out_data(args.data, args.work / "benchmarks", args.items)
    more = tasks.lay_out(args.data, args.work / "benchmarks", args.items, synth_jpeg)
    save_weights(args.work)
    print(f"SugarCrepe, first {args.items or 'all'} items per subset: {data['items']} items, {data['images']} "
          f"distinct generated 640x480 JPEGs (mean {data['mean_jpeg_kib']:.0f} KiB); {ARCH} random init on "
          f"{args.device}; batch {args.batch_size}, {args.workers} DataLoader workers, {os.cpu_count()} CPUs; "
          f"{args.repeats} round(s) per comparison, each side in its own process")
    passed = []
    if args.suite in ("all", "sugarcrepe"):
        passed.append(report_throughput(rounds(SIDES, args), data))
    if args.suite in ("all", "2x2"):
        print(f"2x2 (NaturalBench-Retrieval layout): {more['2x2 items']} items, {more['2x2 images']} images")
        passed.append(tasks.report("items", rounds(("ours-2x2", "peer-2x2"), args), "ours-2x2", "peer-2x2",
                                   TARGET_SPEEDUP))
    if args.suite in ("all", "retrieval"):
        print(f"Retrieval (coco-retrieval layout): {more['gallery images']} images, {more['gallery captions']} "
              "captions, recall@1/5/10 both ways")
        passed.append(tasks.report("images+captions", rounds(("ours-retrieval", "peer-retrieval"), args),
                                   "ours-retrieval", "peer-retrieval", TARGET_SPEEDUP))
    if args.suite in ("all", "sugarcrepe"):
        print(f"Sweep: {args.alphas} evaluations of the first {args.sweep_items} items per subset")
        passed.append(report_sweep(rounds(("in-place", "reload"), args), args))
    print("RESULT " + ("PASS" if all(passed) else "FAIL"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "sugar-crepe")
    parser.add_argument("--items", type=int, default=None, help="items per subset (default: all)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--alphas", type=int, default=11)
    parser.add_argument("--sweep-items", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="rounds per comparison (median reported)")
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    parser.add_argument("--suite", choices=("all", "sugarcrepe", "2x2", "retrieval"), default="all",
                        help="which comparisons to run (sugarcrepe includes the sweep)")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.device == "auto":
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.child:
        child_main(args)
        return
    if args.keep:
        args.work = args.keep
        parent_main(args)
        return
    with tempfile.TemporaryDirectory(prefix="eval-throughput-") as work:
        args.work = Path(work)
        parent_main(args)


if __name__ == "__main__":
    main()
