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
from collections.abc import Mapping

import gradio as gr
import pandas as pd

from backend import jobs
from backend.benchmarks import available_benchmarks, get_benchmark, readiness
from backend.benchmarks.readiness import READY
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
from ui.tabs.benchmarks_chart import chart, chart_frame, column_title, headline_metric, percent

REFRESH_S = 2.0
HEADLINE, EVERY = "headline", "every"  # the leaderboard's columns: one per benchmark, or every metric
FITTING_METRICS = 8  # metric columns that fit a 1400 px window beside the model, source and date
# Headers in a smaller type: the longest word of a metric's name ("augmented_acc") fits its column unbroken.
TABLE_CSS = "#bench-leaderboard thead .header { font-size: 11px; line-height: 1.3; }"
SUBMIT_ERRORS = (ValueError, TypeError, jobs.JobError)  # PathError and DataMissing are ValueErrors


def benchmark_of(column: str) -> str:
    """The benchmark of a ``<benchmark>/<metric>`` key (metrics may hold slashes themselves: micro/add)."""
    return column.split("/", 1)[0]


def ordered_columns(columns: list[str], stored: list[dict], every: bool = True) -> list[str]:
    """Columns grouped by benchmark, each group's headline metric first, so the first column of a group reads as
    its summary; with ``every`` False only that first column (what fits a screen: one per benchmark)."""
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
        ordered += [first] * (first in group) + [c for c in group if c != first] * every
    return ordered


def interval_text(bounds) -> str:
    """A 95% interval in percent, ``[75.6, 77.5]``; blank where the result has none."""
    return f"[{100 * bounds[0]:.1f}, {100 * bounds[1]:.1f}]" if bounds else ""


def with_interval(value, bounds) -> float | str | None:
    """A leaderboard cell: the value in %, followed by its 95% bootstrap interval when the row has one."""
    shown = percent(value)
    return f"{shown} {interval_text(bounds)}" if shown is not None and bounds else shown


def leaderboard_frame(store: Store, benchmarks: list[str] | None = None, columns: str = HEADLINE,
                      names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per model (evaluated here, named as in the chart and the CSV), then the chance and published rows
    that share a column; values in %, a row evaluated here with each value's 95% bootstrap interval
    (``76.6 [75.6, 77.5]``). ``columns``: `HEADLINE` (one per benchmark, its paper's main metric) or `EVERY`;
    each headed by its `column_title`."""
    board = leaderboard(store, benchmarks or (), reference_rows=reference_rows(), names=names)
    shown = ordered_columns(board.columns, results(store, benchmarks or ()), every=columns == EVERY)
    rows = [{"model": row["model"], "source": row["source"],
             **{c: with_interval(row.get(c), row.get("intervals", {}).get(c)) for c in shown},
             "date": row.get("date", "")} for row in board.rows
            if "date" in row or any(c in row for c in shown)]  # a published row only where it has a number shown
    frame = pd.DataFrame(rows, columns=["model", "source", *shown, "date"])
    return frame.rename(columns=column_title)


def column_widths(n_metrics: int) -> list[str | int]:
    """Widths that fit a 1400 px window with up to `FITTING_METRICS` metric columns (shares of the table), else
    fixed pixels and a horizontal scrollbar: a column never narrower than its header's words."""
    if n_metrics <= FITTING_METRICS:
        share = (100 - 15 - 8 - 7) / max(n_metrics, 1)
        fitting: list[str | int] = ["15%", "8%", *[f"{share:.3g}%"] * n_metrics, "7%"]
        return fitting
    return ["260px", "150px", *["118px"] * n_metrics, "95px"]


def fitted(frame: pd.DataFrame) -> gr.Dataframe:
    """The leaderboard with the widths its columns need (`column_widths`)."""
    return gr.Dataframe(frame, column_widths=column_widths(len(frame.columns) - 3))


def filter_choices(ctx: AppContext) -> list[str]:
    """What the column filter offers: every benchmark, and any with stored results that is no longer registered."""
    names = available_benchmarks(ctx.settings.benchmarks_dir)
    return names + sorted({row["benchmark"] for row in results(ctx.store)} - set(names))


def benchmark_choices(names: list[str], answers: dict[str, str] | None) -> list[tuple[str, str]]:
    """The launch list: each benchmark marked ready (its data is here) or needing data, once the check answered
    for it (a benchmark typed in or found since, or a failed check, stays unmarked)."""
    answers = answers or {}
    return [(name if name not in answers else f"✓ {name}" if answers[name] == READY else f"✗ {name} (needs data)",
             name) for name in names]


def ready_default(names: list[str], answers: dict[str, str] | None) -> list[str]:
    """The first benchmark whose data is here (none while the check runs: never one that would fail)."""
    return [name for name in names if (answers or {}).get(name) == READY][:1]


def describe(names: list[str] | None, answers: dict[str, str] | None = None) -> str:
    """The picked benchmarks' descriptions, data versions and whether their data is here (what a number on the
    leaderboard measures, and whether a job can run)."""
    lines = []
    for name in names or []:
        try:
            benchmark = get_benchmark(name)
        except ValueError as error:
            lines.append(f"- **{literal(name)}**: {literal(error)}")
            continue
        answer = (answers or {}).get(name)  # why not ready names server folders: an admin's console says it
        state = ("" if answer is None else " ✓ data ready." if answer == READY else
                 " ✗ **needs data**: its files are not on this machine; `python -m backend benchmarks --check` "
                 "prints the steps to get them.")
        lines.append(f"- **{name}** (data version {benchmark.version}): {benchmark.description}{state}")
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
    """The leaderboard (every row and metric, fractions as percent, rows named as on the page) as a CSV file
    offered for one download."""
    table = leaderboard(ctx.store, benchmarks or (), reference_rows=reference_rows(), names=ctx.run_names()).to_csv()
    return offer_new(f"leaderboard-{time.strftime('%Y%m%d-%H%M%S')}.csv", lambda path: path.write_text(table))


def make_handlers(ctx: AppContext) -> dict:
    """The tab's callbacks over one store, shared by `build` and the tests' API calls."""
    store, root = ctx.store, ctx.settings.benchmarks_dir

    def board(benchmarks=None, columns=HEADLINE):
        """The leaderboard table (headline metrics, or every metric) and its chart, optionally only some
        benchmarks; rows named alike in both."""
        names = ctx.run_names()
        return leaderboard_frame(store, benchmarks, columns or HEADLINE, names), chart(chart_frame(store, benchmarks,
                                                                                               names))

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

    def refresh_if_changed(seen, benchmarks=None, columns=HEADLINE):
        """Leaderboard, chart and the failure browser's results, only when an evaluate job changed since `seen`
        (what the timer calls: a finished evaluation shows up everywhere without a click)."""
        now = list(store.last_change("evaluate"))
        if now == seen:
            return seen, gr.skip(), gr.skip(), gr.skip()
        frame, drawn = board(benchmarks, columns)
        return now, fitted(frame), drawn, failures.refreshed_choices(ctx)

    def mark_benchmarks(marked, picked):
        """Once the data check answered: the launch list marked, a ready default where none is picked, and the
        description (with whether each picked benchmark's data is here); nothing before, or after once."""
        answers = readiness.known(root)
        if marked or answers is None:
            return marked, gr.skip(), gr.skip()
        names = available_benchmarks(root)
        value = list(picked or []) or ready_default(names, answers)
        return True, gr.Dropdown(choices=benchmark_choices(names, answers), value=value), describe(value, answers)

    def describe_with_data(names):
        """`describe` with what the data check knows."""
        return describe(names, readiness.known(root, start=False))

    return {"board": board, "launch": launch, "evaluate_status": evaluate_status,
            "refresh_if_changed": refresh_if_changed, "mark_benchmarks": mark_benchmarks,
            "describe": describe_with_data,
            "csv": lambda benchmarks=None: write_csv(ctx, benchmarks),
            "model_choices": lambda: gr.Dropdown(choices=ctx.current_model_choices())}


def evaluate_status_api(store: Store):
    """`evaluate_status` for API callers, who name the job (the page watches the job it launched)."""
    def evaluate_status(job_id: int) -> str:
        """The progress line of evaluate job `job_id`. Anyone may ask (evaluations feed the public leaderboard);
        other jobs are admins' to read (their errors name server paths), so they are "not an evaluate job"."""
        return job_markdown(job_of_kind(store, job_id, "evaluate", "Job {id} is not an evaluate job."))
    return evaluate_status


def _launcher(ctx: AppContext, handlers: dict) -> tuple[list, gr.Button, gr.Markdown]:
    """The launch form: models, benchmarks (marked ready or needing data, with what each measures), an item
    limit, where to run."""
    root = ctx.settings.benchmarks_dir
    answers = readiness.known(root, start=False)  # known when an earlier page started the check
    names = available_benchmarks(root)
    with gr.Accordion("Evaluate models (admins)", open=True):
        with gr.Row():
            models = gr.Dropdown(ctx.current_model_choices(), value=ctx.default_models, multiselect=True,
                                 allow_custom_value=True, label="Models", scale=3, elem_id="bench-models")
            benchmarks = gr.Dropdown(benchmark_choices(names, answers), value=ready_default(names, answers),
                                     multiselect=True, allow_custom_value=True, scale=3, label="Benchmarks",
                                     info="✓ data here, ✗ needs data (checked without downloading); or type "
                                          "campaign:NAME for an exported campaign", elem_id="bench-benchmarks")
            limit = gr.Number(0, precision=0, minimum=0, label="Items per type (0: all)", scale=1)
        about = gr.Markdown(describe(ready_default(names, answers), answers) if answers else
                            "Checking which benchmarks have their data on this machine…", elem_id="bench-about")
        if local_job_note():
            gr.Markdown(local_job_note(), elem_id="bench-zero-gpu-note")
        where = targets.picker(ctx.settings, "bench-target")
        with gr.Row():
            launch = gr.Button("Evaluate", variant="primary", scale=0, min_width=160)
            status = gr.Markdown(elem_id="bench-status")
    benchmarks.input(handlers["describe"], benchmarks, about, api_visibility="private", queue=False)
    marked = gr.State(answers is not None)
    gr.Timer(REFRESH_S).tick(handlers["mark_benchmarks"], [marked, benchmarks], [marked, benchmarks, about],
                             api_visibility="private", show_progress="hidden")
    return [models, benchmarks, limit, where], launch, status


def build(ctx: AppContext, visitor: Session, probe_inputs: dict, tabs: gr.Tabs) -> gr.Dropdown | None:
    """Lay out the Benchmarks tab; returns its model list (None where no admin can launch), for the app to refresh
    when the tab is selected."""
    handlers = make_handlers(ctx)
    launcher = _launcher(ctx, handlers) if auth.policy(ctx.settings).admin_possible else None
    if launcher is None:  # no admin can exist: no launch endpoint at all, and the page says why
        gr.Markdown(f"Evaluating models needs an admin. {auth.policy(ctx.settings).reason}")
    initial_table, initial_chart = handlers["board"]()
    widths = column_widths(len(initial_table.columns) - 3)
    with gr.Row():
        gr.Markdown("### Leaderboard (values in %)")
        column_filter = gr.Dropdown(filter_choices(ctx), value=[], multiselect=True, scale=3,
                                    label="Benchmarks shown (blank: all)", elem_id="bench-filter")
        columns = gr.Radio([("headline metric of each", HEADLINE), ("every metric", EVERY)], value=HEADLINE,
                           label="Columns", scale=2, elem_id="bench-columns")
        refresh = gr.Button("↻ Refresh", size="sm", scale=0)
        export = gr.Button("Export CSV", size="sm", scale=0)
    # One column per benchmark by default (its paper's main metric): fits a 1400 px window; "every metric" scrolls.
    table = gr.Dataframe(initial_table, interactive=False, wrap=True, max_height=420,
                         elem_id="bench-leaderboard", pinned_columns=1, column_widths=widths,
                         label="Rows: models evaluated here (value [95% bootstrap interval]), then chance and "
                               "published rows (with their source)")
    gr.HTML(f"<style>{TABLE_CSS}</style>", container=False, padding=False)
    csv_file = gr.File(label="Leaderboard CSV (every metric)", visible=False, interactive=False, elem_id="bench-csv")
    chart = gr.Plot(initial_chart, label="Headline metric per benchmark", elem_id="bench-chart", show_label=False)
    failure_result = failures.build(ctx, probe_inputs, tabs)
    job = gr.State(None)
    seen = gr.State([0, 0.0])
    timer = gr.Timer(REFRESH_S)
    gr.api(evaluate_status_api(ctx.store), api_name="evaluate_status")  # before the timer's use takes the name
    if launcher is not None:
        form, launch, status = launcher
        launch.click(handlers["launch"], [*form, visitor.state], [job, status], api_name="launch_evaluate")
        timer.tick(handlers["evaluate_status"], job, status, api_visibility="private", show_progress="hidden")
    # The table's widths follow its columns, in a step of its own: API callers get the table, not an update.
    for event in (refresh.click(handlers["board"], [column_filter, columns], [table, chart], api_name="leaderboard"),
                  *(control.change(handlers["board"], [column_filter, columns], [table, chart],
                                   api_visibility="private") for control in (column_filter, columns))):
        event.success(fitted, table, table, api_visibility="private", show_progress="hidden")
    export.click(handlers["csv"], column_filter, csv_file, api_name="leaderboard_csv").success(
        lambda: gr.File(visible=True), None, csv_file, api_visibility="private", queue=False)
    timer.tick(handlers["refresh_if_changed"], [seen, column_filter, columns], [seen, table, chart, failure_result],
               api_visibility="private", show_progress="hidden")
    return launcher[0][0] if launcher else None
