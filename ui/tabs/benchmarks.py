"""Benchmarks tab: launch an `evaluate` job, watch it, read the leaderboard, chart it, export it as CSV.

Views only: the job goes through `backend.jobs.submit` (which refuses non-admins),
numbers come from `backend.benchmarks.results` (stored per model and benchmark,
so the leaderboard survives a restart) and `reference` (chance and published rows,
each labelled with its source). Reading is for everyone; launching needs an admin.
The failure browser (`ui.tabs.benchmarks_failures`) sits below the leaderboard. Every action is a
named API endpoint.
"""
from __future__ import annotations

import time

import gradio as gr
import pandas as pd

from backend import jobs
from backend.benchmarks import available_benchmarks, get_benchmark
from backend.benchmarks.reference import reference_rows
from backend.benchmarks.results import leaderboard, results
from backend.core import auth
from backend.core.gpu import local_job_note
from backend.core.markup import literal
from backend.core.store import Store
from ui import targets
from ui.context import AppContext, offer_new
from ui.session import Session, admin_actor, job_of_kind, shown
from ui.tabs import benchmarks_failures as failures
from ui.tabs.probe import model_labels

REFRESH_S = 2.0
CHART_COLUMNS = ["bar", "model", "benchmark", "metric", "value (%)", "95% interval (%)"]
SUBMIT_ERRORS = (ValueError, TypeError, jobs.JobError)  # PathError and DataMissing are ValueErrors


def benchmark_of(column: str) -> str:
    """The benchmark of a ``<benchmark>/<metric>`` key (metrics may hold slashes themselves: micro/add)."""
    return column.split("/", 1)[0]


def headline_metric(benchmark: str, metrics: dict) -> str:
    """The metric a one-number summary uses: the benchmark's declared headline, else `overall`, else its first."""
    try:
        declared = [m for m in get_benchmark(benchmark).headline if m in metrics]
    except ValueError:  # a result of a benchmark no longer registered still has numbers to show
        declared = []
    return (declared or [m for m in ("overall",) if m in metrics] or list(metrics))[0]


def ordered_columns(columns: list[str], stored: list[dict]) -> list[str]:
    """Columns grouped by benchmark, each group's headline metric first, so the first column of a group reads as
    its summary."""
    metrics_of: dict[str, dict] = {}
    for row in stored:
        metrics_of.setdefault(row["benchmark"], {}).update(row["metrics"])
    groups: dict[str, list[str]] = {}
    for column in sorted(columns):
        groups.setdefault(benchmark_of(column), []).append(column)
    ordered = []
    for benchmark, group in groups.items():
        metrics = {c.split("/", 1)[1]: 0 for c in group}
        first = f"{benchmark}/{headline_metric(benchmark, metrics_of.get(benchmark) or metrics)}"
        ordered += [first] * (first in group) + [c for c in group if c != first]
    return ordered


def percent(value) -> float | None:
    return round(100 * value, 1) if isinstance(value, (int, float)) else None


def interval_text(bounds) -> str:
    """A 95% interval in percent, ``[75.6, 77.5]``; blank where the result has none."""
    return f"[{100 * bounds[0]:.1f}, {100 * bounds[1]:.1f}]" if bounds else ""


def with_interval(value, bounds) -> float | str | None:
    """A leaderboard cell: the value in %, followed by its 95% bootstrap interval when the row has one."""
    shown = percent(value)
    return f"{shown} {interval_text(bounds)}" if shown is not None and bounds else shown


def leaderboard_frame(store: Store, benchmarks: list[str] | None = None) -> pd.DataFrame:
    """One row per model (evaluated here), then the chance and published rows that share a column; values in %,
    a row evaluated here with each value's 95% bootstrap interval (``76.6 [75.6, 77.5]``)."""
    board = leaderboard(store, benchmarks or (), reference_rows=reference_rows())
    columns = ordered_columns(board.columns, results(store, benchmarks or ()))
    rows = [{"model": row["model"], "source": row["source"],
             **{c: with_interval(row.get(c), row.get("intervals", {}).get(c)) for c in columns},
             "date": row.get("date", "")} for row in board.rows]
    return pd.DataFrame(rows, columns=["model", "source", *columns, "date"])


def chart_frame(store: Store, benchmarks: list[str] | None = None, known: dict[str, str] | None = None) -> pd.DataFrame:
    """A bar per (model, benchmark): the headline metric in %. One x category per bar (benchmark · model), since
    Gradio stacks bars that share an x, and stacked accuracies would read as a sum."""
    stored = sorted(results(store, benchmarks or ()), key=lambda row: (row["benchmark"], row["id"]))
    short = model_labels(list(dict.fromkeys(row["model"] for row in stored)), known)
    bars = []
    for row in stored:
        metric = headline_metric(row["benchmark"], row["metrics"])
        bars.append({"bar": f"{row['benchmark']} · {short[row['model']]}", "model": short[row["model"]],
                     "benchmark": row["benchmark"], "metric": metric,
                     "value (%)": percent(row["metrics"][metric]),
                     "95% interval (%)": interval_text((row.get("intervals") or {}).get(metric))})
    return pd.DataFrame(bars, columns=CHART_COLUMNS).astype({"value (%)": float})


def filter_choices(ctx: AppContext) -> list[str]:
    """What the column filter offers: every benchmark, and any with stored results that is no longer registered."""
    names = available_benchmarks(ctx.settings.benchmarks_dir)
    return names + sorted({row["benchmark"] for row in results(ctx.store)} - set(names))


def describe(names: list[str] | None) -> str:
    """The picked benchmarks' descriptions and data versions (what a number on the leaderboard measures)."""
    lines = []
    for name in names or []:
        try:
            benchmark = get_benchmark(name)
        except ValueError as error:
            lines.append(f"- **{literal(name)}**: {literal(error)}")
            continue
        lines.append(f"- **{name}** (data version {benchmark.version}): {benchmark.description}")
    return "\n".join(lines) or "Pick benchmarks to see what each measures."


def job_markdown(job: dict) -> str:
    """One job's progress line; a failed job shows the job's own message (missing data: the exact steps)."""
    text = (f"**#{job['id']} evaluate: {job['status']}**, {100 * (job['progress'] or 0):.0f}%"
            + (f" · {job['message']}" if job.get("message") else ""))
    if job["status"] == "failed" and job.get("error"):
        error = job["error"]
        text += "\n\n```\n" + (error[error.index("error: ") + 7:] if "error: " in error else error) + "\n```"
    if job["status"] == "done":
        text += " · the leaderboard below includes its results"
    return text


def write_csv(ctx: AppContext, benchmarks: list[str] | None) -> str:
    """The leaderboard (every row, fractions as percent) as a CSV file offered for one download."""
    table = leaderboard(ctx.store, benchmarks or (), reference_rows=reference_rows()).to_csv()
    return offer_new(f"leaderboard-{time.strftime('%Y%m%d-%H%M%S')}.csv", lambda path: path.write_text(table))


def make_handlers(ctx: AppContext) -> dict:
    """The tab's callbacks over one store, shared by `build` and the tests' API calls."""
    store = ctx.store

    def known_labels() -> dict[str, str]:
        return {spec: label for label, spec in ctx.current_model_choices() if label != spec}

    def board(benchmarks=None):
        """The leaderboard table and its chart, optionally only some benchmarks' columns."""
        return leaderboard_frame(store, benchmarks), chart_frame(store, benchmarks, known_labels())

    def launch(models, benchmarks, limit, target="local", session=None):
        """Start an evaluate job (admins only); a bad pick is a message and nothing starts."""
        actor = admin_actor(ctx, session, "launching an evaluation")
        config = {"models": list(models or []), "benchmarks": list(benchmarks or []),
                  "limit": int(limit) if limit else None}  # 0 or blank: every item
        try:
            job_id = jobs.submit(actor, "evaluate", config, target or "local", targets.options(target or "local"),
                                 store=store, settings=ctx.settings)
        except SUBMIT_ERRORS as error:
            raise shown(error) from error
        return job_id, job_markdown(store.get_job(job_id))

    def evaluate_status(job_id):
        """The watched job's progress line (nothing while no job was launched from this page)."""
        return "" if job_id in (None, "") else evaluate_status_api(store)(job_id)

    def refresh_if_changed(seen, benchmarks=None):
        """Leaderboard and chart, only when an evaluate job changed since `seen` (what the timer calls)."""
        now = list(store.last_change("evaluate"))
        if now == seen:
            return seen, gr.skip(), gr.skip()
        return now, *board(benchmarks)

    return {"board": board, "launch": launch, "evaluate_status": evaluate_status,
            "refresh_if_changed": refresh_if_changed,
            "csv": lambda benchmarks=None: write_csv(ctx, benchmarks),
            "model_choices": lambda: gr.Dropdown(choices=ctx.current_model_choices())}


def evaluate_status_api(store: Store):
    """`evaluate_status` for API callers, who name the job (the page watches the job it launched)."""
    def evaluate_status(job_id: int) -> str:
        """The progress line of evaluate job `job_id`. Anyone may ask (evaluations feed the public leaderboard);
        other jobs are admins' to read (their errors name server paths), so they are "not an evaluate job"."""
        return job_markdown(job_of_kind(store, job_id, "evaluate", "Job {id} is not an evaluate job."))
    return evaluate_status


def _launcher(ctx: AppContext) -> tuple[list, gr.Button, gr.Markdown]:
    """The launch form: models, benchmarks (with what each measures), an item limit, where to run."""
    with gr.Accordion("Evaluate models (admins)", open=True):
        with gr.Row():
            models = gr.Dropdown(ctx.current_model_choices(), value=ctx.default_models, multiselect=True,
                                 allow_custom_value=True, label="Models", scale=3, elem_id="bench-models")
            names = available_benchmarks(ctx.settings.benchmarks_dir)
            benchmarks = gr.Dropdown(names, value=names[:1], multiselect=True, allow_custom_value=True, scale=3,
                                     label="Benchmarks", info="or type one: campaign:NAME for an exported campaign",
                                     elem_id="bench-benchmarks")
            limit = gr.Number(0, precision=0, minimum=0, label="Items per type (0: all)", scale=1)
        about = gr.Markdown(describe(names[:1]))
        if local_job_note():
            gr.Markdown(local_job_note(), elem_id="bench-zero-gpu-note")
        where = targets.picker(ctx.settings, "bench-target")
        with gr.Row():
            launch = gr.Button("Evaluate", variant="primary", scale=0, min_width=160)
            status = gr.Markdown(elem_id="bench-status")
    benchmarks.change(describe, benchmarks, about, api_visibility="private", queue=False)
    return [models, benchmarks, limit, where], launch, status


def build(ctx: AppContext, visitor: Session, probe_inputs: dict, tabs: gr.Tabs) -> gr.Dropdown | None:
    """Lay out the Benchmarks tab; returns its model list (None where no admin can launch), for the app to refresh
    when the tab is selected."""
    handlers = make_handlers(ctx)
    launcher = _launcher(ctx) if auth.policy(ctx.settings).admin_possible else None
    if launcher is None:  # no admin can exist: no launch endpoint at all, and the page says why
        gr.Markdown(f"Evaluating models needs an admin. {auth.policy(ctx.settings).reason}")
    initial_table = leaderboard_frame(ctx.store)
    initial_chart = chart_frame(ctx.store)
    with gr.Row():
        gr.Markdown("### Leaderboard (values in %)")
        column_filter = gr.Dropdown(filter_choices(ctx), value=[], multiselect=True, scale=3,
                                    label="Columns of benchmarks (blank: all)", elem_id="bench-filter")
        refresh = gr.Button("↻ Refresh", size="sm", scale=0)
        export = gr.Button("Export CSV", size="sm", scale=0)
    # Model and source wide enough to read and pinned; metric columns (any number) keep Gradio's width and scroll.
    table = gr.Dataframe(initial_table, interactive=False, wrap=True, max_height=420, elem_id="bench-leaderboard",
                         pinned_columns=1, column_widths=["300px", "170px"],
                         label="Rows: models evaluated here (value [95% bootstrap interval]), then chance and "
                               "published rows (with their source)")
    csv_file = gr.File(label="Leaderboard CSV", visible=False, interactive=False, elem_id="bench-csv")
    chart = gr.BarPlot(initial_chart if len(initial_chart) else None, x="bar", y="value (%)", color="model",
                       y_lim=[0, 100], x_label_angle=-20, tooltip=["model", "benchmark", "metric", "value (%)",
                                                                   "95% interval (%)"],
                       label="Headline metric per model and benchmark (%)", elem_id="bench-chart", x_title=" ")
    failures.build(ctx, probe_inputs, tabs)
    job = gr.State(None)
    seen = gr.State([0, 0.0])
    timer = gr.Timer(REFRESH_S)
    gr.api(evaluate_status_api(ctx.store), api_name="evaluate_status")  # before the timer's use takes the name
    if launcher is not None:
        form, launch, status = launcher
        launch.click(handlers["launch"], [*form, visitor.state], [job, status], api_name="launch_evaluate")
        timer.tick(handlers["evaluate_status"], job, status, api_visibility="private", show_progress="hidden")
    refresh.click(handlers["board"], column_filter, [table, chart], api_name="leaderboard")
    column_filter.change(handlers["board"], column_filter, [table, chart], api_visibility="private")
    export.click(handlers["csv"], column_filter, csv_file, api_name="leaderboard_csv").success(
        lambda: gr.File(visible=True), None, csv_file, api_visibility="private", queue=False)
    timer.tick(handlers["refresh_if_changed"], [seen, column_filter], [seen, table, chart],
               api_visibility="private", show_progress="hidden")
    return launcher[0][0] if launcher else None
