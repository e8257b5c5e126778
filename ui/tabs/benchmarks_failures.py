"""The failure browser of the Benchmarks tab: what a model got wrong, item by item, and where two models disagree.

Views only: items, subtypes, disagreements and images come from
`backend.benchmarks.results` (every evaluated item's texts and scores are stored
with its result). An item's scores are laid out as ``scores[k][i]`` = caption k
with image i, and caption k is image k's true caption (the layout every item rule
of `backend.benchmarks.task` reads; with one image, caption 0 is the true one; the benchmark says which texts are
hard positives: `backend.benchmarks.results.text_roles`). A margin is the Probe's: the best rival caption's score
minus the true caption's, so >= 0 is wrong in both tabs. "Send to Probe" puts the item's own image (its decoded
pixels, saved losslessly), its true caption, its negatives and positives and the result's model into the Probe tab.
"""
from __future__ import annotations

import html
from collections.abc import Mapping

import gradio as gr
import pandas as pd
from PIL import Image

from backend.benchmarks.results import (
    disagreements,
    get_result,
    image_margins,
    item_images,
    items,
    model_label,
    paired_test,
    probe_hand_off,
    results,
    subtypes,
    text_roles,
)
from backend.core.store import Store
from ui.context import AppContext
from ui.session import shown

PAGE = 50
FAILURE_COLUMNS = ["#", "subtype", "true caption", "model's pick", "margin"]
MARGIN_HELP = "margin: the best rival caption's score minus the true caption's (>= 0: wrong), as in the Probe"
DISAGREE_COLUMNS = ["#", "subtype", "true caption", "first right", "margin (first)", "margin (second)"]
SHOWN_SIZE = 224  # tiny benchmark images (the toy world's are 64 px) are enlarged so a person can see them


def result_choices(store: Store, names: Mapping[str, str] | None = None) -> list[tuple[str, int]]:
    """(label, id) of every stored result that kept its items, newest first; models named as in the leaderboard."""
    return [(f"#{row['id']} {model_label(row, names)} · {row['benchmark']}"
             + (f" [first {row['item_limit']}]" if row["item_limit"] else ""), row["id"])
            for row in results(store) if row["n_items"] is not None]


def refreshed_choices(ctx: AppContext) -> gr.Dropdown:
    """The result list as of now (the Benchmarks tab's timer calls it when an evaluation finished)."""
    return gr.Dropdown(choices=result_choices(ctx.store, ctx.run_names()))


def roles_of(benchmark: str, item: dict) -> list[str]:
    return text_roles(benchmark, len(item["texts"]), len(item["scores"][0]))


def margin(benchmark: str, item: dict) -> float:
    """The item's margin: the largest over its images of the best rival's score minus the true caption's."""
    return max(image_margins(item["scores"], roles_of(benchmark, item)))


def pick(scores: list[list[float]], image: int = 0) -> int:
    """The caption the model scores highest with `image`."""
    return max(range(len(scores)), key=lambda k: scores[k][image])


def comparable(store: Store, chosen: dict, names: Mapping[str, str] | None = None) -> list[tuple[str, int]]:
    """Other results on the same benchmark, data version and item limit: the only ones an item-by-item comparison
    is meaningful with."""
    key = (chosen["benchmark"], chosen["version"], chosen["item_limit"])
    same = {row["id"] for row in results(store) if (row["benchmark"], row["version"], row["item_limit"]) == key}
    return [(label, rid) for label, rid in result_choices(store, names) if rid in same - {chosen["id"]}]


def failure_frame(benchmark: str, rows: list[dict]) -> pd.DataFrame:
    """One row per item: its position, subtype, true caption, the caption the model preferred, the margin."""
    return pd.DataFrame([{"#": row["position"], "subtype": row["subtype"], "true caption": row["texts"][0],
                          "model's pick": row["texts"][pick(row["scores"])],
                          "margin": round(margin(benchmark, row), 4)} for row in rows], columns=FAILURE_COLUMNS)


def disagreement_frame(benchmark: str, rows: list[dict]) -> pd.DataFrame:
    """One row per item the two results judge differently: which one got it right, and both margins."""
    return pd.DataFrame([{"#": row["position"], "subtype": row["subtype"], "true caption": row["texts"][0],
                          "first right": bool(row["correct"]), "margin (first)": round(margin(benchmark, row), 4),
                          "margin (second)": round(margin(benchmark, {**row, "scores": row["other_scores"]}), 4)}
                         for row in rows], columns=DISAGREE_COLUMNS)


ROLE_SHOWN = {"true": "✓ true", "positive": "+ positive (also true)", "negative": "✗ negative"}


def captions_html(benchmark: str, item: dict) -> str:
    """The item's captions with their score per image; each text's role (true, hard positive, negative), the
    model's pick per image in bold; the margin per image where there are several."""
    scores, n_images = item["scores"], len(item["scores"][0])
    roles = roles_of(benchmark, item)
    margins = image_margins(scores, roles)
    picks = {pick(scores, i) for i in range(n_images)} if n_images == 1 else set()
    head = "".join(f"<th>score, image {i + 1}</th>" for i in range(n_images))
    lines = []
    for k, (text, role) in enumerate(zip(item["texts"], roles)):
        shown = ROLE_SHOWN[role] + (f" (image {k + 1})" if role == "true" and n_images > 1 else "")
        cells = "".join(f"<td>{'<b>' if pick(scores, i) == k else ''}{scores[k][i]:.4f}"
                        f"{'</b>' if pick(scores, i) == k else ''}</td>" for i in range(n_images))
        chosen = " · model's pick" if k in picks else ""
        lines.append(f'<tr class="{role}"><td class="role">{shown}{chosen}</td>'
                     f'<td class="caption">{html.escape(text)}</td>{cells}</tr>')
    verdict = "right" if item["correct"] else "wrong"
    per_image = (" (" + ", ".join(f"image {i + 1}: {m:+.4f}" for i, m in enumerate(margins)) + ")"
                 if n_images > 1 else "")
    return (f'<div id="failure-verdict">Item #{item["position"]} ({html.escape(item["subtype"])}): the model got it '
            f'<b>{verdict}</b>; margin {max(margins):+.4f}{per_image} (best rival minus true caption; '
            f'&ge; 0 is wrong).</div><table class="failure-captions">'
            f"<thead><tr><th>caption</th><th>text</th>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>")


def enlarged(image: Image.Image) -> Image.Image:
    """A small image scaled up (nearest neighbour: the pixels stay what the model saw) for display only."""
    factor = max(1, SHOWN_SIZE // max(image.size))
    if factor == 1:
        return image
    return image.resize((image.width * factor, image.height * factor), Image.Resampling.NEAREST)


def make_handlers(ctx: AppContext) -> dict:
    """The browser's callbacks over one store (read-only: for every visitor)."""
    store = ctx.store

    def guarded(action, *args):
        try:
            return action(*args)
        except ValueError as error:  # DataMissing (a ValueError) too: a rebuilt image needs the benchmark's data
            raise shown(error) from error

    def result_id(value) -> int:
        if value in (None, ""):
            raise gr.Error("Pick a result (model × benchmark) first.", print_exception=False)
        return int(value)

    def pick_result(value):
        """The result's subtypes with their counts, and the results it can be compared with (same item set); the
        item shown for the previous result is cleared."""
        cleared: tuple[list[Image.Image], str, None] = ([], "", None)  # the gallery, captions and position
        if value in (None, ""):
            return gr.Dropdown(choices=[], value=None), gr.Dropdown(choices=[], value=None), *cleared
        chosen = guarded(get_result, store, result_id(value))
        counts = subtypes(store, chosen["id"])
        wrong = sum(row[2] for row in counts)
        options = [(f"all ({wrong} wrong of {sum(row[1] for row in counts)})", "")]
        options += [(f"{name} ({bad} wrong of {n})", name) for name, n, bad in counts]
        return gr.Dropdown(choices=options, value=""), \
            gr.Dropdown(choices=comparable(store, chosen, ctx.run_names()), value=None), \
            *cleared

    def failures(value, subtype="", page=1):
        """The items the model got wrong (of one subtype, or all), PAGE at a time; none while no result is picked."""
        if value in (None, ""):
            return pd.DataFrame(columns=FAILURE_COLUMNS)
        offset = PAGE * max(int(page or 1) - 1, 0)
        chosen = guarded(get_result, store, result_id(value))
        return failure_frame(chosen["benchmark"], items(store, chosen["id"], True, subtype or None, PAGE, offset))

    def item(rid: int, position) -> dict:
        if position in (None, ""):
            raise gr.Error("Pick an item first (click a row of a table).", print_exception=False)
        found = items(store, rid, False, None, 1, int(position))  # positions run 0..n-1, so the offset is one
        if not found:
            raise gr.Error(f"Result {rid} has no item {position}.", print_exception=False)
        return found[0]

    def failure_item(value, position):
        """An item's images (enlarged for display) and its captions with scores; nothing while none is picked."""
        if position in (None, "") or value in (None, ""):
            return [], ""
        rid = result_id(value)
        shown_item = item(rid, position)
        images = guarded(item_images, store, rid, shown_item["position"], ctx.settings.benchmarks_dir)
        return [enlarged(image) for image in images], captions_html(get_result(store, rid)["benchmark"], shown_item)

    def compare(first, second):
        """Items one result gets right and the other wrong."""
        if second in (None, ""):
            return pd.DataFrame(columns=DISAGREE_COLUMNS)
        rows = guarded(disagreements, store, result_id(first), int(second), PAGE)
        return disagreement_frame(get_result(store, result_id(first))["benchmark"], rows)

    def paired(first, second):
        """The two results' paired test: exact McNemar p-value, discordant items, the difference's interval."""
        if second in (None, "") or first in (None, ""):
            return ""
        return "**Paired test** (first = A, second = B): " + guarded(paired_test, store, result_id(first),
                                                                     int(second)).line()

    def send_to_probe(value, position):
        """The item as the benchmark scored it, into the Probe tab: the image it is decided on (its own pixels: the
        Probe's image component saves PNG), its true caption, its rivals as negative and hard positives as positive
        extra captions, the result's model, no generated perturbations (so the Probe scores the same texts); the
        Probe tab opens on it."""
        rid = result_id(value)
        shown_item = item(rid, position)
        sent = guarded(probe_hand_off, store, rid, shown_item["position"], ctx.settings.benchmarks_dir)
        model = get_result(store, rid)["model"]
        where = f"image {sent.image_number + 1} of {sent.n_images}, " if sent.n_images > 1 else ""
        gr.Info(f"Item #{shown_item['position']} sent ({where}margin {sent.margin:+.4f} in the benchmark): "
                "press Probe to score it with the same model.")
        return (sent.image, sent.caption, sent.extra_lines(), [model], [], gr.Accordion(open=True),
                gr.Tabs(selected="probe"))

    return {"choices": lambda: refreshed_choices(ctx), "pick_result": pick_result,
            "failures": failures, "failure_item": failure_item, "compare": compare, "paired": paired,
            "send_to_probe": send_to_probe}


def selected_position(table: pd.DataFrame, event: gr.SelectData) -> int:
    """The item number of the clicked table row."""
    return int(table.iloc[event.index[0]]["#"])


def build(ctx: AppContext, probe_inputs: dict, tabs: gr.Tabs) -> gr.Dropdown:
    """Lay out the failure browser (an accordion of the Benchmarks tab) and wire its endpoints; returns its result
    list, which the tab refreshes when an evaluation finishes."""
    handlers = make_handlers(ctx)
    with gr.Accordion("Failures: what a model got wrong", open=True, elem_id="failures"):
        with gr.Row():
            result = gr.Dropdown(result_choices(ctx.store, ctx.run_names()), value=None, allow_custom_value=True,
                                 scale=3,
                                 label="Result (model × benchmark)", elem_id="failure-result")
            subtype = gr.Dropdown([], allow_custom_value=True, label="Subtype (wrong of all)", scale=2,
                                  elem_id="failure-subtype")
            page = gr.Number(1, precision=0, minimum=1, label=f"Page ({PAGE} items)", scale=0, min_width=110)
            reload = gr.Button("↻", size="sm", scale=0, min_width=40)
        with gr.Row():
            with gr.Column(scale=3):
                wrong = gr.Dataframe(pd.DataFrame(columns=FAILURE_COLUMNS), interactive=False, wrap=True,
                                     column_widths=["9%", "16%", "33%", "30%", "12%"],
                                     max_height=360, label=f"Items the model got wrong (click one); {MARGIN_HELP}",
                                     elem_id="failure-table")
                other = gr.Dropdown([], allow_custom_value=True, elem_id="failure-other",
                                    label="Where two models disagree: compare with (same item set)")
                disagree = gr.Dataframe(pd.DataFrame(columns=DISAGREE_COLUMNS), interactive=False, wrap=True,
                                        max_height=300, label="Items one gets right and the other wrong (click one)",
                                        elem_id="failure-disagree")
                paired = gr.Markdown(elem_id="failure-paired")
            with gr.Column(scale=2):
                # No preview: a single image opened as a preview showed only its top-left corner.
                gallery = gr.Gallery(label="Item image(s)", columns=2, height="auto", object_fit="contain",
                                     allow_preview=False, preview=False, fit_columns=False, elem_id="failure-images")
                captions = gr.HTML(elem_id="failure-captions")
                send = gr.Button("Send to Probe", elem_id="send-to-probe")
    position = gr.Number(None, visible=False, precision=0)
    reload.click(handlers["choices"], None, result, api_name="failure_results")
    # Named before the private reuses below, which would otherwise take the name "failures". `input`, not
    # `change`: picking a result sets the subtype too, and its own step below loads the table once.
    subtype.input(handlers["failures"], [result, subtype, page], wrong, api_name="failures")
    result.change(handlers["pick_result"], result, [subtype, other, gallery, captions, position],
                  api_name="failure_subtypes").then(handlers["failures"], [result, subtype, page], wrong,
                                                    api_visibility="private")
    page.submit(handlers["failures"], [result, subtype, page], wrong, api_visibility="private")
    other.change(handlers["compare"], [result, other], disagree, api_name="disagreements").then(
        handlers["paired"], [result, other], paired, api_name="paired_test")
    for table in (wrong, disagree):
        table.select(selected_position, table, position, api_visibility="private")
    position.change(handlers["failure_item"], [result, position], [gallery, captions], api_name="failure_item")
    send.click(handlers["send_to_probe"], [result, position],
               [probe_inputs[key] for key in ("image", "caption", "extra", "models", "families", "extras_panel")]
               + [tabs], api_name="send_to_probe")
    return result
