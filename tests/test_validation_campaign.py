"""A validation campaign's whole journey (issue 21, item 4), as its users take it.

An admin creates a campaign of kind ``validate`` from a SugarCrepe-format file with the command line. In the
annotation app, a Prolific participant opens the study link in chromium and answers every task with the keyboard
(what they see is asserted: the image, the caption, the second text, the three buttons and their keys); three more
participants answer through the same app with gradio_client: two honest ones and a careless one who calls every
text "not fluent", and whom the gold items flag. The admin exports the campaign; `evaluate` with the built-in tiny
model reads ``campaign:<name>`` as exactly the negatives the crowd validated, the leaderboard lists it, and the
training manifest the export wrote is read by the trainer's loader with those negatives.

`SAVE_SCREENSHOT=1` also writes the task page to docs/annotate-validate.png.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.annotate import campaigns, db, report
from backend.core.store import Store
from backend.toyworld.campaign import toy_items
from tests.support.appserver import annotate_server, workspace_settings
from tests.support.browser import new_page, screenshot
from tests.support.clients import local_client

pytestmark = [pytest.mark.browser, pytest.mark.system]

ROOT = Path(__file__).resolve().parents[1]
NAME = "negatives-pilot"
PID = "7c8d9e0f1a2b3c4d5e6f7a8b"
# What each honest participant answers for item k of the file (the careless one answers "disfluent" to all):
# items 0, 1 and 5 are validated (3 of 4 say false), item 2 is split, 3 is still true, 4 is not fluent.
PLAN = {"browser": ["false", "false", "false", "true", "disfluent", "false"],
        "ada": ["false", "false", "false", "true", "disfluent", "false"],
        "bo": ["false", "false", "true", "true", "disfluent", "false"]}
VALIDATED = (0, 1, 5)
KEYS = {"false": "y", "true": "n", "disfluent": "f"}  # what the browser participant presses


def cli(settings_env: dict, *args: str) -> str:
    """`python -m backend ...` as the admin runs it on the lab's machine; its stdout."""
    done = subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, env={**os.environ, **settings_env},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A workspace, its environment for the command line, and a SugarCrepe-format file of six toy items whose
    images sit in a folder beside it (as SugarCrepe's files name COCO images)."""
    workspace = tmp_path_factory.mktemp("validation-campaign")
    env = {"COMPLAB_WORKSPACE": str(workspace), "COMPLAB_DB": str(workspace / "lab.db"),
           "COMPLAB_DOWNLOADS_DIR": str(workspace), "COMPLAB_RUNS_DIR": str(workspace / "runs"),
           "COMPLAB_ALLOWED_ROOTS": ""}
    settings = workspace_settings(workspace)
    Store(settings.db)
    images = workspace / "images"
    items = toy_items(6, 11, images)
    rows = {str(100 + k): {"filename": item.image, "caption": item.caption, "negative_caption": item.negative_caption}
            for k, item in enumerate(items)}
    source = workspace / "replace_att.json"
    source.write_text(json.dumps(rows))
    return settings, env, source, images, items


def answer_for(person: str, caption: str, second: str, items) -> str:
    """What `person` answers to a task: a gold item's known answer (the caption itself is still true; the world's
    negative is false), else their plan for the file's item."""
    if person == "careless":
        return "disfluent"
    negatives = [campaigns.normalise_caption(item.negative_caption) for item in items]
    if second not in negatives:
        return "true" if second == caption else "false"
    return PLAN[person][negatives.index(second)]


def test_a_validation_campaign_from_a_sugarcrepe_file_to_a_benchmark(lab, browser):
    settings, env, source, images, items = lab
    created = json.loads(cli(env, "campaign", "create", NAME, "--kind", "validate", "--source", "file", "--file",
                             str(source), "--images", str(images), "--overlap", "4", "--resolution", "majority",
                             "--gold-rate", "0.25", "--tasks-per-session", "8", "--config",
                             '{"min_gold": 1, "gold_items": 4}', "--json"))
    assert (created["items"], created["gold_items"]) == (6, 4)
    stages = db.rows(settings.db, "select stage, gold from items")
    assert {row["stage"] for row in stages} == {"ready"}, "no image to generate: every item is ready at once"

    stored = {(row["caption"], row["negative_caption"]) for row in db.rows(settings.db, "select * from items")}
    with annotate_server(settings) as url:
        with new_page(browser) as page:  # the Prolific participant, in chromium, with the keyboard only
            page.goto(f"{url}study?campaign={NAME}&PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")
            page.click("#study-agree")
            for number in range(1, 9):
                page.wait_for_function("([text]) => document.querySelector('#annotate-counter')?.innerText.trim() "
                                       "=== text", arg=[f"{number} / 8"])
                page.wait_for_function("() => { const img = document.querySelector('#annotate-validate-image img');"
                                       " return img && img.complete && img.naturalWidth > 0 && "
                                       "img.offsetParent !== null; }")
                shown = page.inner_text("#annotate-caption")
                assert "Is the second text false of the image?" in shown
                caption = shown.split("Caption: ", 1)[1].split("\n", 1)[0].strip()
                second = shown.split("Second text: ", 1)[1].strip()
                assert (caption, second) in stored, "the task shows an item's caption and its negative"
                labels = [page.inner_text(f"#answer-{key}").strip() for key in ("false", "true", "disfluent")]
                assert labels == ["Yes, it is false", "No, it is still true", "It is not fluent"]
                assert all(page.locator(f"#answer-{key}").is_visible() for key in ("false", "true", "disfluent"))
                assert page.locator("#annotate-select").is_hidden() and page.locator("#annotate-pair").is_hidden()
                assert "Y or 1 yes, it is false; N or 2 no, it is still true; F or 3 not fluent" in \
                    page.inner_text("#annotate-keys")
                if number == 1:
                    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
                    screenshot(page, "annotate-validate.png")
                page.keyboard.press(KEYS[answer_for("browser", caption, second, items)])
            page.locator("#annotate-done").get_by_text("Thank you!").wait_for()
            assert "completion code" in page.inner_text("#annotate-done")

        for person in ("ada", "bo", "careless"):  # through the same app's API, as the crowd tests do
            client = local_client(url, download_files=False)  # images stay at the task-image route
            outputs = client.predict(NAME, person, "", api_name="/start")
            for _ in range(8):
                token = [value for value in outputs if isinstance(value, str) and value.isdigit()][-1]
                shown = next(value for value in outputs if isinstance(value, str) and "Second text: " in value)
                caption = shown.split("Caption: ", 1)[1].split("\n", 1)[0].strip()
                second = shown.split("### Second text: ", 1)[1].strip()
                outputs = client.predict(token, answer_for(person, caption, second, items), api_name="/answer")
            assert any(isinstance(value, dict) and "Thank you!" in str(value.get("value")) for value in outputs)
            client.close()

    state = report.status(settings.db, NAME)
    people = {row["annotator"]: row for row in state["annotators"]}
    assert people["careless"]["flagged"] and "gold" in people["careless"]["flags"]
    assert people["careless"]["gold_accuracy"] == 0.0 and people["careless"]["gold"] == 2
    assert not any(people[name]["flagged"] for name in (PID, "ada", "bo"))
    assert state["stages"] == {"done": 3, "dropped": 3}
    assert state["agreement"]["validate"]["mean_kappa"] is not None
    status = cli(env, "campaign", "status", NAME)
    assert "Agreement (is the negative false" in status and "| careless |" in status and "GOLD" in status

    exported = json.loads(cli(env, "campaign", "export", NAME, "--json"))
    assert exported["rows"] == 3 and exported["subsets"] == {"replace_att": 3}
    validated = {campaigns.normalise_caption(items[k].negative_caption) for k in VALIDATED}
    results = json.loads(cli(env, "evaluate", "--model", "toyworld", "--benchmarks", f"campaign:{NAME}", "--json"))
    [result] = results["results"]
    assert result["benchmark"] == f"campaign:{NAME}" and set(result["metrics"]) >= {"replace_att", "micro"}
    rows = db.rows(settings.db, "select texts from eval_items where result_id = ?", (result["result_id"],))
    assert sorted(json.loads(row["texts"])[1] for row in rows) == sorted(validated)
    assert f"campaign:{NAME}" in cli(env, "leaderboard", "--benchmarks", f"campaign:{NAME}")

    from backend.train.data import read_manifest

    manifest, skipped = read_manifest(exported["manifest"])
    assert not skipped and sorted(n for row in manifest for n in row["negatives"]) == sorted(validated)
    assert all(Path(row["image"]).is_file() for row in manifest)
