"""The Campaigns tab's Export view (admins): the BiVLC-schema dataset and the answers CSV written to a folder
(and pushed to the Hub), the same export zipped for the browser, and the database backup.

Through `backend.annotate.service` (which refuses non-admins; every handler checks first too). The zip is built
in a temporary folder under the workspace's downloads folder, handed to Gradio's cache (`ui.context.offer`) and
removed: nothing is left behind, and the downloads folder itself is never served. A handler runs on one of
Gradio's worker threads, so a long export keeps that admin waiting, not the server (bench/export_zip.py).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from backend import jobs
from backend.annotate import service
from backend.core.auth import PermissionDenied
from ui.context import AppContext, offer
from ui.session import admin_actor

ERRORS = (ValueError, PermissionDenied, OSError, jobs.JobError)


def export_markdown(result: dict) -> str:
    """What the export wrote, and where."""
    if result.get("manifest"):  # a validation campaign (`backend.annotate.validation`)
        text = (f"Exported **{result['rows']}** validated negatives to `{result['dataset']}`: a SugarCrepe-format "
                f"benchmark (evaluate `{result['benchmark']}`) and the training manifest `{result['manifest']}`; ")
    else:
        text = f"Exported **{result['rows']}** rows to `{result['dataset']}` (load with `datasets.load_from_disk`); "
    text += f"{result['answers']} raw answers in `{result['answers_csv']}`."
    if result.get("pushed"):
        text += f"  \nPushed to {result['pushed']}"
    if result.get("zip_files"):
        text += f"  \nZipped {result['zip_files']} files: download the zip below."
    return text


def make_handlers(ctx: AppContext) -> dict:
    settings = ctx.settings

    def exported(name, out_dir, repo_id="", private=True, session=None) -> dict:
        actor = admin_actor(ctx, session, "exporting a campaign")
        if not name:
            raise gr.Error("Pick a campaign first (or create one).", print_exception=False)
        try:
            return service.export_campaign(actor, name, settings, (out_dir or "").strip(), (repo_id or "").strip(),
                                           bool(private))
        except ERRORS as error:
            raise gr.Error(str(error), print_exception=False) from error

    def export(name, out_dir, repo_id, private, session=None):
        """The BiVLC-schema dataset and the answers CSV (and a push to the Hub when a repo id is given)."""
        result = exported(name, out_dir, repo_id, private, session)
        return export_markdown(result), offer(result["answers_csv"])

    def export_zip(name, out_dir, session=None):
        """Export now, then the export folder (dataset, answers CSV) as one zip for the browser."""
        result = exported(name, out_dir, session=session)
        settings.downloads_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".zip-", dir=settings.downloads_dir) as folder:
            result.update(service.zip_export(result, Path(folder) / f"{name}-export.zip"))
            return export_markdown(result), offer(result["zip"])

    def backup(session=None):
        """A consistent copy of the whole store (every campaign, answer and job), for download."""
        actor = admin_actor(ctx, session, "downloading the database")
        try:
            return offer(service.backup_database(actor, settings))
        except ERRORS as error:
            raise gr.Error(str(error), print_exception=False) from error

    return {"export": export, "export_zip": export_zip, "backup": backup}


def build(ctx: AppContext, campaign, state) -> None:
    """The view's layout and wiring, inside the Campaigns tab's "Export" tab."""
    h = make_handlers(ctx)
    gr.Markdown("Items that passed both annotation steps become a BiVLC-schema dataset (images embedded); a "
                "validation campaign's validated negatives become a SugarCrepe-format benchmark and a training "
                "manifest; every raw answer goes to a CSV.")
    with gr.Row():
        out_dir = gr.Textbox(label="Folder (optional)", placeholder=f"default: {ctx.settings.downloads_dir}/<name>")
        repo_id = gr.Textbox(label="Hub dataset repo (optional)", placeholder="org/name; needs HF_TOKEN")
        private = gr.Checkbox(True, label="Private on the Hub")
    with gr.Row():
        export = gr.Button("Export", variant="primary")
        export_zip = gr.Button("Export and download as zip", elem_id="campaign-export-zip")
    result = gr.Markdown(elem_id="campaign-export")
    with gr.Row():
        answers_csv = gr.File(label="Answers CSV", interactive=False)
        zipped = gr.File(label="Export (zip: dataset folder and answers.csv)", interactive=False,
                         elem_id="campaign-export-zip-file")
    gr.Markdown("A copy of the whole database (campaigns, answers, jobs), made safely while the app runs:")
    backup = gr.Button("Download database backup")
    backup_file = gr.File(label="Database backup", interactive=False)
    export.click(h["export"], [campaign, out_dir, repo_id, private, state], [result, answers_csv],
                 api_name="export_campaign")
    export_zip.click(h["export_zip"], [campaign, out_dir, state], [result, zipped], api_name="export_zip")
    backup.click(h["backup"], state, backup_file, api_name="backup_database")
