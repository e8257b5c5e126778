"""What a person sees on the Benchmarks tab and after "Send to Probe", in Debian's chromium at 1400 px, over a real
app on 127.0.0.1 whose store holds two models evaluated on every toy benchmark: the shipped toy model and a finished
training run's checkpoint (a train job row named "negclip-toy" whose best checkpoint is a randomly initialised toy
model).

Asserted as drawn: the leaderboard's default columns (one per benchmark, its paper's main metric) fit the window with
whole words in their headers; the chart's bars are those metrics with a chance line and their values written on them;
the launch list marks what has its data and picks a ready benchmark; a run is named alike in the leaderboard, the
CSV and the chart; the failure browser lists a new result without a click; and an item sent to the Probe gets the
benchmark's verdict and margin there. `SAVE_SCREENSHOT=1` writes docs/benchmarks.png, docs/benchmarks-failures.png
and docs/probe-sent.png (docs/probe.png, a probe with its perturbations, is tests/test_browser.py's).
"""
import csv
import io
import json
import re
from pathlib import Path

import pytest
from gradio_client import handle_file

from backend.benchmarks import BENCHMARKS
from backend.benchmarks.job import EvaluateConfig, evaluate_models
from backend.benchmarks.results import items, probe_hand_off, results
from backend.cli import main
from backend.core.store import Store
from tests.support.admin import CREDENTIALS, sign_in
from tests.support.appserver import running_app
from tests.support.browser import choose, horizontal_overflow, new_page, offered, read_table, screenshot
from tests.support.clients import local_client
from tests.support.tiny import random_toy_checkpoint
from tests.support.waiting import wait_for
from ui.tabs.benchmarks_chart import column_title

pytestmark = pytest.mark.system

LIMIT = 12
TOY = [name for name in BENCHMARKS if name.startswith("toy-")]
RUN = "negclip-toy"
RUN_ROW = f"{RUN} (best) (gelu, fp32) [first {LIMIT} items]"
TOY_ROW = f"toyworld (gelu, fp32) [first {LIMIT} items]"
# The papers' main metrics (docs/REFERENCE.md): BiVLC's group score, Kamath et al.'s augmented accuracy.
PAPER_HEADLINES = {"toy-bivlc": "group", "toy-hard-positives": "replace/augmented_acc",
                   "toy-sugarcrepe": "overall", "toy-aro-order": "accuracy", "toy-zeroshot-shape": "top1"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("benchmark-views")
    store = Store(workspace / "lab.db")
    run_spec = random_toy_checkpoint(workspace / "runs" / RUN / "best")
    job_id = store.create_job("train", {}, name=RUN)
    store.update_job(job_id, status="done", result={"best": run_spec.split(":", 1)[1]})
    evaluate_models(EvaluateConfig(models=["toyworld", run_spec], benchmarks=TOY, limit=LIMIT, device="cpu",
                                   workers=0), store=store)
    with running_app(workspace, ["toyworld"], workspace, **CREDENTIALS) as url:
        yield {"url": url, "store": store, "run": run_spec, "workspace": workspace}


def chart_data(plot: dict) -> list[dict]:
    """The rows behind the chart (the Vega-Lite spec's inline dataset)."""
    spec = json.loads(plot["plot"])
    return next(iter(spec["datasets"].values()))


def test_the_default_columns_are_each_benchmarks_headline_and_every_metric_is_one_click_away(app):
    client = local_client(app["url"])
    table, plot = client.predict([], "headline", api_name="/leaderboard")
    assert table["headers"][:2] == ["model", "source"] and table["headers"][-1] == "date"
    shown = table["headers"][2:-1]
    assert len(shown) == len(TOY) and {column.split(" / ", 1)[0] for column in shown} == set(TOY)
    for benchmark, metric in PAPER_HEADLINES.items():
        assert column_title(f"{benchmark}/{metric}") in shown
    every, _ = client.predict([], "every", api_name="/leaderboard")
    assert len(every["headers"]) > 40 and set(shown) <= set(every["headers"])
    bars = chart_data(plot)
    assert {bar["group"] for bar in bars} == set(shown)
    bivlc = next(bar for bar in bars if bar["benchmark"] == "toy-bivlc")
    assert bivlc["chance (%)"] == pytest.approx(100 / 6, abs=0.05) and bivlc["low (%)"] <= bivlc["value (%)"]


def test_a_run_is_named_alike_in_the_leaderboard_the_csv_and_the_chart(app, capsys):
    client = local_client(app["url"])
    table, plot = client.predict([], "headline", api_name="/leaderboard")
    assert {row[0] for row in table["data"]} >= {RUN_ROW, TOY_ROW}
    assert {bar["model"] for bar in chart_data(plot)} == {RUN_ROW, TOY_ROW}
    admin = sign_in(app["url"])
    exported = {row["model"] for row in csv.DictReader(io.StringIO(Path(admin.predict(
        [], api_name="/leaderboard_csv")).read_text()))}
    assert {RUN_ROW, TOY_ROW} <= exported and not any(app["run"] in name for name in exported)
    assert main(["leaderboard", "--db", str(app["workspace"] / "lab.db")]) == 0  # and on the command line
    assert {RUN_ROW, TOY_ROW} <= {row["model"] for row in csv.DictReader(io.StringIO(capsys.readouterr().out))}


# Where each header's text wraps, read character by character from the layout: "toy-bivlc / gro|up" is a word
# broken across lines (what 67 narrow columns did to every header).
_BROKEN_WORDS_JS = """ths => ths.flatMap(th => {
    const node = th.querySelector('.header').firstChild, text = node.textContent, broken = [];
    let lastTop = null;
    for (let i = 0; i < text.length; i++) {
        const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
        const rects = range.getClientRects();
        if (!rects.length) continue;
        const top = Math.round(rects[0].top);
        if (lastTop !== null && top > lastTop + 2 && !/[\\s-]/.test(text[i - 1]))
            broken.push(text.slice(0, i) + '|' + text.slice(i));
        lastTop = top;
    }
    return broken;
})"""


def broken_header_words(page) -> list[str]:
    """Headers with a word broken across lines, marked where it breaks."""
    return page.locator("#bench-leaderboard thead th[role=columnheader]").evaluate_all(_BROKEN_WORDS_JS)


@pytest.mark.browser
def test_the_tab_at_1400_px_fits_its_leaderboard_draws_headlines_with_chance_and_marks_ready_data(app, browser):
    with new_page(browser) as page:
        page.goto(app["url"])
        page.get_by_role("tab", name="Benchmarks").click()
        rows = wait_for(lambda: {row["model"]["text"]: row for row in read_table(page, "bench-leaderboard")[0]}
                        or None, 30, "the leaderboard")
        assert {RUN_ROW, TOY_ROW, "Chance"} <= set(rows)
        assert horizontal_overflow(page, "bench-leaderboard") == 0, "the default columns fit 1400 px"
        assert broken_header_words(page) == []
        # The chart: a bar per model and benchmark, each with its value written above it, a chance line per group.
        svg = page.locator("#bench-chart svg.marks")
        bars = wait_for(lambda: (n := svg.locator("path[aria-roledescription='bar']").count()) and n, 30, "bars")
        assert bars == 2 * len(TOY)
        texts = svg.locator("text").evaluate_all("texts => texts.map(t => t.textContent)")
        assert "toy-bivlc / group" in texts and "toy-hard-positives / replace / augmented_acc" in texts
        assert texts.count("chance 50.0") >= 2 and "chance 16.7" in texts
        toy_bivlc = next(r for r in results(app["store"], ["toy-bivlc"]) if r["model"] == "toyworld")
        assert f"{100 * toy_bivlc['metrics']['group']:.1f}" in texts
        # The launch list: a ready default, and benchmarks without data marked (checked without downloading).
        picked = page.locator("#bench-benchmarks .token")
        wait_for(lambda: picked.count() == 1 and "toy-" in picked.inner_text(), 120, "a ready default benchmark")
        assert "data ready" in page.locator("#bench-about").inner_text()
        page.locator("#bench-benchmarks input").click()
        options = page.get_by_role("option").all_inner_texts()
        assert "✗ aro-vg-relation (needs data)" in options and "✓ toy-bivlc" in options
        page.keyboard.press("Escape")
        screenshot(page, "benchmarks.png")


@pytest.mark.browser
def test_the_failure_list_offers_a_new_result_without_a_click(app, browser):
    admin = sign_in(app["url"])
    with new_page(browser) as page:
        page.goto(app["url"])
        page.get_by_role("tab", name="Benchmarks").click()
        page.locator("#failure-result input").wait_for()
        status = admin.predict(["toyworld"], ["toy-sugarcrepe"], 5, api_name="/launch_evaluate")
        job_id = int(re.search(r"#(\d+) evaluate", status).group(1))
        job = wait_for(lambda: (row := app["store"].get_job(job_id))["status"] in ("done", "failed") and row, 180,
                       "the evaluate job")
        assert job["status"] == "done", job.get("error")
        new = next(r for r in results(app["store"], ["toy-sugarcrepe"]) if r["item_limit"] == 5)

        wait_for(lambda: any(name.startswith(f"#{new['id']} toyworld")
                             for name in offered(page, "Result (model × benchmark)")),
                 30, "the new result in the failure browser's list")


def probe_cell(page, row_text: str) -> str:
    rows = read_table(page, "probe-table")[0]
    row = next(row for row in rows if row["text"]["text"] == row_text)
    return row["toyworld"]["text"]


@pytest.mark.browser
def test_an_item_sent_to_the_probe_gets_the_benchmarks_verdict_and_margin_there(app, browser):
    store = app["store"]
    toy = next(r for r in results(store, ["toy-sugarcrepe"]) if r["model"] == "toyworld" and r["item_limit"] == LIMIT)
    wrong = items(store, toy["id"], True, None, 1)[0]
    sent = probe_hand_off(store, toy["id"], wrong["position"])
    assert sent.margin >= 0 and sent.negatives == [wrong["texts"][1]]
    with new_page(browser) as page:
        page.goto(app["url"])
        page.get_by_role("tab", name="Benchmarks").click()
        choose(page, "Result (model × benchmark)", f"#{toy['id']} toyworld")
        wait_for(lambda: read_table(page, "failure-table")[0], 30, "the failures table")
        page.locator("#failure-table [role=gridcell]", has_text=wrong["texts"][0]).first.click()
        verdict = page.locator("#failure-verdict")
        wait_for(lambda: f"Item #{wrong['position']} " in verdict.inner_text(), 30, "the clicked item")
        shown_margin = float(re.search(r"margin ([+-]\d\.\d{4})", verdict.inner_text()).group(1))
        assert "wrong" in verdict.inner_text() and shown_margin == round(sent.margin, 4)
        screenshot(page, "benchmarks-failures.png")

        page.locator("#send-to-probe").click()
        caption = page.get_by_label("Caption", exact=True)
        wait_for(lambda: caption.is_visible() and caption.input_value() == wrong["texts"][0], 30, "the Probe")
        extra = page.get_by_label("Extra captions (one per line; '-' negative, '+' positive)")
        assert extra.input_value() == f"- {wrong['texts'][1]}"
        assert page.locator("#probe-families input:checked").count() == 0, "only the benchmark's texts are scored"
        page.get_by_role("button", name="Probe", exact=True).click()
        cell = wait_for(lambda: probe_cell(page, wrong["texts"][1]) if read_table(page, "probe-table")[0] else None,
                        120, "the Probe's table")
        assert "FAIL: not below original" in cell, cell
        probe_margin = float(re.search(r"margin ([+-]\d\.\d{4})", cell).group(1))
        assert abs(probe_margin - shown_margin) <= 1e-4, (probe_margin, shown_margin)
        screenshot(page, "probe-sent.png")


@pytest.mark.parametrize("benchmark, wrong_only", [("toy-sugarcrepe", False), ("toy-bivlc", True),
                                                   ("toy-hard-positives", True)])
def test_the_probe_scores_a_sent_item_as_the_benchmark_did(app, benchmark, wrong_only):
    """Through the API, as a client would: send, then probe what was sent; the sign of the margin is the verdict."""
    store, client = app["store"], local_client(app["url"])
    result = next(r for r in results(store, [benchmark]) if r["model"] == "toyworld" and r["item_limit"] == LIMIT)
    item = items(store, result["id"], wrong_only, None, 1)[0]
    sent = probe_hand_off(store, result["id"], item["position"])
    image, caption, extra, models, families, *_ = client.predict(result["id"], item["position"],
                                                                 api_name="/send_to_probe")
    assert (caption, extra, models, families) == (sent.caption, sent.extra_lines(), ["toyworld"], [])
    _summary, table, *_ = client.predict(handle_file(image), caption, models,
                                         families, 0, extra, False, None, api_name="/probe")
    rows = [dict(zip(table["headers"], row)) for row in table["data"]]
    negatives = [row for row in rows if row["kind"] == "negative"]
    margins = [float(re.search(r"margin ([+-]\d\.\d{4})", row["toyworld"]).group(1)) for row in negatives]
    assert abs(max(margins) - sent.margin) <= 1e-4
    assert any("FAIL" in row["toyworld"] for row in negatives) == (sent.margin >= 0)
    if benchmark == "toy-hard-positives":
        assert [row["kind"] for row in rows[1:]] == ["negative", "positive"]
