"""The Campaigns tab's Items view: the items table, one item's images and answers, and the admin's override.

The layout and its events only: the handlers (`h`, from `ui.tabs.campaigns.make_handlers`) check the admin and
call `backend.annotate`; what the views show is read by `ui.tabs.campaigns_items`.
"""
from __future__ import annotations

import gradio as gr
import pandas as pd

from backend.annotate.resolution import OVERRIDABLE
from ui.tabs import campaigns_items as view


def build() -> tuple[dict, list]:
    """The items table and one item's detail; returns (controls, the item view's outputs)."""
    with gr.Row():
        gr.Markdown("Click a row to see the item's images and answers; ↻ shows the latest stages and answers.")
        refresh = gr.Button("↻ Refresh", size="sm", scale=0)
    table = gr.Dataframe(pd.DataFrame(columns=view.ITEM_COLUMNS), interactive=False, max_height=320, wrap=True,
                         column_widths=["5%", "9%", "5%", "24%", "24%", "9%", "16%", "8%"],
                         elem_id="campaign-items-table", label="Items")
    with gr.Row(equal_height=True):
        item_id = gr.Number(None, precision=0, label="Item id", scale=1, elem_id="campaign-item-id")
        show = gr.Button("Show item", scale=0)
        task = gr.Dropdown(list(OVERRIDABLE), value="select", label="Override task", scale=1)
        # Custom values allowed: the choices follow the task, and `resolution.override` says what is valid.
        decision = gr.Dropdown(["1", "2", "3", "4", "none"], value="1", label="Decision", scale=1,
                               allow_custom_value=True)
        override = gr.Button("Override", variant="stop", scale=0, elem_id="campaign-override")
    overridden = gr.Markdown()
    text = gr.Markdown(elem_id="campaign-item")
    with gr.Row():
        original = gr.Image(label="Original image", interactive=False, height=220, scale=1, buttons=[])
        gallery = gr.Gallery(label="Candidate images, numbered as annotators see them", columns=4, height=260,
                             scale=3, elem_id="campaign-candidates", allow_preview=True)
    candidates = gr.Markdown(elem_id="campaign-candidates-table")
    answers = gr.Dataframe(pd.DataFrame(columns=view.ANSWER_COLUMNS), interactive=False, max_height=240,
                           label="Raw answers (admin overrides included)", elem_id="campaign-answers")
    controls = {"table": table, "refresh": refresh, "item_id": item_id, "show": show, "task": task,
                "decision": decision, "override": override, "overridden": overridden}
    return controls, [text, original, gallery, candidates, answers]


def wire(h: dict, campaign, state, items: dict, shown: list, status) -> None:
    """Selecting a row or an id shows the item; an override records the decision, then redraws the item, the
    table and the campaign's status (`status`)."""
    def pick_row(evt: gr.SelectData):
        """A click anywhere on a row selects that row's item."""
        row = evt.row_value or []
        return row[0] if row else gr.skip()

    item_id, task, decision = items["item_id"], items["task"], items["decision"]
    items["table"].select(pick_row, None, item_id, api_visibility="private", queue=False).then(
        h["item"], [campaign, item_id, state], shown, api_visibility="private").then(
        h["decisions"], [task, item_id, state], decision, api_visibility="private")
    items["show"].click(h["item"], [campaign, item_id, state], shown, api_name="campaign_item").then(
        h["decisions"], [task, item_id, state], decision, api_visibility="private")
    item_id.submit(h["item"], [campaign, item_id, state], shown, api_visibility="private")
    task.change(h["decisions"], [task, item_id, state], decision, api_visibility="private")
    items["override"].click(h["override"], [campaign, item_id, task, decision, state], items["overridden"],
                            api_name="override_item").success(
        h["item"], [campaign, item_id, state], shown, api_visibility="private").then(
        h["items"], [campaign, state], items["table"], api_visibility="private").then(
        lambda name, session: h["status"](name, session)[0], [campaign, state], status, api_visibility="private")
