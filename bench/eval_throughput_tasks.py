"""The 2x2 and retrieval comparisons of ``eval_throughput.py``: our evaluator against clip_benchmark's loops.

Data, laid out by the parent from the real SugarCrepe captions (``--data``) and generated JPEGs (one per COCO
file name, as the SugarCrepe comparison draws them):

* 2x2: NaturalBench-Retrieval's release layout (``metadata.json`` + ``images/``, read by our
  ``naturalbench`` loader): item n = the first ``--items`` rows of each SugarCrepe subset, image 0 its COCO file,
  image 1 a generated JPEG of its own, caption 0 the true caption, caption 1 the negative. Peer: clip_benchmark
  1.6.2's ``image_caption_selection.evaluate`` (what its CLI runs for ``winoground``) over a dataset that returns
  what its ``WinoGround`` dataset returns (the two transformed images stacked, the two captions), with its
  ``image_captions_collate_fn``.
* retrieval: the distinct COCO images of those rows with their distinct true captions (each caption kept once,
  with the first image naming it), as our ``coco-retrieval`` loader reads them (the BLIP Karpathy JSON under
  ``aro-coco-order/``). Peer: clip_benchmark's ``Flickr`` dataset (its ``image,caption`` file) and
  ``zeroshot_retrieval.evaluate`` with recall@1/5/10, as its CLI runs ``flickr30k``.

Tie rules differ (ours strict or counting a tie against, theirs ``argmax``/``topk`` by index); exact ties in
our scores are counted and printed, so a difference in accuracy can be traced to them.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

KS = (1, 5, 10)


def _rows(data: Path, items: int | None) -> list[dict]:
    from backend.benchmarks import sugarcrepe

    return [row for subset in sugarcrepe.SUBSETS
            for row in list(json.loads((data / f"{subset}.json").read_text()).values())[:items]]


def lay_out(data: Path, root: Path, items: int | None, synth) -> dict:
    """Both layouts under ``root`` (COCO JPEGs copied from the SugarCrepe layout already there)."""
    from backend.benchmarks import naturalbench, sugarcrepe
    from backend.benchmarks.order import SOURCES

    rows = _rows(data, items)
    coco = root / sugarcrepe.COCO_VAL2017
    release = root / naturalbench.FOLDER / naturalbench.RELEASE
    (release / "images").mkdir(parents=True)
    metadata = []
    for n, row in enumerate(rows):
        shutil.copy(coco / row["filename"], release / "images" / row["filename"])
        twin = f"twin_{n:05d}.jpg"
        synth((str(release / "images" / twin), 10**7 + n))
        metadata.append({"index": n, "image_0": row["filename"], "image_1": twin, "caption_0": row["caption"],
                         "caption_1": row["negative_caption"]})
    (release / "metadata.json").write_text(json.dumps(metadata))
    source = SOURCES["aro-coco-order"]
    folder = root / source.folder
    (folder / "val2014").mkdir(parents=True)
    owner: dict[str, str] = {}
    for row in rows:
        owner.setdefault(row["caption"], row["filename"])
    gallery: dict[str, list[str]] = {}
    for caption, name in owner.items():
        gallery.setdefault(name, []).append(caption)
    for name in gallery:
        shutil.copy(coco / name, folder / "val2014" / name)
    (folder / source.annotations.name).write_text(json.dumps(
        [{"image": f"val2014/{name}", "caption": captions} for name, captions in gallery.items()]))
    with (folder / "peer_captions.csv").open("w") as handle:  # clip_benchmark's Flickr file: a header, then lines
        handle.write("image,caption\n")
        handle.writelines(f"{name},{caption}\n" for name, captions in gallery.items() for caption in captions)
    return {"2x2 items": len(rows), "2x2 images": len({r["filename"] for r in rows}) + len(rows),
            "gallery images": len(gallery), "gallery captions": len(owner)}


def run_ours_2x2(args, loaded, encoder_for, timer) -> dict:
    from backend.benchmarks import naturalbench, run_task

    with timer() as clock:
        task = naturalbench.build(None, args.work / "benchmarks")
        result = run_task(task, encoder_for(loaded))
    s = result.scores
    ties = int(((s[:, 0, 0] == s[:, 1, 0]) | (s[:, 1, 1] == s[:, 0, 1]) | (s[:, 0, 0] == s[:, 0, 1])
                | (s[:, 1, 1] == s[:, 1, 0])).sum())
    return {**clock.as_dict(), "acc": {k: result.metrics[k] for k in ("text", "image", "group")}, "ties": ties,
            "units": task.n_items, "encoded": {"images": len(task.images), "texts": len(task.texts)}}


def run_peer_2x2(args, model, preprocess, tokenizer, amp: bool, timer) -> dict:
    import torch
    from clip_benchmark.datasets.builder import image_captions_collate_fn
    from clip_benchmark.metrics import image_caption_selection
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset

    from backend.benchmarks import naturalbench

    release = args.work / "benchmarks" / naturalbench.FOLDER / naturalbench.RELEASE

    class Pairs(Dataset):
        """clip_benchmark's WinoGround item (stacked images, two captions), read from the release's files."""

        def __init__(self) -> None:
            self.rows = json.loads((release / "metadata.json").read_text())

        def __len__(self) -> int:
            return len(self.rows)

        def __getitem__(self, n: int):
            row = self.rows[n]
            pictures = [Image.open(release / "images" / row[k]).convert("RGB") for k in ("image_0", "image_1")]
            return torch.stack([preprocess(p) for p in pictures]), [row["caption_0"], row["caption_1"]]

    with timer() as clock:
        dataset = Pairs()
        loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                            collate_fn=image_captions_collate_fn)
        got = image_caption_selection.evaluate(model, loader, tokenizer, args.device, amp=amp)
    return {**clock.as_dict(), "acc": {"text": got["text_acc"], "image": got["image_acc"], "group": got["acc"]},
            "units": len(dataset), "encoded": {"images": 2 * len(dataset), "texts": 2 * len(dataset)}}


def run_ours_retrieval(args, loaded, encoder_for, timer) -> dict:
    from backend.benchmarks import retrieval, run_task

    with timer() as clock:
        task = retrieval.build("coco-retrieval", None, args.work / "benchmarks")
        result = run_task(task, encoder_for(loaded))
    return {**clock.as_dict(), "acc": {f"{d}_R@{k}": result.metrics[f"{d}_R@{k}"] for d in ("i2t", "t2i") for k in KS},
            "units": len(task.images) + len(task.texts),
            "encoded": {"images": len(task.images), "texts": len(task.texts)}}


def run_peer_retrieval(args, model, preprocess, tokenizer, amp: bool, timer) -> dict:
    from clip_benchmark.datasets.builder import image_captions_collate_fn
    from clip_benchmark.datasets.flickr import Flickr
    from clip_benchmark.metrics import zeroshot_retrieval
    from torch.utils.data import DataLoader

    from backend.benchmarks.order import SOURCES

    folder = args.work / "benchmarks" / SOURCES["aro-coco-order"].folder
    with timer() as clock:
        dataset = Flickr(str(folder / "val2014"), str(folder / "peer_captions.csv"), transform=preprocess)
        loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                            collate_fn=image_captions_collate_fn)
        got = zeroshot_retrieval.evaluate(model, loader, tokenizer, args.device, amp=amp, recall_k_list=list(KS))
    texts = sum(len(captions) for _, captions in dataset.data)
    return {**clock.as_dict(), "acc": {**{f"i2t_R@{k}": got[f"text_retrieval_recall@{k}"] for k in KS},
                                       **{f"t2i_R@{k}": got[f"image_retrieval_recall@{k}"] for k in KS}},
            "units": len(dataset) + texts, "encoded": {"images": len(dataset), "texts": texts}}


def report(label: str, runs: list[dict[str, dict]], ours: str, peer: str, target: float) -> bool:
    """Samples/s of both sides, the median per-round speed-up, and the accuracies side by side."""
    import statistics

    for side in (ours, peer):
        r = runs[-1][side]
        seconds = statistics.median(run[side]["seconds"] for run in runs)
        cpu = statistics.median(run[side]["cpu_seconds"] for run in runs)
        print(f"  {side}: {r['units'] / seconds:7.1f} {label}/s (median {seconds:.1f} s wall, {cpu:.1f} s CPU; encoded "
              f"{r['encoded']['images']} images, {r['encoded']['texts']} texts)")
    ratios = [run[peer]["seconds"] / run[ours]["seconds"] for run in runs]
    ratio = statistics.median(ratios)
    cpu = statistics.median(run[peer]["cpu_seconds"] / run[ours]["cpu_seconds"] for run in runs)
    print(f"  speed-up ours/peer: {ratio:.2f}x wall (rounds: {', '.join(f'{r:.2f}' for r in ratios)}), {cpu:.2f}x "
          f"CPU time; target >= {target}x: {'PASS' if ratio >= target else 'FAIL'}")
    mine, theirs = runs[-1][ours]["acc"], runs[-1][peer]["acc"]
    same = all(abs(mine[k] - theirs[k]) < 1e-6 for k in mine)
    ties = runs[-1][ours].get("ties")
    tied = "" if ties is None else f" (items with an exact tie in our scores: {ties})"
    print(f"  accuracies ours/peer {'identical' if same else 'DIFFER'}{tied}: "
          + ", ".join(f"{k} {mine[k]:.4f}/{theirs[k]:.4f}" for k in mine))
    return ratio >= target and same
