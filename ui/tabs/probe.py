"""Probe tab: one image, one caption, its perturbations, scored by one or more models."""
from __future__ import annotations

import html
import json
import time
from pathlib import PurePath

import gradio as gr
import pandas as pd

from backend.core.auth import Actor
from backend.core.limits import guest_probes_spent
from backend.core.ratelimit import Refused
from backend.core.worker import WorkerStopped
from backend.perturb import FAMILIES, PROBE_DEFAULT_FAMILIES
from backend.probe import ProbeInputError, ProbeResult, check_request, load_image, percent
from backend.probe.reliability import diff_segments
from ui.context import AppContext, offer_new
from ui.session import Session, actor_of

VERDICT_HELP = ("A **negative** that scores at or above the original is a failure (ties count as wrong). "
                "A **positive** that scores below a negative is brittle. ARO order shuffles are lower-cased and "
                "stripped of punctuation (as ARO does), so they are judged against the caption normalised the same "
                "way, the **reference** row, not against the caption as typed. Each model's column shows its "
                "score (cosine similarity), verdict and margin: the variant's score minus that of the text it is "
                "judged against (above 0 = preferred; a negative at 0 or above fails, as in the Benchmarks tab's "
                "failure browser); the plot shows the margins at the row's **#**.")
TABLE_COLUMNS = ["#", "text", "kind", "family", "subtype"]
EMPTY_TABLE = pd.DataFrame(columns=TABLE_COLUMNS)
SCROLL_TABLE_TO_TOP = ("() => { const v = document.querySelector('#probe-table .virtual-table-viewport'); "
                       "if (v) v.scrollTop = 0; }")
WARNING_STYLE = ("border: 2px solid #b45309; background: #fef3c7; color: #78350f; border-radius: 6px; "
                 "padding: 8px 12px; margin-bottom: 8px")


def model_labels(specs: list[str], known: dict[str, str] | None = None) -> dict[str, str]:
    """Short column labels: the model list's label (a run's name) if it has one, else a local path's file or
    folder name; duplicates (and names of the table's own columns) get a prime."""
    labels: dict[str, str] = {}
    for spec in specs:
        path = spec if spec.startswith("/") else spec.split(":", 1)[-1]
        label = (known or {}).get(spec) or (spec if spec.startswith("hf-hub:") or "/" not in path
                                            else PurePath(path.rstrip("/")).name)
        while label in labels.values() or label in TABLE_COLUMNS:
            label += "'"
        labels[spec] = label
    return labels


def text_markdown(text: str) -> str:
    """Plain text inside Markdown: angle brackets shown, not read as HTML tags (`<unk>` vanished)."""
    return html.escape(text, quote=False)


def warning_html(label: str, reasons: list[str]) -> str:
    """A boxed warning: numbers that measure a model's vocabulary must not read as a finding."""
    return (f'<div class="probe-warning" style="{WARNING_STYLE}">⚠ <strong>{html.escape(label)}: its numbers '
            f"are not meaningful for this caption.</strong> {html.escape(' '.join(reasons))}</div>")


def summary_markdown(result: ProbeResult, labels: dict[str, str]) -> str:
    """Warnings first (above everything a reader might quote), then the metrics, notes and the rules."""
    warnings = [warning_html(labels[m["model"]], m["warnings"]) for m in result.models if m.get("warnings")]
    lines = ["| model | accuracy vs negatives | augmented acc. | brittleness | activation | precision |",
             "|---|---|---|---|---|---|"]
    for m in result.models:
        flag = " ⚠" if m.get("warnings") else ""  # the warning above says why
        lines.append(f"| **{labels[m['model']]}** | {percent(m['accuracy'])} of {m['n_negatives']}{flag} | "
                     f"{percent(m['augmented_acc'])} | {percent(m['brittleness'])} | {m['activation']} | "
                     f"{m['precision']} |")
    if result.blind:
        lines.append(f"| *text only (blind)* | {percent(result.blind['accuracy'])} of "
                     f"{result.blind['n_negatives']} | | | | |")
    details = [f"- **{labels[m['model']]}** = `{m['model']}`" for m in result.models
               if labels[m["model"]] != m["model"]]
    if result.blind:
        details.append(f"- *text only (blind)*: {text_markdown(result.blind['scorer'])}, reading the captions "
                       "without the image. A model's accuracy at or below this is explained by language priors "
                       "alone.")
    details += [f"- {labels[m['model']]}: metrics over plausible negatives only; {m['n_implausible']} implausible "
                "left out" for m in result.models if m.get("plausible_only")]
    details += [f"- {labels[m['model']]}: {text_markdown(note)}" for m in result.models for note in m["notes"]]
    details += [f"- not loaded: {text_markdown(error)}" for error in result.errors]
    parts = ["\n\n".join(warnings), "\n".join(lines), "\n".join(details), VERDICT_HELP]
    return "\n\n".join(part for part in parts if part)


def highlighted(against: str, text: str, kind: str) -> str:
    """The text with the words that differ from the text it is judged against marked."""
    if kind in ("original", "custom"):
        return html.escape(text)
    return " ".join(f"<mark>{html.escape(part)}</mark>" if label else html.escape(part)
                    for part, label in diff_segments(against, text))


def score_cell(score: float, verdict: str, margin: float | None = None) -> str:
    """Score, verdict and (for a judged text) its margin over the text it is judged against in one cell, so each
    model takes one column and several fit without scrolling. The margin is the failure browser's too: >= 0 is a
    negative not beaten."""
    shown = html.escape(verdict)
    if verdict.startswith(("FAIL", "BRITTLE")):
        head, _, rest = shown.partition(":")
        shown = f"<strong>{head}</strong>:{rest}"
    return (f"{score:.4f}" + (f" · {shown}" if verdict else "")
            + (f" · margin {margin:+.4f}" if margin is not None else ""))


def breakable(name: str) -> str:
    """A snake_case name that may wrap after its underscores (a narrow column instead of a wide table)."""
    return html.escape(name).replace("_", "_<wbr>")


def table_frame(result: ProbeResult, labels: dict[str, str]) -> pd.DataFrame:
    """What matters first: the row number (the plot's x), the text, then per model its score and verdict;
    the taxonomy last."""
    verdicts = {spec: result.verdicts(spec) for spec in result.scores}
    margins = {spec: result.margins(spec) for spec in result.scores}
    rows = []
    for index, item in enumerate(result.texts):
        row = {"#": index, "text": highlighted(result.texts[item.anchor].text, item.text, item.kind)}
        judged = item.kind in ("negative", "positive")
        for spec, scores in result.scores.items():
            row[labels[spec]] = score_cell(scores[index], verdicts[spec][index],
                                           margins[spec][index] if judged else None)
        kind = item.kind if item.plausible else f"{item.kind} (implausible)"
        row.update(kind=kind, family=breakable(item.family), subtype=breakable(item.subtype))
        rows.append(row)
    return pd.DataFrame(rows)


# % of the table's width; every kind ("reference") fits unbroken, snake_case names wrap at "_".
FIXED_WIDTHS = {"#": 5, "kind": 12, "family": 11, "subtype": 12}


def column_widths(n_models: int) -> list[str]:
    """Shares of the table's width (#, text, a column per model, kind, family, subtype) that fill it without
    a horizontal scrollbar: models share at most 34%, the text takes the rest, cells wrap."""
    per_model = min(20.0, 34.0 / max(n_models, 1))
    text = 100 - sum(FIXED_WIDTHS.values()) - per_model * n_models
    shares = [FIXED_WIDTHS["#"], text, *[per_model] * n_models, *list(FIXED_WIDTHS.values())[1:]]
    return [f"{share:.4g}%" for share in shares]


# A hue per model, a shade per kind: the legend reads as "which model" first, then "which kind".
MODEL_PALETTES = [
    {"negative": "#1f77b4", "positive": "#6baed6", "reference": "#08306b", "custom": "#9ecae1"},
    {"negative": "#e6550d", "positive": "#fd8d3c", "reference": "#7f2704", "custom": "#fdae6b"},
    {"negative": "#31a354", "positive": "#74c476", "reference": "#00441b", "custom": "#a1d99b"},
    {"negative": "#756bb1", "positive": "#9e9ac8", "reference": "#3f007d", "custom": "#bcbddc"},
    {"negative": "#d6336c", "positive": "#e7649a", "reference": "#6b0f32", "custom": "#f7a1c4"},
]


def layout(result: ProbeResult, labels: dict[str, str]) -> dict:
    """Settings that fit the view to this result (see `apply_layout`): the table's column widths; the plot's
    colour per series, and x and y ranges with room around the points."""
    kinds = list(dict.fromkeys(item.kind for item in result.texts[1:]))
    colors = {f"{labels[spec]}: {kind}": MODEL_PALETTES[index % len(MODEL_PALETTES)].get(kind, "#888888")
              for index, spec in enumerate(result.scores) for kind in kinds}
    return {"column_widths": column_widths(len(result.scores)),
            "plot": {"color_map": colors, "x_lim": [0, len(result.texts)], "y_lim": margin_range(result)}}


def margin_range(result: ProbeResult) -> list[float]:
    """The plot's y range: every margin and 0 (the original's line), with room so no point is cut in half."""
    margins = [margin for spec in result.scores for margin in result.margins(spec)]
    low, high = min(0.0, *margins), max(0.0, *margins)
    pad = 0.08 * (high - low) or 0.01
    return [low - pad, high + pad]


def plot_frame(result: ProbeResult, labels: dict[str, str]) -> pd.DataFrame:
    """A point per (model, variant) at its table row's #; the original is left out (its margin is 0 by
    definition: the plot's zero line)."""
    records = [{"#": index, "margin": margin, "text": result.texts[index].text,
                "series": f"{labels[spec]}: {result.texts[index].kind}"}
               for spec in result.scores for index, margin in enumerate(result.margins(spec)) if index]
    return pd.DataFrame(records)


def write_downloads(result: ProbeResult) -> tuple[str, str]:
    """The result as CSV (full precision, like the JSON) and JSON, offered for one download each (`offer_new`)."""
    stamp = f"probe-{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**6}"
    return (offer_new(f"{stamp}.csv", lambda path: pd.DataFrame(result.rows(digits=None)).to_csv(path, index=False)),
            offer_new(f"{stamp}.json", lambda path: path.write_text(json.dumps(result.as_dict(), indent=2))))


def check_upload(payload: dict | None) -> None:
    """Read an upload as it arrives, so a file that is not an image is named now, not at the next Probe.

    The events skip Gradio's preprocessing, which opens an upload before any handler runs, so a file that is not
    an image failed there with no message at all; read by the backend, it gets the command line's message, under
    the user's file name."""
    if not payload:
        return
    try:
        load_image(payload["path"], name=payload.get("orig_name"))
    except ProbeInputError as error:
        raise gr.Error(str(error), print_exception=False) from error


def apply_layout(settings: dict):
    """Fit the table and the plot to the result they now show; a step of its own, after the values.

    Gradio's plot swaps in new points but keeps the legend and colour scale of the result it first drew, so
    a model added later had no points and no legend entry: new settings, once the points are in place, make
    it draw everything anew. The handler returns plain values, so API callers get the table, not an update."""
    return gr.Dataframe(column_widths=settings["column_widths"]), gr.ScatterPlot(**settings["plot"])


def admit(ctx: AppContext, actor: Actor, request: gr.Request | None) -> None:
    """A visitor who is not an admin may run `GUEST_PROBES_PER_MINUTE` probes a minute; more is a message."""
    if actor.is_admin:
        return
    wait = ctx.guards.guest_probes.spend(ctx.client(request) or "unknown")
    if wait:
        raise gr.Error(guest_probes_spent(wait), print_exception=False)


def make_handler(ctx: AppContext):
    def probe(image, caption, models, families, seed, extra, plausible_only=False, session=None,
              request: gr.Request | None = None, progress=gr.Progress()):
        """Run a probe and return (summary, table, plot, csv, json, the layout for `apply_layout`).

        Inputs arrive as sent (no preprocessing, see `check_upload`): the image as an upload's file data, which
        the probe reads where it runs (`ui.context.AppContext.probes`: a worker process in the app). A visitor's
        probes are counted (`admit`); every probe waits for its turn in the probes' short line, or is told the
        server is busy (`ui.context.Guards.probe_line`); a visitor's starts at least
        `backend.core.limits.PROBE_SPACING_S` after the one before it."""
        actor = actor_of(ctx, session)
        guest_models = ctx.guest_models()
        try:
            check_request(caption, extra, models or [], actor, guest_models)
        except ProbeInputError as error:
            raise gr.Error(str(error), print_exception=False) from error
        admit(ctx, actor, request)
        try:
            with ctx.guards.probe_line.slot(spaced=not actor.is_admin):
                result = ctx.probes.run((image or {}).get("path"), caption, models or [],
                                        image_name=(image or {}).get("orig_name"),
                                        families=list(families or []), seed=int(seed or 0), extra=extra,
                                        progress=lambda fraction, desc: progress(fraction, desc=desc),
                                        actor=actor, guest_models=guest_models,
                                        plausible_only=bool(plausible_only))
        except (ProbeInputError, ValueError, Refused, WorkerStopped) as error:
            raise gr.Error(str(error), print_exception=False) from error
        for problem in result.errors:
            gr.Warning(problem)
        labels = model_labels(list(result.scores), {spec: label for label, spec in ctx.current_model_choices()
                                                    if label != spec})
        csv_path, json_path = write_downloads(result)
        return (summary_markdown(result, labels), table_frame(result, labels), plot_frame(result, labels),
                csv_path, json_path, layout(result, labels))
    return probe


def events_calling(handler) -> set[int]:
    """The queue's event ids (what a client sends as fn_index) of the Blocks being built that run `handler`."""
    blocks = gr.context.Context.root_block
    return {index for index, function in (blocks.fns.items() if blocks else ()) if function.fn is handler}


def build(ctx: AppContext, visitor: Session) -> dict:
    """Lay out the Probe tab inside the current Blocks context; returns its inputs (image, caption, models, extra
    captions, families and their panel), which other tabs fill (the Benchmarks tab's "Send to Probe") or refresh
    (new models)."""
    with gr.Row():
        with gr.Column(scale=1, min_width=320):
            # PNG: an image another tab puts here (the Benchmarks tab's "Send to Probe") keeps its pixels.
            image = gr.Image(type="pil", label="Image", sources=["upload", "clipboard"], height=240, format="png")
            caption = gr.Textbox(label="Caption", placeholder="a brown dog holding a white frisbee")
            with gr.Row():
                models = gr.Dropdown(ctx.current_model_choices(), value=ctx.default_models, multiselect=True,
                                     allow_custom_value=True, label="Models", scale=5,
                                     info="Pick or type a spec: ARCH:tag, ARCH:/path.safetensors, hf-hub:org/name, "
                                          "catalog:NAME. 'not downloaded' models, hub ids and paths need an "
                                          "admin's sign-in")
                refresh_models = gr.Button("↻", size="sm", scale=0, min_width=40)
            run = gr.Button("Probe", variant="primary")
            with gr.Accordion("Perturbations and extra captions", open=False) as extras_panel:
                families = gr.CheckboxGroup([(desc, name) for name, desc in FAMILIES.items()],
                                            value=list(PROBE_DEFAULT_FAMILIES), label="Families",
                                            elem_id="probe-families")
                seed = gr.Number(value=0, precision=0, label="Seed", minimum=0)
                extra = gr.Textbox(label="Extra captions (one per line; '-' negative, '+' positive)", lines=3)
                plausible_only = gr.Checkbox(False, label="Metrics over plausible negatives only",
                                             info="leave out negatives absurd on their face, which a text-only "
                                                  "model rejects too (marked 'implausible' in the table)")
            if ctx.examples:
                gr.Examples(ctx.examples, inputs=[image, caption], label="Examples")
        with gr.Column(scale=2):
            summary = gr.Markdown()
            table = gr.Dataframe(EMPTY_TABLE, label="Variants", datatype="html", wrap=True,
                                 interactive=False, elem_id="probe-table", max_height=520)
            # No fixed height: with one, Gradio cuts the legend off below the plot.
            plot = gr.ScatterPlot(x="#", y="margin", color="series", elem_id="probe-plot",
                                  label="Margin over the original (ARO shuffles: over the reference)",
                                  tooltip=["#", "text", "series", "margin"])
            with gr.Row():
                csv_file = gr.DownloadButton("Download CSV", size="sm")
                json_file = gr.DownloadButton("Download JSON", size="sm")
    settings = gr.State({})
    inputs = [image, caption, models, families, seed, extra, plausible_only, visitor.state]
    outputs = [summary, table, plot, csv_file, json_file, settings]
    handler = make_handler(ctx)
    # preprocess=False: the probe reads the image itself (see `check_upload`).
    # concurrency_limit=None: every probe reaches its handler at once, where the probes' own line (a few running
    # or waiting, the rest told the server is busy) bounds them instead of Gradio's queue, which has no bound.
    for event in (run.click(handler, inputs, outputs, api_name="probe", preprocess=False, concurrency_limit=None),
                  caption.submit(handler, inputs, outputs, api_visibility="private", preprocess=False,
                                 concurrency_limit=None)):
        event.success(apply_layout, settings, [table, plot], api_visibility="private", show_progress="hidden")
        # New results start at their first row, not where the last ones were scrolled to.
        event.success(None, js=SCROLL_TABLE_TO_TOP)
    ctx.guards.probe_events.update(events_calling(handler))
    # Finished training runs' checkpoints join the list without restarting the app.
    refresh_models.click(lambda: gr.Dropdown(choices=ctx.current_model_choices()), None, models,
                         api_name="model_choices")
    image.upload(check_upload, image, None, api_visibility="private", show_progress="hidden", preprocess=False)
    return {"image": image, "caption": caption, "models": models, "extra": extra, "families": families,
            "extras_panel": extras_panel}
