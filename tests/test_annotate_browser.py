"""A Prolific participant does three step-3 tasks with the keyboard only, in a real browser."""
from __future__ import annotations

import pytest

from backend.annotate import db
from backend.annotate.campaigns import CampaignConfig
from backend.store import Store
from tests.annotate_fixtures import toy_campaign
from tests.appserver import workspace_settings
from tests.browser import VIEWPORT, chromium
from tests.test_annotate_app import annotate_app
from ui.annotate import KEYBOARD_SCRIPT

pytestmark = pytest.mark.browser
LINK = "?campaign=study&PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=s1&SESSION_ID=x1"


def shown_images(page) -> int:
    return page.evaluate("""() => [1, 2, 3, 4].filter(k => {
        const img = document.querySelector(`#annotate-image-${k} img`);
        return img && img.complete && img.naturalWidth > 0 && img.offsetParent !== null; }).length""")


def test_three_step3_tasks_with_the_keyboard_only_then_the_completion_link(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    config = CampaignConfig.from_dict({"gold_rate": 0, "overlap": 1, "tasks_per_session": 3})
    toy_campaign(settings.db, settings.data_dir, "study", 5, config)
    code = config.completion_code
    with annotate_app(settings, head=KEYBOARD_SCRIPT) as url, chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url + LINK)
        captions = []
        for number, key in enumerate(["2", "n", "4"], start=1):
            page.wait_for_function(f"() => document.querySelector('#annotate-counter')?.innerText.includes('{number} / 3')",
                                   timeout=20_000)
            page.wait_for_function("() => [1,2,3,4].every(k => document.querySelector(`#annotate-image-${k} img`)"
                                   "?.naturalWidth > 0)", timeout=20_000)
            assert shown_images(page) == 4
            captions.append(page.inner_text("#annotate-caption"))
            page.keyboard.press(key)
        page.wait_for_selector("#annotate-done", state="visible", timeout=20_000)
        assert len(set(captions)) == 3, "each key press brought the next task"
        assert "completion code is " + code in page.inner_text("#annotate-done")
        link = page.locator("#annotate-done a")
        assert link.get_attribute("href") == f"https://app.prolific.com/submissions/complete?cc={code}"
    answers = db.rows(settings.db, "select a.choice, n.source from answers a join annotators n on "
                                   "n.id = a.annotator_id order by a.id")
    assert [(row["choice"], row["source"]) for row in answers] == [("2", "prolific"), ("none", "prolific"),
                                                                   ("4", "prolific")]


def test_keys_typed_into_a_text_field_do_not_answer(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 2, CampaignConfig.from_dict({"gold_rate": 0}))
    with annotate_app(settings, head=KEYBOARD_SCRIPT) as url, chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        page.click("#annotate-name textarea, #annotate-name input")
        page.keyboard.type("n2 1")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.includes('1 /')",
                               timeout=20_000)
        page.click("#annotate-caption")  # focus leaves the field: keys answer again
        page.keyboard.press("1")
        page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.includes('2 /')",
                               timeout=20_000)
    answers = db.rows(settings.db, "select a.choice, n.external_id from answers a join annotators n "
                                   "on n.id = a.annotator_id")
    assert [(row["choice"], row["external_id"]) for row in answers] == [("1", "n2 1")]
