"""The Benchmarks and Sweep tabs as a person sees them, in Debian's chromium.

What is asserted is what is drawn: leaderboard rows read off the rendered table,
bars with a height, an image the browser decoded, captions with their scores,
the Probe tab's caption after "Send to Probe", and one labelled point per alpha
on the sweep's curve.

`SAVE_SCREENSHOT=1` also writes docs/benchmarks.png, docs/benchmarks-failures.png and docs/sweep.png.
"""
import os
import re
from pathlib import Path

import pytest

from backend import jobs
from backend.benchmarks.job import EvaluateConfig, evaluate_models
from backend.benchmarks.results import items, results
from backend.core.auth import Actor
from backend.core.store import Store
from tests.support.appserver import running_app, wait_for, workspace_settings
from tests.support.browser import VIEWPORT, chromium, read_table
from tests.test_benchmarks_jobs import TOY_AXES
from tests.test_benchmarks_tab import random_toy_checkpoint
from tests.test_sweep_tab import perturbed_toy_checkpoint

pytestmark = [pytest.mark.browser, pytest.mark.system]
ADMIN = Actor("tester", "admin", "password")
DOCS = Path(__file__).resolve().parents[1] / "docs"
BENCHMARK = "toy-sugarcrepe"


def screenshot(page, tmp_path: Path, name: str) -> None:
    target = DOCS / name if os.environ.get("SAVE_SCREENSHOT") == "1" else tmp_path / name
    page.screenshot(path=str(target), full_page=True)


def drawn_bars(page) -> list[float]:
    """Heights of the bar marks the chart drew (a bar of height 0 is not a bar a person sees)."""
    bars = page.locator("#bench-chart path[aria-roledescription='bar']")
    return [box["height"] for i in range(bars.count()) if (box := bars.nth(i).bounding_box()) and box["height"] > 1]


def choose(page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=re.compile(re.escape(option))).first.click()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Two models evaluated into the store, a sweep under way, the app over that store (open-local: admin)."""
    workspace = tmp_path_factory.mktemp("benchmarks-browser")
    settings = workspace_settings(workspace)
    store = Store(settings.db)
    models = ["toyworld", random_toy_checkpoint(workspace / "random-toy")]
    evaluate_models(EvaluateConfig(models=models, benchmarks=[BENCHMARK], limit=12, workers=0), store)
    sweep = jobs.submit(ADMIN, "sweep", {"pretrained": "toyworld", "alphas": [0.0, 0.5, 1.0], "limit": 6, **TOY_AXES,
                                         "finetuned": perturbed_toy_checkpoint(workspace / "perturbed-toy")},
                        store=store, settings=settings)
    with running_app(workspace, ["toyworld"], workspace) as url:
        yield {"url": url, "store": store, "sweep": sweep}


def test_leaderboard_chart_failures_and_send_to_probe(lab, tmp_path):
    store = lab["store"]
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(lab["url"])
        page.get_by_role("tab", name="Benchmarks").click()
        rows = wait_for(lambda: read_table(page, "bench-leaderboard")[0], 20, "the leaderboard rows")
        shown = {row["model"]["text"]: row for row in rows}
        toy = next(r for r in results(store) if r["model"] == "toyworld")
        toy_row = shown["toyworld (gelu, fp32) [first 12 items]"]
        assert toy_row[f"{BENCHMARK}/overall"]["text"] == f"{100 * toy['metrics']['overall']:.1f}"
        assert len([m for m in shown if m.startswith("local-dir:")]) == 1
        assert shown["Chance"]["source"]["text"] == "docs/REFERENCE.md, Metrics"
        bars = wait_for(lambda: drawn_bars(page), 20, "the chart's bars")
        assert len(bars) == 2 and bars[0] != bars[1], "one bar per model, of different heights"
        screenshot(page, tmp_path, "benchmarks.png")

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
        screenshot(page, tmp_path, "benchmarks-failures.png")

        page.locator("#send-to-probe").click()
        caption = page.get_by_label("Caption", exact=True)
        wait_for(lambda: caption.is_visible() and caption.input_value() == first["texts"][0], 20,
                 "the Probe tab with the item's true caption")
        probe_image = page.locator("[data-testid=image] img").first
        wait_for(lambda: probe_image.evaluate("im => im.complete && im.naturalWidth > 0"), 20,
                 "the item's image in the Probe tab")


def test_the_sweep_curve_draws_a_labelled_point_per_alpha(lab, tmp_path):
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(lab["url"])
        page.get_by_role("tab", name="Sweep").click()
        page.get_by_label("Sweep", exact=True).click()
        page.get_by_role("option", name=re.compile(f"#{lab['sweep']} ")).click()
        points = page.locator("#sweep-plot circle.sweep-point")
        wait_for(lambda: points.count() == 3 and page.locator("#sweep-plot circle.sweep-recommended").count()
                 and "sweep: done" in page.locator("#sweep-status").inner_text(), 90,
                 "three points, the recommended ring and the sweep done")
        boxes = [points.nth(i).bounding_box() for i in range(3)]
        assert all(box and box["width"] > 4 for box in boxes) and len({(b["x"], b["y"]) for b in boxes}) == 3
        labels = page.locator("#sweep-plot text.sweep-label")
        assert [t.strip() for t in labels.all_text_contents()] == ["α=0", "α=0.5", "α=1"]
        assert all((box := labels.nth(i).bounding_box()) and box["width"] > 10 for i in range(3)), "labels drawn"
        recommended = lab["store"].get_job(lab["sweep"])["result"]["recommended"]
        assert f"Recommended alpha: {recommended['alpha']:g}" in page.locator("#sweep-recommended").inner_text()
        screenshot(page, tmp_path, "sweep.png")
