"""Benchmark results in the store: metrics with what makes them comparable, and every item's scores.

A result is one (model, benchmark) evaluation: the model spec, activation
(QuickGELU or GELU: docs/REFERENCE.md, "Traps"), precision, benchmark version,
item limit, date and metrics. Its items (scores, correctness, texts, image
references) are kept so the failure browser can show what a model got wrong
and where two models disagree, without evaluating again.

Stored results are kept per (model, activation, precision, benchmark, version,
limit), and `results` returns the newest of each. The leaderboard has one row per
(model, activation, precision, limit): re-running a model replaces its numbers, a
changed precision makes a separate row, and a result on another data version
overwrites that benchmark's columns in the same row (the version is not shown).
"""
from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from backend.benchmarks import stats
from backend.benchmarks.blind import is_blind
from backend.benchmarks.stats import PairedTest
from backend.benchmarks.task import ImageFile, ImageSource, Items, Task, load_image
from backend.core.store import Store

IDENTITY = ("model", "activation", "precision")


def _image_reference(source: ImageSource) -> dict | None:
    """A file image as {path, box}; None for images only the benchmark can rebuild (pixels, dataset rows)."""
    if isinstance(source, ImageFile):
        return {"path": source.path, "box": list(source.box) if source.box else None}
    return None


def save_result(store: Store, identity: dict, benchmark: str, version: str, limit: int | None, metrics: dict,
                seconds: float, task: Task | None = None, scores=None, correct=None, job_id: int | None = None,
                notes: Sequence[str] = (), intervals: dict | None = None) -> int:
    """Store one evaluation (and its items when the task has per-item correctness); returns the result id.

    ``intervals`` maps a metric to its 95% bootstrap (low, high) (``stats.bootstrap_intervals``).
    """
    row = {"job_id": job_id, "model": identity["model"], "activation": identity.get("activation"),
           "precision": identity.get("precision"), "architecture": identity.get("architecture"),
           "device": identity.get("device"), "benchmark": benchmark, "version": version, "item_limit": limit,
           "metrics": json.dumps(metrics), "n_items": task.n_items if task else None, "seconds": seconds,
           "notes": json.dumps(list(notes)), "created_at": time.time(),
           "intervals": json.dumps({key: list(bounds) for key, bounds in (intervals or {}).items()})}
    with store.db.conn:
        result_id = store.insert("eval_results", row)
        if task is not None and task.items is not None and correct is not None:
            store.table("eval_items").insert_all(_item_rows(result_id, task, task.items, scores, correct),
                                                 batch_size=2000)
    return result_id


def _item_rows(result_id: int, task: Task, items: Items, scores, correct) -> Iterable[dict]:
    image_index, text_index = task.item_indices()
    for position in range(task.n_items):
        yield {"result_id": result_id, "position": position, "item_id": items.ids[position],
               "subtype": items.subtypes[position], "correct": int(bool(correct[position])),
               "scores": json.dumps([[round(float(v), 6) for v in row] for row in scores[position].tolist()]),
               "texts": json.dumps([task.texts[i] for i in text_index[position].tolist()]),
               "images": json.dumps([_image_reference(task.images[i]) for i in image_index[position].tolist()])}


def _decode(row: dict) -> dict:
    for key in ("metrics", "notes", "scores", "texts", "images", "intervals"):
        if key in row and isinstance(row[key], str):
            row[key] = json.loads(row[key])
    if "intervals" in row:  # results stored before intervals existed have none
        row["intervals"] = {k: tuple(v) for k, v in (row["intervals"] or {}).items()}
    return row


def results(store: Store, benchmarks: Sequence[str] = (), latest: bool = True) -> list[dict]:
    """Stored results, newest first; ``latest`` keeps one per (model identity, benchmark, version, limit)."""
    where, params = "", []
    if benchmarks:
        where = f"where benchmark in ({', '.join('?' * len(benchmarks))})"
        params = list(benchmarks)
    rows = [_decode(dict(row)) for row in store.db.query(
        f"select * from eval_results {where} order by created_at desc, id desc", params)]
    if not latest:
        return rows
    seen, kept = set(), []
    for row in rows:
        key = (*(row[k] for k in IDENTITY), row["benchmark"], row["version"], row["item_limit"])
        if key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


def get_result(store: Store, result_id: int) -> dict:
    rows = list(store.db.query("select * from eval_results where id = ?", [result_id]))
    if not rows:
        raise ValueError(f"no benchmark result {result_id}")
    return _decode(dict(rows[0]))


def model_label(row: dict, names: Mapping[str, str] | None = None) -> str:
    """How a model's row is named: its run's name where ``names`` (spec -> name: finished training runs, exported
    models) has one, else its spec, with activation and precision (the same spec can score twice)."""
    return f"{(names or {}).get(row['model'], row['model'])} ({row['activation']}, {row['precision']})"


def row_label(row: dict, names: Mapping[str, str] | None = None) -> str:
    """A leaderboard row's name (and its chart bars'): `model_label`, marked when only a prefix was evaluated."""
    return model_label(row, names) + (f" [first {row['item_limit']} items]" if row["item_limit"] else "")


@dataclass
class Leaderboard:
    """Rows of models, columns ``<benchmark>/<metric>`` (fractions); ``source`` says where each row came from.

    A row evaluated here also holds ``intervals``: ``{column: (low, high)}``, the 95% bootstrap interval.
    """

    columns: list[str]
    rows: list[dict]

    def to_csv(self) -> str:
        """Percent with two decimals; each metric is followed by its interval's bounds (blank where none)."""
        bounds = {c: (f"{c} 95% low", f"{c} 95% high") for c in self.columns}
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["model", "source", *(name for c in self.columns
                                                                      for name in (c, *bounds[c]))],
                                extrasaction="ignore")
        writer.writeheader()
        for row in self.rows:
            cells = {k: (f"{100 * v:.2f}" if isinstance(v, float) else v) for k, v in row.items()}
            for column, (low, high) in row.get("intervals", {}).items():
                if column in bounds:
                    cells.update(zip(bounds[column], (f"{100 * low:.2f}", f"{100 * high:.2f}")))
            writer.writerow(cells)
        return out.getvalue()


def leaderboard(store: Store, benchmarks: Sequence[str] = (), metrics: Sequence[str] = (),
                reference_rows: Sequence[dict] = (), names: Mapping[str, str] | None = None) -> Leaderboard:
    """One row per model identity with every stored metric (optionally only ``metrics``), then reference rows.

    A model evaluated on a prefix of a benchmark (``limit``) is labelled so:
    its numbers are not comparable with full runs. Rows are named by `row_label`.
    """
    by_model: dict[str, dict] = {}
    for row in reversed(results(store, benchmarks)):  # oldest first, so newer results overwrite
        label = row_label(row, names)
        source = "text-only baseline, evaluated here" if is_blind(row["model"]) else "evaluated here"
        entry = by_model.setdefault(label, {"model": label, "source": source, "intervals": {}})
        entry.update({f"{row['benchmark']}/{key}": value for key, value in row["metrics"].items()})
        stale = [c for c in entry["intervals"] if c.startswith(f"{row['benchmark']}/")]  # a newer result replaces all
        for column in stale:
            del entry["intervals"][column]
        entry["intervals"].update({f"{row['benchmark']}/{key}": bounds
                                   for key, bounds in (row.get("intervals") or {}).items()})
        entry["date"] = time.strftime("%Y-%m-%d", time.localtime(row["created_at"]))
    columns = sorted({key for entry in by_model.values() for key in entry if "/" in key})
    if metrics:
        columns = [c for c in columns if c in metrics or c.split("/", 1)[1] in metrics]
    extra = [r for r in reference_rows if any(c in r for c in columns)]
    return Leaderboard(columns, [*by_model.values(), *extra])


def items(store: Store, result_id: int, wrong_only: bool = True, subtype: str | None = None, limit: int = 50,
          offset: int = 0) -> list[dict]:
    """A result's items (by default the ones the model got wrong), optionally of one subtype."""
    clauses: list[str] = ["result_id = ?"]
    params: list[int | str] = [result_id]
    if wrong_only:
        clauses.append("correct = 0")
    if subtype:
        clauses.append("subtype = ?")
        params.append(subtype)
    sql = f"select * from eval_items where {' and '.join(clauses)} order by position limit ? offset ?"
    return [_decode(dict(row)) for row in store.db.query(sql, [*params, limit, offset])]


def subtypes(store: Store, result_id: int) -> list[tuple[str, int, int]]:
    """(subtype, items, wrong) of a result, for the failure browser's filter."""
    return [tuple(row.values()) for row in store.db.query(
        "select subtype, count(*) as n, sum(1 - correct) as wrong from eval_items where result_id = ? "
        "group by subtype order by subtype", [result_id])]


def _same_items(store: Store, result_a: int, result_b: int) -> None:
    a, b = get_result(store, result_a), get_result(store, result_b)
    if (a["benchmark"], a["version"], a["item_limit"]) != (b["benchmark"], b["version"], b["item_limit"]):
        raise ValueError(f"results {result_a} and {result_b} are on different item sets "
                         f"({a['benchmark']} {a['version']} vs {b['benchmark']} {b['version']}): nothing to compare")


def disagreements(store: Store, result_a: int, result_b: int, limit: int = 50) -> list[dict]:
    """Items one model gets right and the other wrong (both results on the same benchmark, version and limit)."""
    _same_items(store, result_a, result_b)
    rows = store.db.query(
        "select x.*, y.correct as other_correct, y.scores as other_scores from eval_items x join eval_items y "
        "on x.position = y.position and y.result_id = ? where x.result_id = ? and x.correct != y.correct "
        "order by x.position limit ?", [result_b, result_a, limit])
    return [_decode({**dict(row), "other_scores": json.loads(row["other_scores"])}) for row in rows]


def paired_test(store: Store, result_a: int, result_b: int) -> PairedTest:
    """Exact McNemar and a paired bootstrap on two results' per-item flags (the failure browser's "correct").

    The flag is the benchmark's per-item rule (SugarCrepe: caption beats negative; 2x2: Group; MMVP: the pair),
    so the test compares the pooled accuracy of that flag. Resampling is stratified by subtype, as the intervals.
    """
    _same_items(store, result_a, result_b)
    rows = list(store.db.query(
        "select x.subtype, x.correct as a, y.correct as b from eval_items x join eval_items y "
        "on x.position = y.position and y.result_id = ? where x.result_id = ? order by x.position",
        [result_b, result_a]))
    if not rows:
        raise ValueError(f"results {result_a} and {result_b} have no stored items (a remote run, or a benchmark "
                         "without per-item flags): no paired test")
    return stats.paired_test([r["a"] for r in rows], [r["b"] for r in rows], [r["subtype"] for r in rows])


def item_images(store: Store, result_id: int, position: int, root: Path | str | None = None) -> list:
    """The item's images as PIL images: files are read directly, other sources rebuilt from the benchmark."""
    from backend.benchmarks.evaluator import prepare

    result = get_result(store, result_id)
    row = next(iter(store.db.query("select images from eval_items where result_id = ? and position = ?",
                                   [result_id, position])), None)
    if row is None:
        raise ValueError(f"result {result_id} has no item {position}")
    references = json.loads(row["images"])
    if all(references):
        return [ImageFile(r["path"], tuple(r["box"]) if r["box"] else None).load() for r in references]
    task = prepare(result["benchmark"], result["item_limit"], root)
    image_index, _ = task.item_indices()
    return [load_image(task.images[i]) for i in image_index[position].tolist()]


def text_roles(benchmark: str, n_texts: int, n_images: int) -> list[str]:
    """What each text of an item is: ``"true"`` (text k of image k), ``"negative"`` or ``"positive"`` (a hard
    positive, true of the image too), as the benchmark declares them (`Benchmark.text_roles`); by default text k
    is image k's true caption and the others are negatives."""
    from backend.benchmarks import get_benchmark

    try:
        declared = get_benchmark(benchmark).text_roles
    except ValueError:  # a result of a benchmark no longer registered: the default layout
        declared = ()
    if len(declared) == n_texts:
        return list(declared)
    return ["true" if k < n_images else "negative" for k in range(n_texts)]


def rivals(roles: Sequence[str], image: int) -> list[int]:
    """The texts image ``image``'s true caption must beat: the negatives and the other images' true captions."""
    trues = [k for k, role in enumerate(roles) if role == "true"]
    return [k for k, role in enumerate(roles) if role == "negative" or (role == "true" and k != trues[image])]


def image_margins(scores: Sequence[Sequence[float]], roles: Sequence[str]) -> list[float]:
    """Per image, the Probe's margin of its strongest rival: the best rival's score minus the true caption's
    (``scores[k][i]``: text k with image i). At or above 0 the rival is not beaten (the strict rule: a tie is
    wrong), the Probe's "FAIL: not below original"; below 0 every rival is beaten."""
    trues = [k for k, role in enumerate(roles) if role == "true"]
    return [max(scores[k][image] for k in rivals(roles, image)) - scores[trues[image]][image]
            for image in range(len(scores[0]))]


@dataclass(frozen=True)
class ProbeHandOff:
    """What "Send to Probe" gives the Probe for one item: the image the item is decided on (the benchmark's own
    pixels), its true caption, the texts it must beat (negatives) and its hard positives, and the item's margin
    there (the Probe's definition: rival minus true caption)."""

    image: Image.Image
    image_number: int
    n_images: int
    caption: str
    negatives: list[str]
    positives: list[str]
    margin: float

    def extra_lines(self) -> str:
        """The Probe's "extra captions" box: ``- negative`` and ``+ positive``, one a line."""
        return "\n".join([*(f"- {text}" for text in self.negatives), *(f"+ {text}" for text in self.positives)])


def probe_hand_off(store: Store, result_id: int, position: int, root: Path | str | None = None) -> ProbeHandOff:
    """An item as the Probe should score it: with several images, the one with the largest margin (where the item
    is lost, or closest to it), with its true caption and the texts that compete for it."""
    result = get_result(store, result_id)
    found = items(store, result_id, False, None, 1, position)
    if not found:
        raise ValueError(f"result {result_id} has no item {position}")
    item = found[0]
    if not item["scores"] or not item["scores"][0]:
        raise ValueError(f"{result['benchmark']} is text-only (no image): there is nothing to send to the Probe")
    roles = text_roles(result["benchmark"], len(item["texts"]), len(item["scores"][0]))
    margins = image_margins(item["scores"], roles)
    chosen = max(range(len(margins)), key=lambda i: margins[i])
    true = [k for k, role in enumerate(roles) if role == "true"][chosen]
    return ProbeHandOff(item_images(store, result_id, position, root)[chosen], chosen, len(margins),
                        item["texts"][true], [item["texts"][k] for k in rivals(roles, chosen)],
                        [text for text, role in zip(item["texts"], roles) if role == "positive"], margins[chosen])
