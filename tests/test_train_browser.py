"""The Train tab as a person sees it during a real (tiny) training run, in Debian's chromium.

What once passed every other test while the page was useless: curves that drew axes but
no line, a run list that went stale when a run ended and was empty after a reload, and
an empty log. Each is asserted here on the rendered page.
"""
import re

import pytest

from backend import jobs
from backend.core.auth import Actor
from backend.core.store import Store
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import new_page, read_table, screenshot
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.system]
ADMIN = Actor("tester", "admin", "password")
# More steps than the test lasts (one-thread torch runs a toy step fast): the run must still be running when the
# page is read; the test cancels it.
RUN = {"name": "browser-run", "base_model": "toyworld", "data": "toyworld-finetune", "loss": "negclip", "steps": 3000,
       "batch_size": 16, "dataset_size": 128, "lr": 1e-3, "warmup_steps": 5, "eval_every": 200,
       "eval_benchmarks": ["toy-sugarcrepe"]}


def stroked_lines(page, elem_id: str) -> list[str]:
    """The `d` of every line mark the plot drew with a visible stroke and at least two points."""
    paths = page.locator(f"#{elem_id} path[aria-roledescription='line mark']")
    drawn = []
    for index in range(paths.count()):
        path = paths.nth(index)
        stroke, width, d = (path.get_attribute(a) for a in ("stroke", "stroke-width", "d"))
        if stroke not in (None, "none", "transparent") and float(width or 1) > 0 and d and d.count("L") >= 1:
            drawn.append(d)
    return drawn


def test_a_running_job_draws_its_curves_logs_progress_and_the_run_list_stays_current(tmp_path, browser):
    with running_app(tmp_path, ["toyworld"], tmp_path) as url, new_page(browser) as page:
        settings = workspace_settings(tmp_path)
        store = Store(settings.db)
        page.goto(url)
        page.get_by_role("tab", name="Train").click()
        job_id = jobs.submit(ADMIN, "train", RUN, store=store, settings=settings)

        page.get_by_label("Run", exact=True).click()
        page.get_by_role("option", name=re.compile(f"#{job_id} browser-run")).click()
        wait_for(lambda: store.get_job(job_id)["status"] == "running" and store.metrics(job_id, "train"),
                   120, "the run to log its first metrics")
        # a loaded machine may draw the loss before its parts have two points each: wait for both lines
        lines = wait_for(lambda: (drawn := stroked_lines(page, "train-loss-plot")) and len(drawn) >= 2 and drawn,
                         30, "the loss and at least one named part drawn as lines")
        assert store.get_job(job_id)["status"] == "running"  # seen during the run, not after it
        assert len(lines) >= 2, "the loss and at least one named part are drawn"
        plot_box = page.locator("#train-loss-plot").bounding_box()
        legend = page.locator("#train-loss-plot .role-legend-label text", has_text="loss").first
        legend_box = legend.bounding_box()
        assert legend_box and legend_box["y"] + legend_box["height"] <= plot_box["y"] + plot_box["height"], \
            "the legend naming the lines is inside the plot, not cut off"
        log = wait_for(lambda: re.search(rf"step \d+/{RUN['steps']} loss [\d.]+ lr \S+ [\d.]+ samples/s, ETA \S+",
                                           page.locator("#train-log textarea").input_value()), 30,
                         "a progress line in the log")
        screenshot(page, "train-running.png")

        page.reload()
        page.get_by_role("tab", name="Train").click()
        rows = wait_for(lambda: read_table(page, "train-runs")[0], 15, "the run list after a reload")
        assert rows[0]["name"]["text"] == "browser-run" and rows[0]["status"]["text"] == "running"

        jobs.cancel(ADMIN, job_id, store=store, settings=settings, grace=5)
        wait_for(lambda: read_table(page, "train-runs")[0][0]["status"]["text"] == "cancelled", 15,
                   "the run list to show the run ended, without a click")
        assert log.group(0)
