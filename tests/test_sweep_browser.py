"""The Sweep tab as an admin uses it right after training, in Debian's chromium against the real app on 127.0.0.1:
a run that just finished joins the "Finetuned model" list without a restart or a reload, the form's default axes
draw a first trade-off plot with spread on both axes, and the results download as CSV, PNG and SVG.
`SAVE_SCREENSHOT=1` also writes docs/sweep.png."""
import csv

import pytest
from PIL import Image

from backend import jobs
from backend.core.auth import Actor
from backend.core.store import Store
from backend.patching.figure import HEIGHT, PNG_SCALE, WIDTH
from tests.support.admin import CREDENTIALS
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import choose, new_page, offered, screenshot, sign_in
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.system]
ADMIN = Actor("admin", "admin", "password")
# A short real NegCLIP finetune of the shipped model: enough steps at a high rate to move both axes.
RUN = {"name": "fresh-negclip", "base_model": "toyworld", "data": "toyworld-finetune", "loss": "negclip", "steps": 12,
       "batch_size": 16, "dataset_size": 64, "lr": 4e-3, "warmup_steps": 2, "eval_every": 12, "eval_benchmarks": [],
       "augment": "none", "workers": 0}


def test_a_finished_run_joins_the_sweep_and_the_first_plot_spreads_on_both_axes(tmp_path, browser):
    with running_app(tmp_path, ["toyworld"], tmp_path, **CREDENTIALS) as url, new_page(browser) as page:
        settings = workspace_settings(tmp_path, **CREDENTIALS)
        store = Store(settings.db)
        page.goto(url)
        sign_in(page, CREDENTIALS["COMPLAB_ADMIN_USER"], CREDENTIALS["COMPLAB_ADMIN_PASSWORD"])
        page.get_by_role("tab", name="Sweep").click()
        assert not any("fresh-negclip" in name for name in offered(page, "Finetuned model (alpha = 1)"))

        run = jobs.submit(ADMIN, "train", RUN, store=store, settings=settings)
        job = wait_for(lambda: (row := store.get_job(run))["status"] in jobs.FINAL and row, 600, "the run to end")
        assert job["status"] == "done", job.get("error")
        wait_for(lambda: "fresh-negclip (best)" in offered(page, "Finetuned model (alpha = 1)"), 30,
                 "the finished run in the open tab's list, without a reload")

        choose(page, "Finetuned model (alpha = 1)", "fresh-negclip (best)")
        y_axis, x_axis = (page.get_by_label(label).input_value()  # (not exact: the name includes the help line)
                          for label in ("Compositional metric (y)", "Object-centric metric (x)"))
        assert (y_axis, x_axis) == ("toy-sugarcrepe/overall", "toy-pretrain-retrieval/t2i_R@1")  # the defaults
        page.get_by_label("Alphas").fill("0, 0.5, 1")
        page.get_by_label("Items per type (0: all)", exact=True).fill("20")
        page.get_by_role("button", name="Launch sweep").click()
        wait_for(lambda: "sweep: done" in page.locator("#sweep-status").inner_text(), 600, "the sweep to end")
        points = page.locator("#sweep-plot circle.sweep-point")
        wait_for(lambda: points.count() == 3, 15, "three points")
        boxes = [points.nth(i).bounding_box() for i in range(3)]
        xs, ys = [b["x"] for b in boxes], [b["y"] for b in boxes]
        assert max(xs) - min(xs) > 40 and max(ys) - min(ys) > 40, f"spread on both axes: x {xs}, y {ys}"
        assert "object-centric: toy-pretrain-retrieval/t2i_R@1 (%)" in page.locator("#sweep-plot").inner_text()

        page.get_by_role("button", name="Download results (CSV, PNG, SVG)").click()
        links = page.locator("#sweep-files a")
        wait_for(lambda: links.count() == 3, 30, "three files to download")
        sweep_id = store.list_jobs("sweep")[0]["id"]
        files = {}
        for index in range(3):
            with page.expect_download() as download:
                links.nth(index).click()
            files[download.value.suggested_filename] = download.value.path()
        assert sorted(files) == [f"sweep-{sweep_id}.csv", f"sweep-{sweep_id}.png", f"sweep-{sweep_id}.svg"]
        table = list(csv.reader(open(files[f"sweep-{sweep_id}.csv"])))
        assert table[0][:4] == ["alpha", "recommended", f"{x_axis} (%)", f"{y_axis} (%)"]
        shown = page.locator("#sweep-points").inner_text()
        for row in table[1:]:
            assert f"{float(row[2]):.2f}".rstrip("0").rstrip(".") in shown  # the table shows what the file holds
        assert Image.open(files[f"sweep-{sweep_id}.png"]).size == (WIDTH * PNG_SCALE, HEIGHT * PNG_SCALE)
        assert open(files[f"sweep-{sweep_id}.svg"]).read().count('class="sweep-point"') == 3
        screenshot(page, "sweep.png")

        page.reload()
        page.get_by_role("tab", name="Sweep").click()
        wait_for(lambda: "fresh-negclip (best)" in offered(page, "Finetuned model (alpha = 1)"), 30,
                 "the run still listed after a reload")
        assert "fresh-negclip (best)" in offered(page, "Pretrained model (alpha = 0)")
