"""Train tab: configure and launch a finetuning job, watch its curves and log, compare past runs.

Views only: validation is `TrainConfig`'s, launching and cancelling are
`backend.jobs`'s, numbers come from the store. Every action is also a named API
endpoint (launch, cancel, list_runs, run_status), mirroring `python -m backend jobs`.
"""
from __future__ import annotations

import time

import gradio as gr
import pandas as pd

from backend import hf_jobs, jobs
from backend.perturb import FAMILIES
from backend.store import Store
from backend.train.config import DATA_SOURCES, LOSSES, PAPER_DEFAULT_WEIGHTS, TrainConfig
from ui.context import AppContext

BASE_MODELS = ["toyworld", "toyworld:random"]
SCHEDULE_CURVES = ("lr", "logit_scale", "seconds_per_step")
CURVE_COLUMNS = ["step", "value", "name"]
RUN_COLUMNS = ["id", "name", "status", "progress", "loss", "base model", "target", "created"]
REFRESH_S = 2.0
DEFAULTS = TrainConfig()
CE_CLIP_WEIGHTS, HP_HN_WEIGHTS = PAPER_DEFAULT_WEIGHTS["ce_clip"], PAPER_DEFAULT_WEIGHTS["hp_hn"]


def loss_weights(loss: str, alpha: float, beta: float, imc: str, aux_types: list[str], w_hn: float,
                 w_hp: float) -> dict:
    """Only the chosen loss's weights: the trainer rejects weights another loss would take."""
    if loss == "ce_clip":
        return {"alpha": float(alpha), "beta": float(beta), "imc": imc, "aux_types": list(aux_types or [])}
    if loss == "hp_hn":
        return {"w_hn": float(w_hn), "w_hp": float(w_hp)}
    return {}


def form_config(ctx: AppContext, name, base_model, data, manifest, loss, alpha, beta, imc, aux_types, w_hn, w_hp,
                families, hard_negative_images, steps, batch_size, lr, warmup_steps, grad_accum, seed,
                eval_every) -> dict:
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
        "eval_every": number(eval_every, int, "eval every"), "output_dir": str(ctx.runs_dir),
    }


def run_choices(store: Store) -> list[tuple[str, int]]:
    return [(f"#{job['id']} {job['name']} ({job['status']})", job["id"]) for job in store.list_jobs("train")]


def runs_frame(store: Store) -> pd.DataFrame:
    """One row per train job; final metrics (the trainer's result, else the last eval) as extra columns."""
    rows = []
    for job in store.list_jobs("train"):
        args = job.get("args") or {}
        result = job.get("result") if isinstance(job.get("result"), dict) else {}
        final = result.get("final_metrics") or store.latest_metrics(job["id"], "eval")
        rows.append({"id": job["id"], "name": job["name"], "status": job["status"],
                     "progress": f"{100 * (job['progress'] or 0):.0f}%", "loss": args.get("loss", ""),
                     "base model": args.get("base_model", ""), "target": job["target"],
                     "created": time.strftime("%Y-%m-%d %H:%M", time.localtime(job["created_at"])),
                     **{metric: round(value, 4) for metric, value in final.items()}})
    return pd.DataFrame(rows, columns=None if rows else RUN_COLUMNS)


def curve_frames(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Split train metrics into loss parts, CE-CLIP thresholds and schedule values (different scales).

    Columns are typed even when empty: an untyped (object) column makes the plot treat
    `value` as a category, and the axis then stays categorical when data arrives.
    """
    frame = pd.DataFrame(rows, columns=CURVE_COLUMNS).astype({"step": int, "value": float, "name": str})
    is_threshold = frame["name"].str.contains("threshold|^th_|/th_", regex=True)
    is_schedule = frame["name"].isin(SCHEDULE_CURVES)
    def part(mask):
        return frame.loc[mask, CURVE_COLUMNS].reset_index(drop=True)
    return part(~is_threshold & ~is_schedule), part(is_threshold), part(frame["name"] == "logit_scale")


def eval_frame(store: Store, job_id: int) -> pd.DataFrame:
    last: dict[str, dict] = {}
    for row in store.metrics(job_id, "eval"):
        last[row["name"]] = {"metric": row["name"], "value": round(row["value"], 4), "step": row["step"]}
    return pd.DataFrame(list(last.values()), columns=["metric", "value", "step"])


def status_markdown(job: dict) -> str:
    text = (f"**#{job['id']} {job['name']}** on `{job['target']}`: **{job['status']}**, "
            f"{100 * (job['progress'] or 0):.0f}% of the steps")
    if job.get("run_dir"):
        text += f"  \nrun directory: `{job['run_dir']}`"
    result = job.get("result") if isinstance(job.get("result"), dict) else {}
    if result.get("best"):
        text += f"  \nbest checkpoint: `local-dir:{result['best']}` (now in the Probe tab's model list)"
    if result.get("url"):
        text += f"  \nHugging Face job: {result['url']}"
    if job.get("error") and job["status"] != "running":
        text += f"  \n{job['error'].splitlines()[0]}"
    return text


def _job_id(store: Store, value) -> int:
    if value in (None, ""):
        raise gr.Error("Pick a run first", print_exception=False)
    try:
        return jobs.get(store, int(value))["id"]
    except (TypeError, ValueError) as error:
        raise gr.Error(str(error) if isinstance(error, jobs.JobError) else f"No run {value!r}",
                       print_exception=False) from error


def make_handlers(ctx: AppContext):
    """The tab's callbacks over one store; returned as a dict so `build` and tests share them."""
    store = ctx.store

    def launch(*values):
        """Validate the form and start the run; a bad value is a message and nothing is launched."""
        *form, target, nproc, flavor, image = values
        try:
            config = form_config(ctx, *form)
            job_id = jobs.launch(store, "train", config, target=target, nproc=int(nproc or 1), name=config["name"],
                                 flavor=flavor, image=(image or "").strip() or None)
        except (ValueError, TypeError) as error:
            raise gr.Error(str(error), print_exception=False) from error
        return (f"Launched run #{job_id} `{config['name']}`.",
                gr.Dropdown(choices=run_choices(store), value=job_id), runs_frame(store))

    def run_status(value):
        """Status, curves, log tail and eval table of one run (what the timer refreshes)."""
        if value in (None, ""):
            return "No run selected.", *curve_frames([]), "", eval_frame(store, -1)
        job = store.get_job(_job_id(store, value))
        losses, thresholds, scale = curve_frames(store.metrics(job["id"], "train"))
        return (status_markdown(job), losses, thresholds, scale, jobs.log_tail(job.get("log_path"), 40),
                eval_frame(store, job["id"]))

    def cancel(value):
        """Stop the selected run (SIGTERM, then SIGKILL; remote runs are cancelled on Hugging Face)."""
        try:
            job = jobs.cancel(store, _job_id(store, value))
        except jobs.JobError as error:
            raise gr.Error(str(error), print_exception=False) from error
        return status_markdown(job), runs_frame(store)

    def list_runs():
        """Past and current train runs, after settling any whose process vanished."""
        jobs.reconcile(store)
        return gr.Dropdown(choices=run_choices(store)), runs_frame(store)

    return {"launch": launch, "run_status": run_status, "cancel": cancel, "list_runs": list_runs}


def _form(ctx: AppContext) -> list:
    """Lay out the config form; returns its components in `form_config`'s argument order."""
    name = gr.Textbox(label="Run name", placeholder="blank: loss-seed-time (an existing name resumes that run)")
    base = gr.Dropdown(list(dict.fromkeys(BASE_MODELS + ctx.current_model_choices())), value=DEFAULTS.base_model,
                       allow_custom_value=True, label="Base model",
                       info="'toyworld' is the built-in tiny CLIP; 'toyworld:random' starts from scratch")
    with gr.Row():
        data = gr.Dropdown(list(DATA_SOURCES), value=DEFAULTS.data, label="Data")
        manifest = gr.Textbox(label="Manifest (CSV/JSONL, for data = manifest)")
    loss = gr.Radio(list(LOSSES), value=DEFAULTS.loss, label="Loss")
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
    families = gr.Dropdown(list(FAMILIES), value=DEFAULTS.families, multiselect=True,
                           label="Negative families")
    hard_images = gr.Checkbox(DEFAULTS.hard_negative_images, label="Hard negative images (NegCLIP K=3)")
    with gr.Accordion("Hyperparameters", open=True):
        with gr.Row():
            steps = gr.Number(DEFAULTS.steps, precision=0, label="Steps", minimum=1)
            batch = gr.Number(DEFAULTS.batch_size, precision=0, label="Batch size", minimum=1)
            lr = gr.Number(DEFAULTS.lr, label="Learning rate")
            warmup = gr.Number(DEFAULTS.warmup_steps, precision=0, label="Warmup steps", minimum=0)
        with gr.Row():
            accum = gr.Number(DEFAULTS.grad_accum, precision=0, label="Grad accumulation", minimum=1)
            seed = gr.Number(DEFAULTS.seed, precision=0, label="Seed", minimum=0)
            eval_every = gr.Number(DEFAULTS.eval_every, precision=0, label="Eval every (steps)", minimum=1)
    return [name, base, data, manifest, loss, alpha, beta, imc, aux_types, w_hn, w_hp, families, hard_images, steps, batch,
            lr, warmup, accum, seed, eval_every]


def build(ctx: AppContext) -> None:
    """Lay out the Train tab inside the current Blocks context."""
    handlers = make_handlers(ctx)
    with gr.Row():
        with gr.Column(scale=1, min_width=360):
            form = _form(ctx)
            with gr.Accordion("Where to run", open=True):
                target = gr.Radio([("this machine", "local"), ("torchrun (N processes)", "torchrun"),
                                   ("Hugging Face Jobs", "hf")], value="local", label="Target")
                with gr.Row():
                    nproc = gr.Number(2, precision=0, minimum=1, label="Processes (torchrun)")
                    flavor = gr.Dropdown(hf_jobs.gpu_flavors(), value=hf_jobs.DEFAULT_FLAVOR, label="GPU (HF)")
                image = gr.Textbox(label="Docker image (HF)", placeholder=f"default: ${hf_jobs.IMAGE_ENV}")
            launch = gr.Button("Launch", variant="primary")
            launched = gr.Markdown()
        with gr.Column(scale=2):
            with gr.Row():
                run = gr.Dropdown(run_choices(ctx.store), value=None, allow_custom_value=True, label="Run", scale=4)
                cancel = gr.Button("Cancel run", variant="stop", scale=1)
            status = gr.Markdown("No run selected.")
            losses = gr.LinePlot(x="step", y="value", color="name", label="Loss and its parts", height=320)
            with gr.Row():
                thresholds = gr.LinePlot(x="step", y="value", color="name", label="CE-CLIP thresholds", height=260)
                scale = gr.LinePlot(x="step", y="value", color="name", label="Logit scale", height=260)
            log = gr.Textbox(label="Log (tail)", lines=10, max_lines=10, autoscroll=True, interactive=False)
            evals = gr.Dataframe(pd.DataFrame(columns=["metric", "value", "step"]), label="Evaluation (last value)",
                                 interactive=False, max_height=300)
    with gr.Row():
        gr.Markdown("### Runs")
        refresh = gr.Button("↻ Refresh", size="sm", scale=0)
    runs = gr.Dataframe(runs_frame(ctx.store), label="Train runs and their final metrics", interactive=False,
                        max_height=400)
    shown = [status, losses, thresholds, scale, log, evals]
    launch.click(handlers["launch"], [*form, target, nproc, flavor, image], [launched, run, runs],
                 api_name="launch")
    run.change(handlers["run_status"], run, shown, api_name="run_status")
    gr.Timer(REFRESH_S).tick(handlers["run_status"], run, shown, api_visibility="private", show_progress="hidden")
    cancel.click(handlers["cancel"], run, [status, runs], api_name="cancel")
    refresh.click(handlers["list_runs"], None, [run, runs], api_name="list_runs")
