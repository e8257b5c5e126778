"""What the Train tab's run view shows: the runs table, the curves, the evaluation against the base model, the
status line. Pure functions of the store's rows (`ui.tabs.train` wires them to the page), so tests read what a
person sees without a browser.
"""
from __future__ import annotations

import time

import gradio as gr
import pandas as pd

from backend import jobs
from backend.core.errors import first_line
from backend.core.markup import literal
from backend.core.store import Store
from backend.train import history

CURVE_COLUMNS = ["step", "value", "name"]
# Plots of the run view besides the loss: title -> the metric names drawn there.
SIDE_CURVES = {"CE-CLIP thresholds": None, "Logit scale": ("logit_scale",), "Learning rate": ("lr",),
               "Samples / s": ("samples_per_second",)}
RUN_COLUMNS = ["id", "name", "status", "progress", "latest", "loss", "base model", "target", "created"]
EVAL_COLUMNS = ["metric", "base model (%)", "value (%)", "change (points)", "step"]


def run_choices(store: Store) -> list[tuple[str, int]]:
    return [(f"#{job['id']} {job['name']} ({job['status']})", job["id"]) for job in store.list_jobs("train")]


def runs_frame(store: Store) -> pd.DataFrame:
    """One row per train job; final metrics (the trainer's result, else the last eval) in percent as extra columns."""
    rows = []
    for job in store.list_jobs("train"):
        args = job.get("args") or {}
        result = jobs.result_of(job)
        final = result.get("final_metrics") or store.latest_metrics(job["id"], "eval")
        rows.append({"id": job["id"], "name": job["name"], "status": job["status"],
                     "progress": f"{100 * (job['progress'] or 0):.0f}%", "latest": job.get("message") or "",
                     "loss": args.get("loss", ""), "base model": args.get("base_model", ""),
                     "target": jobs.label(job),
                     "created": time.strftime("%Y-%m-%d %H:%M", time.localtime(job["created_at"])),
                     **{f"{metric} (%)": round(100 * value, 1) for metric, value in final.items()}})
    return pd.DataFrame(rows, columns=None if rows else RUN_COLUMNS)


def curve_frames(rows: list[dict]) -> list[pd.DataFrame]:
    """The loss and its parts, then one frame per SIDE_CURVES plot (they have different scales).

    Columns are typed even when empty: an untyped (object) column makes the plot treat
    `value` as a category, and the axis then stays categorical when data arrives.
    """
    frame = pd.DataFrame(rows, columns=CURVE_COLUMNS).astype({"step": int, "value": float, "name": str})
    is_threshold = frame["name"].str.contains("threshold|^th_|/th_", regex=True)
    schedule = {name for names in SIDE_CURVES.values() if names for name in names}

    def part(mask):
        return frame.loc[mask, CURVE_COLUMNS].reset_index(drop=True)
    sides = [part(is_threshold) if names is None else part(frame["name"].isin(names)) for names in SIDE_CURVES.values()]
    return [part(~is_threshold & ~frame["name"].isin(schedule)), *sides]


def plot_update(frame: pd.DataFrame):
    """A plot's new value, or no update while there is nothing to draw.

    A LinePlot that is sent an empty frame and later real data draws its paths without a stroke
    (no visible line): never send it an empty frame.
    """
    return frame if len(frame) else gr.skip()


def eval_frame(store: Store, job_id: int) -> pd.DataFrame:
    """The last value of every evaluation metric beside the base model's (step 0) and the change, in percent (as
    the CLI prints them)."""
    base = store.latest_metrics(job_id, "baseline")
    last: dict[str, dict] = {}
    for row in store.metrics(job_id, "eval"):
        before = base.get(row["name"])
        last[row["name"]] = {"metric": row["name"], "base model (%)": _percent(before),
                             "value (%)": _percent(row["value"]),
                             "change (points)": None if before is None else round(100 * (row["value"] - before), 1),
                             "step": row["step"]}
    return pd.DataFrame(list(last.values()), columns=EVAL_COLUMNS)


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def against_base_markdown(rows: list[dict]) -> str:
    """What the run did to its base model, in a line: each overall score before and now, and the metrics that fell
    below the base model's (worst first), so a regression is seen without reading the table."""
    if not rows:
        return ""
    def change(row: dict) -> str:
        before, now = 100 * row["base"], 100 * row["final"]
        return f"{literal(row['metric'])} {before:.1f} → {now:.1f} ({now - before:+.1f})"
    overall = [row for row in rows if row["metric"].endswith("/overall")] or rows[:3]
    worse = sorted((row for row in rows if row["change"] < 0), key=lambda row: row["change"])
    text = "**Against the base model** (evaluated at step 0): " + "; ".join(map(change, overall))
    if worse:
        text += (f"  \n⚠️ {len(worse)} of {len(rows)} metrics fell below the base model: "
                 + ", ".join(map(change, worse[:3])) + (", …" if len(worse) > 3 else ""))
    return text


def status_markdown(job: dict, links: str = "", store: Store | None = None) -> str:
    """The run's status line, folders, its numbers against the base model's (with `store`), checkpoint, the first
    line of its error, and its chain of attempts."""
    text = (f"**#{job['id']} {literal(job['name'])}** on `{jobs.label(job)}`: **{job['status']}**, "
            f"{100 * (job['progress'] or 0):.0f}% of the steps" + (f" ({links})" if links else ""))
    if job.get("message") and job["status"] == "running":
        text += f"  \n{literal(job['message'])}"
    if job.get("run_dir"):
        text += f"  \nrun directory: `{job['run_dir']}`"
    result = jobs.result_of(job)
    if result.get("best"):
        text += f"  \nbest checkpoint: `local-dir:{result['best']}` (in the Probe tab's model list as {job['name']})"
    if result.get("url"):
        text += f"  \nHugging Face job: {result['url']}"
    if job.get("error") and job["status"] != "running":
        text += f"  \n{literal(first_line(job['error'], limit=10_000))}"
    comparison = against_base_markdown(history.run_against_base(store, job)) if store else ""
    return text + (f"\n\n{comparison}" if comparison else "")
