"""Sweep tab (admins): interpolate a pretrained and a finetuned model per alpha (CLOVe patching), trace the
trade-off live, read the recommended alpha and its criterion, download the results (CSV, PNG, SVG), export a
patched checkpoint.

Views only: the sweep is a `sweep` job (`backend.jobs.submit` checks the admin,
`backend.patching.config.SweepConfig` validates), each alpha's point is read from the
store's metrics as the job writes it, the recommendation is the job's, the figure and
table are `backend.patching.figure` and `backend.patching.exports`, and the
export is `backend.patching.sweep.export_patched`, after which the model lists offer the
new checkpoint. The model lists are `backend.models.choices.offered`, as in every tab, redrawn when a
training run finishes or a model is exported (the timer) and when the tab is shown. Every action is a named
API endpoint.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from backend import jobs
from backend.benchmarks import available_benchmarks, get_benchmark
from backend.benchmarks.results import results
from backend.core.gpu import local_job_note
from backend.core.store import Store
from backend.patching import exports
from backend.patching.config import DEFAULT_ALPHAS, SweepConfig, default_axes
from backend.patching.figure import tradeoff_svg
from ui.context import AppContext, offer_new
from ui.session import Session, actor_of, admin_actor, admin_initial, job_of_kind, shown

REFRESH_S = 2.0
DEFAULTS = SweepConfig()
POINT_COLUMNS = ["alpha", "object-centric (%)", "compositional (%)"]
USER_ERRORS = (ValueError, TypeError, OSError, jobs.JobError)  # PathError is a ValueError


def parse_alphas(text: str) -> list[float]:
    """"start:stop:step" (stop included, as 0:1:0.1 reads) or a comma-separated list; anything else is a message."""
    text = (text or "").strip()
    try:
        if ":" in text:
            start, stop, step = (float(part) for part in text.split(":"))
            if step <= 0:
                raise ValueError
            count = round((stop - start) / step) + 1
            return [round(start + i * step, 4) for i in range(max(count, 0))]
        return [float(part) for part in text.replace(" ", ",").split(",") if part]
    except ValueError:
        raise ValueError(f"alphas {text!r}: write start:stop:step (e.g. 0:1:0.1) or a list (e.g. 0, 0.5, 1)") from None


def metric_choices(store: Store, root, axes: tuple[str, str]) -> list[str]:
    """<benchmark>/<metric> names known without evaluating: the form's default `axes`, stored results' metrics,
    declared headline and chance metrics. Other names can be typed."""
    names = set(axes)
    names |= {f"{row['benchmark']}/{metric}" for row in results(store) for metric in row["metrics"]}
    for benchmark in available_benchmarks(root):
        declared = get_benchmark(benchmark)
        names |= {f"{benchmark}/{metric}" for metric in (*declared.headline, *declared.chance)}
    return sorted(names)


def sweep_choices(store: Store) -> list[tuple[str, int]]:
    """(label, id) of every sweep; the label names the two models (the status, which changes, is shown below)."""
    return [(f"#{job['id']} {job['args'].get('pretrained', '')} → {job['args'].get('finetuned', '')}", job["id"])
            for job in store.list_jobs("sweep")]


def sweep_points(store: Store, job_id: int) -> pd.DataFrame:
    """Each alpha's point so far (the job writes one metrics step per alpha), in percent."""
    steps: dict[int, dict] = {}
    for row in store.metrics(job_id, "sweep"):
        steps.setdefault(row["step"], {})[row["name"]] = row["value"]
    rows = [{"alpha": v["alpha"], "object-centric (%)": round(100 * v["object_centric"], 2),
             "compositional (%)": round(100 * v["compositional"], 2)}
            for _, v in sorted(steps.items()) if {"alpha", "object_centric", "compositional"} <= set(v)]
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def recommendation(job: dict) -> dict:
    return jobs.result_of(job).get("recommended") or {}


def status_markdown(job: dict) -> str:
    args = job["args"] or {}
    text = (f"**#{job['id']} sweep: {job['status']}**, {100 * (job['progress'] or 0):.0f}% · "
            f"`{args.get('pretrained')}` → `{args.get('finetuned')}`"
            + (f"  \n{job['message']}" if job.get("message") else ""))
    if job["status"] == "failed" and job.get("error"):
        error = job["error"]
        text += "\n\n```\n" + (error[error.index("error: ") + 7:] if "error: " in error else error) + "\n```"
    return text


def recommendation_markdown(job: dict) -> str:
    best = recommendation(job)
    if not best:
        return "The recommended alpha appears when the sweep is done."
    return (f"**Recommended alpha: {best['alpha']:g}** (compositional {100 * best['compositional']:.1f}%, "
            f"object-centric {100 * best['object_centric']:.1f}%).  \nCriterion: {best['criterion']}.")


def plot_html(job: dict, points: pd.DataFrame) -> str:
    args = job["args"] or {}
    return tradeoff_svg([{"alpha": a, "x": x, "y": y} for a, x, y in points[POINT_COLUMNS].itertuples(index=False)],
                        f"object-centric: {args.get('object_centric')} (%)",
                        f"compositional: {args.get('compositional')} (%)", recommendation(job).get("alpha"))


def make_handlers(ctx: AppContext) -> dict:
    """The tab's callbacks; each takes the visitor's session last and lets the backend decide (admins only)."""
    store = ctx.store

    def sweep_job(value) -> dict:
        if value in (None, ""):
            raise gr.Error("Pick a sweep first (or launch one).", print_exception=False)
        return job_of_kind(store, value, "sweep", "Job {id} is a {kind} job, not a sweep.")

    def launch(pretrained, finetuned, alphas, compositional, object_centric, tolerance, limit, session=None):
        """Validate the form and start the sweep; a bad value is a message and nothing starts."""
        actor = admin_actor(ctx, session, "launching a sweep")
        try:
            config = {"pretrained": (pretrained or "").strip(), "finetuned": (finetuned or "").strip(),
                      "alphas": parse_alphas(alphas), "compositional": compositional or "",
                      "object_centric": object_centric or "",
                      "tolerance": float(tolerance if tolerance not in (None, "") else 1.0) / 100,
                      "limit": int(limit) if limit else None}  # 0 or blank: every item
            job_id = jobs.submit(actor, "sweep", config, store=store, settings=ctx.settings)
        except USER_ERRORS as error:
            raise shown(error) from error
        return f"Launched sweep #{job_id}.", gr.Dropdown(choices=sweep_choices(store), value=job_id)

    def view(job: dict) -> tuple:
        points = sweep_points(store, job["id"])
        return status_markdown(job), plot_html(job, points), points, recommendation_markdown(job)

    def sweep_status(value, session=None):
        """Status, the trade-off plot, its points, the recommendation, and the export alpha (the recommended one,
        once known)."""
        admin_actor(ctx, session, "viewing sweeps")
        if value in (None, ""):
            return "No sweep selected.", tradeoff_svg([], "", ""), pd.DataFrame(columns=POINT_COLUMNS), "", gr.skip()
        job = sweep_job(value)
        alpha = recommendation(job).get("alpha")
        return (*view(job), gr.skip() if alpha is None else alpha)

    def tick(value, filled, session=None):
        """`sweep_status` for the timer: silent for non-admins; fills the export alpha once per finished sweep, so
        an alpha typed afterwards is not overwritten."""
        if not actor_of(ctx, session).is_admin or value in (None, ""):
            return [gr.skip()] * 6
        job = sweep_job(value)
        alpha = recommendation(job).get("alpha")
        if alpha is None or filled == value:
            return *view(job), gr.skip(), filled
        return *view(job), alpha, value

    def export(value, name, alpha, session=None):
        """Write the patched checkpoint of the sweep's two models at `alpha` into the models folder."""
        admin_actor(ctx, session, "exporting a patched model")
        args = sweep_job(value)["args"]
        if alpha in (None, ""):
            raise gr.Error("Give an alpha (the recommended one is filled in when the sweep is done).",
                           print_exception=False)
        from backend.patching.sweep import export_patched  # torch: only when a model is exported

        try:
            spec = export_patched(args["pretrained"], args["finetuned"], float(alpha), (name or "").strip(),
                                  ctx.settings.models_dir)
        except USER_ERRORS as error:
            raise shown(error) from error
        choices = ctx.current_model_choices()
        return (f"Exported `{spec}`: it is now in every model list (Probe, Benchmarks, here).",
                gr.Dropdown(choices=choices), gr.Dropdown(choices=choices))

    def download(value, session=None):
        """The finished sweep's results as files: every metric per alpha (CSV) and the trade-off figure (PNG,
        SVG)."""
        admin_actor(ctx, session, "downloading a sweep's results")
        job = sweep_job(value)
        result = jobs.result_of(job)
        if not result.get("rows"):
            raise gr.Error(f"Sweep #{job['id']} is {job['status']}: its results download once it is done.",
                           print_exception=False)
        stem = f"sweep-{job['id']}"
        return [offer_new(f"{stem}.csv", lambda path: exports.write_csv(result, path)),
                *(offer_new(f"{stem}{suffix}", lambda path: exports.write_figure(result, path))
                  for suffix in exports.FIGURE_SUFFIXES)]

    def refresh_models(seen, session=None):
        """Both model lists as of now, when the models made here changed since `seen` (a run finished, a model
        was exported): what the timer and showing the tab call. Silent for non-admins."""
        if not actor_of(ctx, session).is_admin:
            return seen, gr.skip(), gr.skip()
        now = ctx.made_here()
        if now == seen:
            return seen, gr.skip(), gr.skip()
        offered = ctx.current_model_choices()
        return now, gr.Dropdown(choices=offered), gr.Dropdown(choices=offered)

    def list_sweeps(session=None):
        admin_actor(ctx, session, "viewing sweeps")
        jobs.reconcile(store, ctx.settings)
        return gr.Dropdown(choices=sweep_choices(store))

    return {"launch": launch, "sweep_status": sweep_status, "tick": tick, "export": export,
            "list_sweeps": list_sweeps, "download": download, "refresh_models": refresh_models}


def _form(ctx: AppContext) -> list:
    """The sweep form, in `launch`'s argument order."""
    models = ctx.current_model_choices()
    with gr.Row():
        pretrained = gr.Dropdown(models, value=ctx.default_models[0] if ctx.default_models else None,
                                 allow_custom_value=True, label="Pretrained model (alpha = 0)")
        finetuned = gr.Dropdown(models, value=None, allow_custom_value=True, label="Finetuned model (alpha = 1)")
    alphas = gr.Textbox(f"{DEFAULT_ALPHAS[0]:g}:{DEFAULT_ALPHAS[-1]:g}:0.1", label="Alphas",
                        info="start:stop:step (stop included) or a list: 0, 0.5, 1")
    axes = default_axes({row["benchmark"] for row in results(ctx.store)})
    metrics = metric_choices(ctx.store, ctx.settings.benchmarks_dir, axes)
    compositional = gr.Dropdown(metrics, value=axes[0], allow_custom_value=True,
                                label="Compositional metric (y)", info="<benchmark>/<metric>")
    object_centric = gr.Dropdown(metrics, value=axes[1], allow_custom_value=True,
                                 label="Object-centric metric (x)", info="<benchmark>/<metric>")
    with gr.Row():
        tolerance = gr.Number(100 * DEFAULTS.tolerance, minimum=0, maximum=100, label="Tolerance (points)",
                              info="how far x may drop below the pretrained model's")
        limit = gr.Number(0, precision=0, minimum=0, label="Items per type (0: all)")
    return [pretrained, finetuned, alphas, compositional, object_centric, tolerance, limit]


@dataclass
class ModelLists:
    """The form's two model lists and what redraws them (`refresh_models`'s event arguments, but `fn`)."""

    refresh_models: Callable
    events: dict

    def follow(self, app_tabs: gr.Tabs, label: str) -> None:
        """Redraw the lists whenever one of the app's tabs is shown, so they are current when `label`'s is (a
        catalog model downloaded meanwhile too): a few file checks, cheaper than telling the tabs apart."""
        def shown(seen, session):
            return self.refresh_models(None, session)

        app_tabs.select(shown, **self.events)


def build(ctx: AppContext, visitor: Session) -> ModelLists:
    """Lay out the Sweep tab inside the current Blocks context; returns its model lists' refresh (`follow`)."""
    handlers = make_handlers(ctx)
    with gr.Row():
        with gr.Column(scale=1, min_width=340):
            form = _form(ctx)
            if local_job_note():
                gr.Markdown(local_job_note(), elem_id="sweep-zero-gpu-note")
            launch = gr.Button("Launch sweep", variant="primary")
            launched = gr.Markdown()
        with gr.Column(scale=2):
            with gr.Row():
                job = gr.Dropdown(admin_initial(ctx, lambda: sweep_choices(ctx.store)), value=None,
                                  allow_custom_value=True, label="Sweep", scale=4, elem_id="sweep-job")
                refresh = gr.Button("↻", size="sm", scale=0, min_width=40)
            status = gr.Markdown("No sweep selected.", elem_id="sweep-status")
            plot = gr.HTML(tradeoff_svg([], "", ""), elem_id="sweep-plot")
            best = gr.Markdown(elem_id="sweep-recommended")
            points = gr.Dataframe(pd.DataFrame(columns=POINT_COLUMNS), interactive=False, max_height=260,
                                  label="Points", elem_id="sweep-points")
            with gr.Row():
                name = gr.Textbox(label="Patched model name", placeholder="letters, digits, '.', '_', '-'", scale=3)
                alpha = gr.Number(None, minimum=0, maximum=1, label="Alpha", scale=1)
                export = gr.Button("Export patched checkpoint", scale=2)
            exported = gr.Markdown(elem_id="sweep-exported")
            with gr.Row():
                download = gr.Button("Download results (CSV, PNG, SVG)", scale=1)
                files = gr.File(label="Results", file_count="multiple", interactive=False, scale=2,
                                elem_id="sweep-files")
    shown_outputs = [status, plot, points, best, alpha]
    filled = gr.State(None)
    launch.click(handlers["launch"], [*form, visitor.state], [launched, job], api_name="launch_sweep")
    job.change(handlers["sweep_status"], [job, visitor.state], shown_outputs, api_name="sweep_status")
    refresh.click(handlers["list_sweeps"], visitor.state, job, api_name="list_sweeps")
    export.click(handlers["export"], [job, name, alpha, visitor.state], [exported, form[0], form[1]],
                 api_name="export_patched")
    download.click(handlers["download"], [job, visitor.state], files, api_name="download_sweep")
    timer = gr.Timer(REFRESH_S)
    timer.tick(handlers["tick"], [job, filled, visitor.state], [*shown_outputs, filled], api_visibility="private",
               show_progress="hidden")
    seen = gr.State(None)  # the models made here the lists last showed (None: a page just opened)
    lists = ModelLists(handlers["refresh_models"], {"inputs": [seen, visitor.state], "outputs": [seen, *form[:2]],
                                                    "api_visibility": "private", "show_progress": "hidden"})
    timer.tick(handlers["refresh_models"], **lists.events)
    return lists
