"""Train tab: pick a recipe or fill the form, launch a finetuning job, watch its curves and log, resume a run
that failed or was cancelled, compare runs.

Views only: validation is `TrainConfig`'s, launching, resuming and cancelling go through
`backend.jobs.submit`/`resume`/`cancel` (which check that the visitor is an admin), numbers
come from the store. Every action is also a named API endpoint (launch, cancel,
resume, list_runs, run_status), mirroring `python -m backend jobs`.
"""
from __future__ import annotations

import time

import gradio as gr
import pandas as pd

from backend import jobs, plugins
from backend.benchmarks import available_benchmarks
from backend.core.auth import PermissionDenied, require_admin
from backend.core.gpu import local_job_note, on_zero_gpu
from backend.jobs.hf import gpu_flavors
from backend.perturb import FAMILIES
from backend.train.config import LOSSES, PAPER_DEFAULT_WEIGHTS, TrainConfig, data_sources, model_builders
from backend.train.recipes import loss_label, recipes
from ui import targets
from ui.context import AppContext
from ui.session import Session, actor_of, admin_initial
from ui.tabs.train_runs import (
    EVAL_COLUMNS,
    RUN_COLUMNS,
    SIDE_CURVES,
    curve_frames,
    eval_frame,
    plot_update,
    run_choices,
    runs_frame,
    status_markdown,
)

REFRESH_S = 2.0
# After the log box gets new lines: show its end (the newest lines), unless the admin is in it, reading. Gradio's own
# autoscroll gives up after the first redraw: replacing the whole text moves the box to its top, which it takes for
# the reader scrolling up.
SCROLL_LOG_TO_END = """() => requestAnimationFrame(() => {
  const box = document.querySelector('#train-log textarea');
  if (box && document.activeElement !== box) box.scrollTop = box.scrollHeight;
})"""
CE_CLIP_WEIGHTS, HP_HN_WEIGHTS = PAPER_DEFAULT_WEIGHTS["ce_clip"], PAPER_DEFAULT_WEIGHTS["hp_hn"]
# The form's fields in `form_config`'s order, each with the TrainConfig key (or loss weight) it shows.
FORM_KEYS = ["name", "base_model", "data", "manifest", "loss", "alpha", "beta", "imc", "aux_types", "w_hn", "w_hp",
             "families", "hard_negative_images", "steps", "batch_size", "lr", "warmup_steps", "grad_accum", "seed",
             "eval_every", "eval_benchmarks"]
WEIGHT_KEYS = {"alpha", "beta", "imc", "aux_types", "w_hn", "w_hp"}


def loss_weights(loss: str, alpha: float, beta: float, imc: str, aux_types: list[str], w_hn: float,
                 w_hp: float) -> dict:
    """Only the chosen loss's weights: the trainer rejects weights another loss would take."""
    if loss == "ce_clip":
        return {"alpha": float(alpha), "beta": float(beta), "imc": imc, "aux_types": list(aux_types or [])}
    if loss == "hp_hn":
        return {"w_hn": float(w_hn), "w_hp": float(w_hp)}
    return {}


def form_config(name, base_model, data, manifest, loss, alpha, beta, imc, aux_types, w_hn, w_hp, families,
                hard_negative_images, steps, batch_size, lr, warmup_steps, grad_accum, seed, eval_every,
                eval_benchmarks) -> dict:
    """The form as TrainConfig keys; a blank name becomes a unique one, so runs never resume by accident."""
    def number(value, kind, label):
        if value is None or value == "":
            raise ValueError(f"{label} is empty")
        return kind(value)
    loss = loss or ""
    return {
        "name": (name or "").strip() or f"{loss}-seed{int(seed or 0)}-{time.strftime('%Y%m%d-%H%M%S')}",
        "base_model": (base_model or "").strip(), "data": data, "manifest": (manifest or "").strip(),
        "loss": loss, "loss_weights": loss_weights(loss, alpha, beta, imc, aux_types, w_hn, w_hp),
        "families": list(families or []), "hard_negative_images": bool(hard_negative_images),
        "steps": number(steps, int, "steps"), "batch_size": number(batch_size, int, "batch size"),
        "lr": number(lr, float, "learning rate"), "warmup_steps": number(warmup_steps, int, "warmup steps"),
        "grad_accum": number(grad_accum, int, "gradient accumulation"), "seed": number(seed, int, "seed"),
        "eval_every": number(eval_every, int, "eval every"), "eval_benchmarks": list(eval_benchmarks or []),
    }


def launched_config(recipe: str | None, form: list) -> dict:
    """The form as TrainConfig keys, over the chosen recipe's keys the form has no field for (augment,
    dataset_size, ...): a recipe launched from the tab runs as the recipe says."""
    beyond_form = {key: value for key, value in recipes().get(recipe or "", {}).items()
                   if key not in FORM_KEYS and key != "loss_weights"}
    return {**beyond_form, **form_config(*form)}


def recipe_values(recipe: str | None) -> list:
    """The form's values for a named recipe (TrainConfig defaults where the recipe is silent, and for none), in
    FORM_KEYS order."""
    values = {**TrainConfig().to_dict(), **recipes().get(recipe or "", {})}
    weights = {**PAPER_DEFAULT_WEIGHTS["ce_clip"], **PAPER_DEFAULT_WEIGHTS["hp_hn"], **values.get("loss_weights", {})}
    values["name"] = ""
    return [weights[key] if key in WEIGHT_KEYS else values[key] for key in FORM_KEYS]


def _message(error: Exception) -> gr.Error:
    return gr.Error(str(error), print_exception=False)


def make_handlers(ctx: AppContext):
    """The tab's callbacks over one store; returned as a dict so `build` and tests share them.

    Every handler takes the visitor's session last and lets the backend decide (admins only).
    """
    store = ctx.store

    def admin(session, action: str):
        try:
            actor = actor_of(ctx, session)
            require_admin(actor, action)
        except PermissionDenied as error:
            raise _message(error) from error
        return actor

    def job_id(value) -> int:
        if value in (None, ""):
            raise gr.Error("Pick a run first", print_exception=False)
        try:
            return jobs.get(store, value)["id"]
        except jobs.JobError as error:
            raise _message(error) from error

    def launch(*values):
        """Validate the form and start the run; a bad value is a message and nothing is launched."""
        *form, recipe, target, nproc, flavor, nodes, gpus_per_node, session = values
        actor = admin(session, "launching a training run")
        options = {"nproc": int(nproc or 1)} if target == "torchrun" else {"flavor": flavor} if target == "hf" else \
            targets.options(target, nodes, gpus_per_node)
        try:
            config = launched_config(recipe, form)
            launched = jobs.submit(actor, "train", config, target, options, store=store, settings=ctx.settings)
        except (ValueError, TypeError, PermissionDenied) as error:
            raise _message(error) from error
        return (f"Launched run #{launched} `{config['name']}`.",
                gr.Dropdown(choices=run_choices(store), value=launched),
                runs_frame(store))

    def run_status(value, session=None):
        """Status, curves, log tail and eval table of one run (what the timer refreshes)."""
        admin(session, "viewing training runs")
        if value in (None, ""):
            return "No run selected.", *[gr.skip()] * len(SIDE_CURVES), gr.skip(), "", gr.skip()
        job = store.get_job(job_id(value))
        curves = curve_frames(store.metrics(job["id"], "train"))
        return (status_markdown(job, jobs.resume_links(store, job), store), *[plot_update(frame) for frame in curves],
                jobs.log_tail(job.get("log_path"), 40), eval_frame(store, job["id"]))

    def cancel(value, session=None):
        """Stop the selected run (SIGTERM, then SIGKILL; remote runs are cancelled on Hugging Face)."""
        actor = admin(session, "cancelling a run")
        try:
            job = jobs.cancel(actor, job_id(value), store=store, settings=ctx.settings)
        except (jobs.JobError, PermissionDenied) as error:
            raise _message(error) from error
        return status_markdown(job), runs_frame(store)

    def resume(value, session=None):
        """Continue the selected failed or cancelled run from its last checkpoint, as a new run linked to it."""
        actor = admin(session, "resuming a run")
        try:
            jobs.reconcile(store, ctx.settings)  # a run whose process died unseen is settled first
            resumed = jobs.resume(actor, job_id(value), store=store, settings=ctx.settings)
        except (ValueError, PermissionDenied) as error:
            raise _message(error) from error
        return (f"Resumed run #{value} as #{resumed}.", gr.Dropdown(choices=run_choices(store), value=resumed),
                runs_frame(store))

    def list_runs(session=None):
        """Past and current train runs, after settling any whose process vanished."""
        admin(session, "viewing training runs")
        jobs.reconcile(store, ctx.settings)
        return gr.Dropdown(choices=run_choices(store)), runs_frame(store)

    def tick(value, session=None):
        """`run_status` for the timer: silent (no update, no message) for a visitor who is not an admin."""
        if not actor_of(ctx, session).is_admin:
            return [gr.skip()] * (len(SIDE_CURVES) + 4)
        return run_status(value, session)

    def refresh_if_changed(seen, session=None):
        """The run list and table, and the base models (a finished run's checkpoint is one), only when a train job
        changed since `seen` (what the timer calls)."""
        if not actor_of(ctx, session).is_admin:
            return seen, gr.skip(), gr.skip(), gr.skip()
        jobs.reconcile(store, ctx.settings)
        now = list(store.last_change("train"))
        if now == seen:
            return seen, gr.skip(), gr.skip(), gr.skip()
        return now, gr.Dropdown(choices=run_choices(store)), runs_frame(store), gr.Dropdown(choices=base_models(ctx))

    return {"launch": launch, "run_status": run_status, "cancel": cancel, "resume": resume, "list_runs": list_runs,
            "tick": tick, "refresh_if_changed": refresh_if_changed}


def base_models(ctx: AppContext) -> list[str]:
    """What the form offers to start from: the plug-ins' models (shipped, or built from scratch), then every model
    the model lists offer."""
    return list(dict.fromkeys([*plugins.hooks().models, *model_builders(), *ctx.offered_specs()]))


def _form(ctx: AppContext, initial: dict) -> list:
    """Lay out the config form filled with `initial` (a recipe's values); returns its components in FORM_KEYS
    order."""
    name = gr.Textbox(label="Run name", placeholder="blank: loss-seed-time (an existing name resumes that run)")
    built = ", ".join(f"'{spec}'" for spec in model_builders())
    base = gr.Dropdown(base_models(ctx), value=initial["base_model"] or None, allow_custom_value=True,
                       label="Base model", info="a model spec" + (f"; {built} starts from scratch" if built else ""))
    with gr.Row():
        data = gr.Dropdown(list(data_sources()), value=initial["data"], label="Data")
        manifest = gr.Textbox(label="Manifest (CSV/JSONL, for data = manifest)",
                              info=f"a path inside {ctx.settings.data_dir} or another allowed folder")
    loss = gr.Radio([(loss_label(name), name) for name in LOSSES], value=initial["loss"], label="Loss")
    with gr.Row(visible=False) as ce_row:
        alpha = gr.Number(CE_CLIP_WEIGHTS["alpha"], label="alpha (IMC)", minimum=0)
        beta = gr.Number(CE_CLIP_WEIGHTS["beta"], label="beta (CMR)", minimum=0)
        imc = gr.Radio(["contrastive", "eq3"], value=CE_CLIP_WEIGHTS["imc"], label="IMC variant")
        aux_types = gr.CheckboxGroup(CE_CLIP_WEIGHTS["aux_types"], value=CE_CLIP_WEIGHTS["aux_types"],
                                     label="IMC and CMR act on", info="ITC always uses every type")
    with gr.Row(visible=False) as hp_row:
        w_hn = gr.Number(HP_HN_WEIGHTS["w_hn"], label="w_hn (hard negatives)", minimum=0)
        w_hp = gr.Number(HP_HN_WEIGHTS["w_hp"], label="w_hp (hard positives)", minimum=0)
    loss.change(lambda value: (gr.Row(visible=value == "ce_clip"), gr.Row(visible=value == "hp_hn")),
                loss, [ce_row, hp_row], api_visibility="private", queue=False)
    families = gr.Dropdown(list(FAMILIES), value=initial["families"], multiselect=True, label="Negative families")
    hard_images = gr.Checkbox(initial["hard_negative_images"], label="Hard negative images (NegCLIP K=3)")
    with gr.Accordion("Hyperparameters", open=True):
        with gr.Row():
            steps = gr.Number(initial["steps"], precision=0, label="Steps", minimum=1)
            batch = gr.Number(initial["batch_size"], precision=0, label="Batch size", minimum=1)
            lr = gr.Number(initial["lr"], label="Learning rate")
            warmup = gr.Number(initial["warmup_steps"], precision=0, label="Warmup steps", minimum=0)
        with gr.Row():
            accum = gr.Number(initial["grad_accum"], precision=0, label="Grad accumulation", minimum=1)
            seed = gr.Number(initial["seed"], precision=0, label="Seed", minimum=0)
            eval_every = gr.Number(initial["eval_every"], precision=0, label="Eval every (steps)", minimum=1)
        evaluate_on = gr.Dropdown(available_benchmarks(ctx.settings.benchmarks_dir),
                                  value=initial["eval_benchmarks"], multiselect=True, label="Evaluate on",
                                  info="every 'eval every' steps and at the end; the first one's overall score "
                                       "picks the best checkpoint (none: best is the last)")
    return [name, base, data, manifest, loss, alpha, beta, imc, aux_types, w_hn, w_hp, families, hard_images, steps,
            batch, lr, warmup, accum, seed, eval_every, evaluate_on]


def _run_view() -> list:
    """The selected run's status, curves, log and evaluation table, in `run_status`'s output order."""
    status = gr.Markdown("No run selected.", elem_id="train-status")
    # No fixed height: with one, the legend below the plot is cut off and the lines cannot be told apart.
    losses = gr.LinePlot(x="step", y="value", color="name", label="Loss and its parts", elem_id="train-loss-plot")
    sides = []
    for titles in (list(SIDE_CURVES)[:2], list(SIDE_CURVES)[2:]):
        with gr.Row():
            sides += [gr.LinePlot(x="step", y="value", color="name", label=title) for title in titles]
    log = gr.Textbox(label="Log (newest lines last)", lines=10, max_lines=10, autoscroll=False, interactive=False,
                     elem_id="train-log")
    log.change(None, js=SCROLL_LOG_TO_END, api_visibility="private", queue=False)
    evals = gr.Dataframe(pd.DataFrame(columns=EVAL_COLUMNS), label="Evaluation (last value) against the base model",
                         interactive=False, max_height=300, elem_id="train-evals")
    return [status, losses, *sides, log, evals]


def build(ctx: AppContext, visitor: Session) -> None:
    """Lay out the Train tab inside the current Blocks context."""
    handlers = make_handlers(ctx)
    with gr.Row():
        with gr.Column(scale=1, min_width=360):
            offered = list(recipes())
            recipe = gr.Dropdown(offered, value=offered[0] if offered else None, label="Recipe",
                                 info="fills the form with a measured built-in-world run or a paper's settings")
            form = _form(ctx, dict(zip(FORM_KEYS, recipe_values(recipe.value))))
            with gr.Accordion("Where to run", open=True):
                where = [("this machine", "local"), ("torchrun (N processes)", "torchrun"), ("Hugging Face Jobs", "hf")]
                if ctx.settings.slurm_configured:
                    where.append((targets.slurm_label(ctx.settings), "slurm"))
                target = gr.Radio(where, value="hf" if on_zero_gpu() else "local", label="Target",
                                  elem_id="train-target")
                if local_job_note():
                    gr.Markdown(local_job_note(), elem_id="train-zero-gpu-note")
                with gr.Row():
                    nproc = gr.Number(2, precision=0, minimum=1, label="Processes (torchrun)")
                    flavor = gr.Dropdown(gpu_flavors(), value=ctx.settings.hf_flavor, label="GPU (HF)",
                                         info="the image is the server's hf_image setting")
                with gr.Row(visible=ctx.settings.slurm_configured):
                    nodes = gr.Number(1, precision=0, minimum=1, label="Nodes (Slurm)", elem_id="train-nodes")
                    gpus_per_node = gr.Number(1, precision=0, minimum=1, label="GPUs per node (Slurm)",
                                              info="partition, account and time limit: the server's settings",
                                              elem_id="train-gpus-per-node")
            launch = gr.Button("Launch", variant="primary")
            launched = gr.Markdown()
        with gr.Column(scale=2):
            with gr.Row():
                run = gr.Dropdown(admin_initial(ctx, lambda: run_choices(ctx.store)), value=None,
                                  allow_custom_value=True, label="Run", scale=4)
                cancel = gr.Button("Cancel run", variant="stop", scale=1)
                resume = gr.Button("Resume run", scale=1)
            shown = _run_view()
    with gr.Row():
        gr.Markdown("### Runs")
        refresh = gr.Button("↻ Refresh", size="sm", scale=0)
    runs = gr.Dataframe(pd.DataFrame(columns=RUN_COLUMNS), label="Train runs and their final metrics",
                        interactive=False, max_height=400, elem_id="train-runs")
    seen = gr.State([0, 0.0])
    recipe.change(recipe_values, recipe, form, api_visibility="private", queue=False)
    launch.click(handlers["launch"], [*form, recipe, target, nproc, flavor, nodes, gpus_per_node, visitor.state],
                 [launched, run, runs],
                 api_name="launch")
    run.change(handlers["run_status"], [run, visitor.state], shown, api_name="run_status")
    timer = gr.Timer(REFRESH_S)
    timer.tick(handlers["tick"], [run, visitor.state], shown, api_visibility="private",
               show_progress="hidden")
    timer.tick(handlers["refresh_if_changed"], [seen, visitor.state], [seen, run, runs, form[1]],
               api_visibility="private", show_progress="hidden")
    cancel.click(handlers["cancel"], [run, visitor.state], [shown[0], runs], api_name="cancel")
    resume.click(handlers["resume"], [run, visitor.state], [launched, run, runs], api_name="resume")
    refresh.click(handlers["list_runs"], visitor.state, [run, runs], api_name="list_runs")
