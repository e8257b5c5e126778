"""The Train tab after a real (tiny) run was stopped and resumed, as an admin sees it in Debian's chromium: the
run's numbers beside its base model's (evaluated at step 0) with the difference, curves from step 0 (the history
before the resume carried over), and a log box that shows its newest lines. `SAVE_SCREENSHOT=1` also writes
docs/train-resume.png."""
import re

import pytest

from backend import jobs
from backend.core.auth import Actor
from backend.core.store import Store
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import choose, new_page, read_table, screenshot
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.system]
ADMIN = Actor("tester", "admin", "password")
# The shipped model at a high rate: its numbers move within a few steps. Checkpoints at 4, 8 and 12.
RUN = {"name": "resumed-run", "base_model": "toyworld", "data": "toyworld-finetune", "loss": "negclip", "steps": 12,
       "batch_size": 8, "dataset_size": 32, "lr": 4e-3, "warmup_steps": 1, "eval_every": 4,
       "eval_benchmarks": ["toy-sugarcrepe"], "augment": "none", "workers": 0}
X_TICKS = """plot => {
  const axis = [...plot.querySelectorAll('.role-axis')].find(a => /^X-axis/.test(a.getAttribute('aria-label') || ''));
  return axis ? [...axis.querySelectorAll('.role-axis-label text')].map(t => t.textContent) : [];
}"""
SCROLLED_TO_END = "t => t.scrollHeight > t.clientHeight && t.scrollTop + t.clientHeight >= t.scrollHeight - 2"


def test_a_resumed_run_shows_its_base_model_its_whole_history_and_its_newest_log_lines(tmp_path, browser):
    with running_app(tmp_path, ["toyworld"], tmp_path) as url, new_page(browser) as page:
        settings = workspace_settings(tmp_path)
        store = Store(settings.db)
        first = jobs.submit(ADMIN, "train", RUN, store=store, settings=settings)
        last = settings.runs_dir / RUN["name"] / "checkpoints" / "last"
        wait_for(last.exists, 600, "the first checkpoint")
        jobs.cancel(ADMIN, first, store=store, settings=settings, grace=5)

        page.goto(url)
        page.get_by_role("tab", name="Train").click()
        choose(page, "Run", f"#{first} resumed-run")
        page.get_by_role("button", name="Resume run").click()
        wait_for(lambda: store.resumed_by(first), 30, "the resumed run")
        resumed = store.resumed_by(first)["id"]
        job = wait_for(lambda: (row := store.get_job(resumed))["status"] in jobs.FINAL and row, 600, "the run to end")
        assert job["status"] == "done", job.get("error")
        base = store.latest_metrics(resumed, "baseline")["toy-sugarcrepe/overall"]
        final = job["result"]["final_metrics"]["toy-sugarcrepe/overall"]
        assert job["result"]["baseline_metrics"]["toy-sugarcrepe/overall"] == base

        status = page.locator("#train-status")
        wait_for(lambda: f"#{resumed} resumed-run" in status.inner_text() and "done" in status.inner_text(), 30,
                 "the resumed run's status, done")
        expected = f"toy-sugarcrepe/overall {100 * base:.1f} → {100 * final:.1f} ({100 * final - 100 * base:+.1f})"
        assert "Against the base model (evaluated at step 0)" in status.inner_text()
        assert expected in status.inner_text()
        rows = {row["metric"]["text"]: row for row in read_table(page, "train-evals")[0]}
        overall = rows["toy-sugarcrepe/overall"]
        assert float(overall["base model (%)"]["text"]) == round(100 * base, 1)
        assert float(overall["value (%)"]["text"]) == round(100 * final, 1)
        assert float(overall["change (points)"]["text"]) == round(100 * (final - base), 1)
        assert overall["step"]["text"] == "12"

        # the loss curve starts at the run's first step, not at the resume step
        resumed_at = int(re.search(r"resuming from step (\d+)", open(job["log_path"]).read()).group(1))
        steps = sorted({row["step"] for row in store.metrics(resumed, "train")})
        assert resumed_at >= 4 and steps[0] == 1
        ticks = page.locator("#train-loss-plot").evaluate(X_TICKS)
        assert ticks and float(ticks[0]) <= 1, f"the x axis starts at the first step: {ticks}"

        log = page.locator("#train-log textarea")
        newest = open(job["log_path"]).read().strip().splitlines()[-1]
        wait_for(lambda: log.input_value().rstrip().endswith(newest.split("\r")[-1]), 15, "the newest log line")
        wait_for(lambda: log.evaluate(SCROLLED_TO_END), 15, "the log box scrolled to its end")
        screenshot(page, "train-resume.png")
