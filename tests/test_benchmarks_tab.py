"""The Benchmarks tab through a real server on 127.0.0.1 (gradio_client) and a real `evaluate` job, and as an
anonymous visitor sees it in Debian's chromium.

Two real models: the shipped toy model and a randomly initialised one of the same
architecture saved as a checkpoint (the random model of the Train tab's
`toyworld:random`, which `load_model` itself does not offer). An admin signs in
with the password policy; an anonymous caller is refused.

In the browser what is asserted is what is drawn: leaderboard rows read off the rendered table, bars with a
height, an image the browser decoded, captions with their scores, and the Probe tab's caption after
"Send to Probe". What the tab looks like at 1400 px (and its screenshots) is tests/test_benchmarks_views.py's.
"""
import csv
import io
import json
import re
from pathlib import Path

import pytest

from backend.benchmarks import evaluate_many
from backend.benchmarks.results import items, model_label, results
from backend.benchmarks.stats import mcnemar_exact
from backend.core.store import Store
from backend.models.loading import load_model
from tests.support.admin import CREDENTIALS, sign_in
from tests.support.appserver import running_app
from tests.support.browser import choose, new_page, read_table
from tests.support.clients import local_client
from tests.support.tiny import random_toy_checkpoint
from tests.support.waiting import wait_for
from ui.tabs.benchmarks_chart import column_title

LIMIT = 12
BENCHMARK = "toy-sugarcrepe"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """A server whose admin evaluated both models on toy-sugarcrepe (LIMIT items per type) through the tab."""
    workspace = tmp_path_factory.mktemp("benchmarks-tab")
    random_spec = random_toy_checkpoint(workspace / "random-toy")
    store = Store(workspace / "lab.db")
    with running_app(workspace, ["toyworld"], workspace, **CREDENTIALS) as url:
        admin = sign_in(url)
        status = admin.predict(["toyworld", random_spec], [BENCHMARK], LIMIT, api_name="/launch_evaluate")
        job_id = int(re.search(r"#(\d+) evaluate", status).group(1))
        job = wait_for(lambda: (row := store.get_job(job_id))["status"] in ("done", "failed") and row, 120,
                       "the evaluate job to end")
        assert job["status"] == "done", job.get("error")
        yield {"url": url, "admin": admin, "store": store, "workspace": workspace, "job": job_id,
               "models": ["toyworld", random_spec]}


def table_rows(table: dict) -> dict[str, dict]:
    return {row[0]: dict(zip(table["headers"], row)) for row in table["data"]}


@pytest.mark.system
def test_the_job_reports_done_and_the_leaderboard_shows_both_models_as_stored(evaluated):
    admin, store = evaluated["admin"], evaluated["store"]
    assert f"**#{evaluated['job']} evaluate: done**, 100%" in admin.predict(evaluated["job"],
                                                                            api_name="/evaluate_status")
    table, chart = admin.predict([], "every", api_name="/leaderboard")
    rows = table_rows(table)
    stored = results(store, [BENCHMARK])
    assert {row["model"] for row in stored} == set(evaluated["models"])
    # The job's own process (the local target) stores what an in-process run of the same model computes.
    in_process = evaluate_many([BENCHMARK], load_model("toyworld", device="cpu"), limit=LIMIT)
    toy = next(result for result in stored if result["model"] == "toyworld")
    assert toy["activation"] == "gelu" and toy["item_limit"] == LIMIT and toy["version"]
    for metric, value in toy["metrics"].items():
        assert value == pytest.approx(in_process[f"{BENCHMARK}/{metric}"], abs=1e-9), metric
    for result in stored:
        row = rows[f"{model_label(result)} [first {LIMIT} items]"]
        assert row["source"] == "evaluated here"
        for metric, value in result["metrics"].items():
            low, high = result["intervals"][metric]
            assert row[column_title(f"{BENCHMARK}/{metric}")] == (f"{round(100 * value, 1)} "
                                                                   f"[{100 * low:.1f}, {100 * high:.1f}]"), metric
    assert table["headers"][2] == column_title(f"{BENCHMARK}/overall"), "the benchmark's summary comes first"
    chance = rows["Chance"]
    assert chance["source"] == "docs/REFERENCE.md, Metrics" and chance[column_title(f"{BENCHMARK}/overall")] == 50.0
    bars = {bar["model"]: bar["value (%)"] for bar in next(iter(json.loads(chart["plot"])["datasets"].values()))}
    toy = next(r for r in stored if r["model"] == "toyworld")
    assert len(bars) == 2 and bars[f"{model_label(toy)} [first {LIMIT} items]"] == round(
        100 * toy["metrics"]["overall"], 1)


@pytest.mark.system
def test_the_csv_download_has_every_row(evaluated):
    path = evaluated["admin"].predict([], api_name="/leaderboard_csv")
    rows = {row["model"]: row for row in csv.DictReader(io.StringIO(Path(path).read_text()))}
    for result in results(evaluated["store"], [BENCHMARK]):
        label = f"{model_label(result)} [first {LIMIT} items]"
        assert rows[label][f"{BENCHMARK}/overall"] == f"{100 * result['metrics']['overall']:.2f}"
    assert rows["Chance"]["source"] == "docs/REFERENCE.md, Metrics"


@pytest.mark.system
def test_the_column_filter_keeps_only_the_chosen_benchmarks(evaluated):
    table, _chart = evaluated["admin"].predict(["toy-bivlc"], api_name="/leaderboard")
    assert table["headers"] == ["model", "source", "date"] and table["data"] == []


@pytest.mark.system
def test_an_anonymous_visitor_reads_the_leaderboard_but_cannot_launch(evaluated):
    anonymous = local_client(evaluated["url"])
    table, _chart = anonymous.predict([], api_name="/leaderboard")
    assert len(table["data"]) == 3  # two models and chance
    before = len(evaluated["store"].list_jobs())
    with pytest.raises(Exception, match="Launching an evaluation needs an admin; you are anonymous"):
        anonymous.predict(["toyworld"], [BENCHMARK], 5, api_name="/launch_evaluate")
    assert len(evaluated["store"].list_jobs()) == before


@pytest.mark.parametrize("models, benchmarks, message", [
    ([], [BENCHMARK], "pick at least one model"),
    (["toyworld"], ["no-such-benchmark"], "unknown benchmark 'no-such-benchmark'"),
    (["local-dir:/etc"], [BENCHMARK], "is outside"),
])
@pytest.mark.system
def test_a_bad_launch_is_a_message_and_starts_nothing(evaluated, models, benchmarks, message):
    before = len(evaluated["store"].list_jobs())
    with pytest.raises(Exception, match=message):
        evaluated["admin"].predict(models, benchmarks, 5, api_name="/launch_evaluate")
    assert len(evaluated["store"].list_jobs()) == before


@pytest.mark.system
def test_failures_of_a_subtype_show_the_items_the_model_got_wrong(evaluated):
    admin, store = evaluated["admin"], evaluated["store"]
    toy = next(r for r in results(store, [BENCHMARK]) if r["model"] == "toyworld")
    subtypes, other, *_cleared = admin.predict(toy["id"], api_name="/failure_subtypes")
    counts = {value: label for label, value in subtypes["choices"]}
    wrong_swaps = items(store, toy["id"], True, "swap_att", 100)
    assert counts["swap_att"] == f"swap_att ({len(wrong_swaps)} wrong of {LIMIT})"
    assert len(other["choices"]) == 1, "the other model on the same items is offered for comparison"
    table = admin.predict(toy["id"], "swap_att", 1, api_name="/failures")
    assert [row[0] for row in table["data"]] == [item["position"] for item in wrong_swaps]
    first = wrong_swaps[0]
    assert table["data"][0][2] == first["texts"][0] and table["data"][0][4] >= 0  # true caption; rival not beaten
    gallery, captions = admin.predict(toy["id"], first["position"], api_name="/failure_item")
    assert len(gallery) == 1 and Path(gallery[0]["image"]).stat().st_size > 0
    assert first["texts"][0] in captions and first["texts"][1] in captions and "wrong" in captions
    assert f"{first['scores'][0][0]:.4f}" in captions and f"{first['scores'][1][0]:.4f}" in captions


@pytest.mark.system
def test_disagreements_list_the_items_one_model_gets_right_and_the_other_wrong(evaluated):
    admin, store = evaluated["admin"], evaluated["store"]
    toy, rand = (next(r for r in results(store, [BENCHMARK]) if r["model"] == spec) for spec in evaluated["models"])
    table = admin.predict(toy["id"], rand["id"], api_name="/disagreements")
    right = {i["position"] for i in items(store, toy["id"], False, None, 1000) if i["correct"]}
    wrong_b = {i["position"] for i in items(store, rand["id"], True, None, 1000)}
    wrong_a = {i["position"] for i in items(store, toy["id"], True, None, 1000)}
    expected = sorted((right & wrong_b) | (wrong_a - wrong_b))[:50]
    assert [row[0] for row in table["data"]] == expected and expected
    assert all(row[3] == (row[0] in right) for row in table["data"])
    only_a, only_b = len(right & wrong_b), len(wrong_a - wrong_b)
    line = admin.predict(toy["id"], rand["id"], api_name="/paired_test")
    assert f"discordant: {only_a} only A right, {only_b} only B right" in line
    assert f"exact McNemar p = {mcnemar_exact(only_a, only_b):.4g}" in line


@pytest.mark.system
def test_send_to_probe_returns_the_image_and_the_true_caption(evaluated):
    admin, store = evaluated["admin"], evaluated["store"]
    toy = next(r for r in results(store, [BENCHMARK]) if r["model"] == "toyworld")
    item = items(store, toy["id"], True, None, 1)[0]
    image, caption, extra, models, *_ = admin.predict(toy["id"], item["position"], api_name="/send_to_probe")
    assert caption == item["texts"][0] and Path(image).stat().st_size > 0
    assert extra == f"- {item['texts'][1]}" and models == ["toyworld"]


@pytest.mark.system
def test_the_leaderboard_survives_a_restart_on_the_same_store(evaluated):
    workspace = evaluated["workspace"]
    with running_app(workspace, ["toyworld"], workspace, **CREDENTIALS) as url:
        table, _chart = local_client(url).predict([], api_name="/leaderboard")
    assert len([row for row in table["data"] if row[1] == "evaluated here"]) == 2


def drawn_bars(page) -> list[float]:
    """Heights of the bar marks the chart drew (a bar of height 0 is not a bar a person sees)."""
    bars = page.locator("#bench-chart path[aria-roledescription='bar']")
    return [box["height"] for i in range(bars.count()) if (box := bars.nth(i).bounding_box()) and box["height"] > 1]


@pytest.mark.system
@pytest.mark.browser
def test_the_page_draws_the_leaderboard_chart_and_failures_and_sends_an_item_to_the_probe(evaluated, browser):
    store = evaluated["store"]
    with new_page(browser) as page:
        page.goto(evaluated["url"])
        page.get_by_role("tab", name="Benchmarks").click()
        toy_label = f"toyworld (gelu, fp32) [first {LIMIT} items]"

        def drawn() -> dict | None:  # the table is drawn in steps: wait for the toy row with its benchmark column
            shown = {row["model"]["text"]: row for row in read_table(page, "bench-leaderboard")[0]}
            return shown if column_title(f"{BENCHMARK}/overall") in shown.get(toy_label, {}) else None

        shown = wait_for(drawn, 20, "the leaderboard's toy row and its benchmark column")
        toy = next(r for r in results(store) if r["model"] == "toyworld")
        toy_row = shown[toy_label]
        low, high = toy["intervals"]["overall"]
        assert toy_row[column_title(f"{BENCHMARK}/overall")]["text"] == (f"{100 * toy['metrics']['overall']:.1f} "
                                                           f"[{100 * low:.1f}, {100 * high:.1f}]")
        assert len([m for m in shown if m.startswith("local-dir:")]) == 1
        assert shown["Chance"]["source"]["text"] == "docs/REFERENCE.md, Metrics"
        bars = wait_for(lambda: drawn_bars(page), 20, "the chart's bars")
        assert len(bars) == 2 and bars[0] != bars[1], "one bar per model, of different heights"

        page.locator("#failures").get_by_role("button", name="↻", exact=True).click()  # results since the start
        choose(page, "Result (model × benchmark)", f"#{toy['id']} toyworld")
        wrong = wait_for(lambda: read_table(page, "failure-table")[0], 20, "the failures table")
        first = items(store, toy["id"], True, None, 1)[0]
        assert int(wrong[0]["#"]["text"]) == first["position"]
        page.locator("#failure-table [role=gridcell]", has_text=first["texts"][0]).first.click()
        captions = page.locator("#failure-captions tbody tr")
        wait_for(lambda: captions.count() == 2 and f"Item #{first['position']} " in
                 page.locator("#failure-captions").inner_text(), 20, "the clicked item's two captions")
        image = page.locator("#failure-images img").first
        wait_for(lambda: image.evaluate("im => im.complete && im.naturalWidth > 0"), 20, "a decoded item image")
        assert first["texts"][0] in captions.nth(0).inner_text() and "true" in captions.nth(0).inner_text()
        assert f"{first['scores'][1][0]:.4f}" in captions.nth(1).inner_text()

        page.locator("#send-to-probe").click()
        caption = page.get_by_label("Caption", exact=True)
        wait_for(lambda: caption.is_visible() and caption.input_value() == first["texts"][0], 20,
                 "the Probe tab with the item's true caption")
        probe_image = page.locator("[data-testid=image] img").first
        wait_for(lambda: probe_image.evaluate("im => im.complete && im.naturalWidth > 0"), 20,
                 "the item's image in the Probe tab")
