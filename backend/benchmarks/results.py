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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

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
                notes: Sequence[str] = ()) -> int:
    """Store one evaluation (and its items when the task has per-item correctness); returns the result id."""
    row = {"job_id": job_id, "model": identity["model"], "activation": identity.get("activation"),
           "precision": identity.get("precision"), "architecture": identity.get("architecture"),
           "device": identity.get("device"), "benchmark": benchmark, "version": version, "item_limit": limit,
           "metrics": json.dumps(metrics), "n_items": task.n_items if task else None, "seconds": seconds,
           "notes": json.dumps(list(notes)), "created_at": time.time()}
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
    for key in ("metrics", "notes", "scores", "texts", "images"):
        if key in row and isinstance(row[key], str):
            row[key] = json.loads(row[key])
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


def model_label(row: dict) -> str:
    """How a model's row is named: its spec with activation and precision (the same spec can score twice)."""
    return f"{row['model']} ({row['activation']}, {row['precision']})"


@dataclass
class Leaderboard:
    """Rows of models, columns ``<benchmark>/<metric>`` (fractions); ``sources`` says where each row came from."""

    columns: list[str]
    rows: list[dict]

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["model", "source", *self.columns], extrasaction="ignore")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: (f"{100 * v:.2f}" if isinstance(v, float) else v) for k, v in row.items()})
        return out.getvalue()


def leaderboard(store: Store, benchmarks: Sequence[str] = (), metrics: Sequence[str] = (),
                reference_rows: Sequence[dict] = ()) -> Leaderboard:
    """One row per model identity with every stored metric (optionally only ``metrics``), then reference rows.

    A model evaluated on a prefix of a benchmark (``limit``) is labelled so:
    its numbers are not comparable with full runs.
    """
    by_model: dict[str, dict] = {}
    for row in reversed(results(store, benchmarks)):  # oldest first, so newer results overwrite
        label = model_label(row) + (f" [first {row['item_limit']} items]" if row["item_limit"] else "")
        entry = by_model.setdefault(label, {"model": label, "source": "evaluated here"})
        entry.update({f"{row['benchmark']}/{key}": value for key, value in row["metrics"].items()})
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


def disagreements(store: Store, result_a: int, result_b: int, limit: int = 50) -> list[dict]:
    """Items one model gets right and the other wrong (both results on the same benchmark, version and limit)."""
    a, b = get_result(store, result_a), get_result(store, result_b)
    if (a["benchmark"], a["version"], a["item_limit"]) != (b["benchmark"], b["version"], b["item_limit"]):
        raise ValueError(f"results {result_a} and {result_b} are on different item sets "
                         f"({a['benchmark']} {a['version']} vs {b['benchmark']} {b['version']}): nothing to compare")
    rows = store.db.query(
        "select x.*, y.correct as other_correct, y.scores as other_scores from eval_items x join eval_items y "
        "on x.position = y.position and y.result_id = ? where x.result_id = ? and x.correct != y.correct "
        "order by x.position limit ?", [result_b, result_a, limit])
    return [_decode({**dict(row), "other_scores": json.loads(row["other_scores"])}) for row in rows]


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
