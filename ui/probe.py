"""Probe tab: one image, one caption, its perturbations, scored by one or more models."""
from __future__ import annotations

import html
import json
import time
from pathlib import PurePath

import gradio as gr
import pandas as pd

from backend.perturb import FAMILIES
from backend.probe import ProbeInputError, ProbeResult, diff_segments, percent, run_probe
from ui.context import AppContext
from ui.session import Session, actor_of

VERDICT_HELP = ("A **negative** that scores at or above the original is a failure (ties count as wrong). "
                "A **positive** that scores below a negative is brittle. Scores are cosine similarities; "
                "the plot shows each variant's margin over the original (above 0 = preferred).")
EMPTY_TABLE = pd.DataFrame(columns=["text", "kind", "family", "subtype"])


def model_labels(specs: list[str], known: dict[str, str] | None = None) -> dict[str, str]:
    """Short column labels: the model list's label (a run's name) if it has one, else a local path's file or
    folder name; duplicates get a prime."""
    labels: dict[str, str] = {}
    for spec in specs:
        path = spec if spec.startswith("/") else spec.split(":", 1)[-1]
        label = (known or {}).get(spec) or (spec if spec.startswith("hf-hub:") or "/" not in path
                                            else PurePath(path.rstrip("/")).name)
        while label in labels.values():
            label += "'"
        labels[spec] = label
    return labels


def summary_markdown(result: ProbeResult, labels: dict[str, str]) -> str:
    lines = ["| model | accuracy vs negatives | augmented acc. | brittleness | activation | precision |",
             "|---|---|---|---|---|---|"]
    for m in result.models:
        lines.append(f"| **{labels[m['model']]}** | {percent(m['accuracy'])} of {m['n_negatives']} | "
                     f"{percent(m['augmented_acc'])} | {percent(m['brittleness'])} | {m['activation']} | "
                     f"{m['precision']} |")
    details = [f"- **{labels[m['model']]}** = `{m['model']}`" for m in result.models
               if labels[m["model"]] != m["model"]]
    details += [f"- {labels[m['model']]}: {note}" for m in result.models for note in m["notes"]]
    details += [f"- not loaded: {error}" for error in result.errors]
    return "\n".join(lines) + ("\n\n" + "\n".join(details) if details else "") + "\n\n" + VERDICT_HELP


def highlighted(original: str, text: str, kind: str) -> str:
    if kind in ("original", "custom"):
        return html.escape(text)
    return " ".join(f"<mark>{html.escape(part)}</mark>" if label else html.escape(part)
                    for part, label in diff_segments(original, text))


def table_frame(result: ProbeResult, labels: dict[str, str]) -> pd.DataFrame:
    """What matters first: the text, then each model's verdict and score; the taxonomy last."""
    original = result.texts[0].text
    rows = []
    for index, item in enumerate(result.texts):
        row = {"text": highlighted(original, item.text, item.kind)}
        for spec, label in labels.items():
            if spec in result.scores:
                row[f"{label} verdict"] = result.verdict(spec, index)
                row[f"{label} score"] = round(result.scores[spec][index], 4)
        row.update(kind=item.kind, family=item.family, subtype=item.subtype)
        rows.append(row)
    return pd.DataFrame(rows)


def plot_frame(result: ProbeResult, labels: dict[str, str]) -> pd.DataFrame:
    records = [{"variant": index, "margin": score - scores[0], "text": result.texts[index].text,
                "series": f"{labels[spec]}: {result.texts[index].kind}"}
               for spec, scores in result.scores.items() for index, score in enumerate(scores)]
    return pd.DataFrame(records)


def write_downloads(result: ProbeResult, ctx: AppContext) -> tuple[str, str]:
    ctx.output_dir.mkdir(parents=True, exist_ok=True)
    stem = ctx.output_dir / f"probe-{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**6}"
    csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
    pd.DataFrame(result.rows()).to_csv(csv_path, index=False)
    json_path.write_text(json.dumps(result.as_dict(), indent=2))
    return str(csv_path), str(json_path)


def make_handler(ctx: AppContext):
    def probe(image, caption, models, families, seed, extra, session=None, progress=gr.Progress()):
        """Run a probe and return (summary, table, plot, csv, json)."""
        try:
            result = run_probe(image, caption, models or [], ctx.registry, ctx.cache,
                               families=families or None, seed=int(seed or 0), extra=extra,
                               progress=lambda fraction, desc: progress(fraction, desc=desc),
                               actor=actor_of(ctx, session), offered=ctx.offered_specs())
        except (ProbeInputError, ValueError) as error:
            raise gr.Error(str(error), print_exception=False) from error
        for error in result.errors:
            gr.Warning(error)
        labels = model_labels(list(result.scores), {spec: label for label, spec in ctx.current_model_choices()
                                                    if label != spec})
        csv_path, json_path = write_downloads(result, ctx)
        return (summary_markdown(result, labels), table_frame(result, labels), plot_frame(result, labels),
                csv_path, json_path)
    return probe


def build(ctx: AppContext, visitor: Session) -> None:
    """Lay out the Probe tab inside the current Blocks context."""
    with gr.Row():
        with gr.Column(scale=1, min_width=320):
            image = gr.Image(type="pil", label="Image", sources=["upload", "clipboard"], height=240)
            caption = gr.Textbox(label="Caption", placeholder="a brown dog holding a white frisbee")
            with gr.Row():
                models = gr.Dropdown(ctx.current_model_choices(), value=ctx.default_models, multiselect=True,
                                     allow_custom_value=True, label="Models", scale=5,
                                     info="Pick or type a spec: ARCH:tag, ARCH:/path.safetensors, hf-hub:org/name, "
                                          "catalog:NAME. 'not downloaded' models download on first use")
                refresh_models = gr.Button("↻", size="sm", scale=0, min_width=40)
            run = gr.Button("Probe", variant="primary")
            with gr.Accordion("Perturbations and extra captions", open=False):
                families = gr.CheckboxGroup([(desc, name) for name, desc in FAMILIES.items()],
                                            value=list(FAMILIES), label="Families")
                seed = gr.Number(value=0, precision=0, label="Seed", minimum=0)
                extra = gr.Textbox(label="Extra captions (one per line; '-' negative, '+' positive)", lines=3)
            if ctx.examples:
                gr.Examples(ctx.examples, inputs=[image, caption], label="Examples")
        with gr.Column(scale=2):
            summary = gr.Markdown()
            table = gr.Dataframe(EMPTY_TABLE, label="Variants", datatype="html", wrap=True,
                                 interactive=False, elem_id="probe-table", max_height=520)
            plot = gr.ScatterPlot(x="variant", y="margin", color="series", label="Margin over the original",
                                  tooltip=["text", "series", "margin"], height=240)
            with gr.Row():
                csv_file = gr.DownloadButton("Download CSV", size="sm")
                json_file = gr.DownloadButton("Download JSON", size="sm")
    inputs = [image, caption, models, families, seed, extra, visitor.state]
    outputs = [summary, table, plot, csv_file, json_file]
    handler = make_handler(ctx)
    run.click(handler, inputs, outputs, api_name="probe")
    # Finished training runs' checkpoints join the list without restarting the app.
    refresh_models.click(lambda: gr.Dropdown(choices=ctx.current_model_choices()), None, models,
                         api_name="model_choices")
    caption.submit(handler, inputs, outputs, api_visibility="private")
