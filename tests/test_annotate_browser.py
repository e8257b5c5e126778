"""The annotator's page in a real browser (Debian chromium via playwright), served as a study link serves it.

A Prolific participant answers with the keyboard only: five step-3 tasks
("2", "n", "4", "1", "1") and gets the completion link only after the last
answer. A second participant's session begins with a step-4 task (another
annotator's step-3 answer made one). A local annotator shows that keys typed
into a text field stay there.

`SAVE_SCREENSHOT=1` also writes a step-3 task, a step-4 task and the completion
page to docs/annotate-step3.png, docs/annotate-step4.png, docs/annotate-done.png.
"""
from __future__ import annotations


import pytest

from backend.annotate import assign, campaigns, db
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_server, workspace_settings
from tests.support.browser import VIEWPORT, inside, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.system]

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
LINK = f"?campaign=study&PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1"
TASKS = 5
WAIT_MS = 20_000
IMAGES = "[1, 2, 3, 4].map(k => document.querySelector(`#annotate-image-${k} img`))"


@pytest.fixture(scope="module")
def served(tmp_path_factory, browser):
    """Two toy campaigns: "study" (overlap 1: one answer decides step 3) for the participant, "local" for
    the typing test."""
    settings = workspace_settings(tmp_path_factory.mktemp("annotate-browser"))
    Store(settings.db)
    study = CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": TASKS})
    toy_campaign(settings.db, settings.data_dir, "study", 8, study)
    toy_campaign(settings.db, settings.data_dir, "local", 3,
                 CampaignConfig.from_dict({"gold_rate": 0, "tasks_per_session": 3}), seed=1)
    with annotate_server(settings) as url:
        yield settings, url, browser


@pytest.fixture
def page(served):
    context = served[2].new_context(viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    yield context.new_page()
    context.close()


def looks(page, selector: str) -> tuple[str, str]:
    style = page.locator(selector).evaluate("e => { const s = getComputedStyle(e); return [s.backgroundColor, "
                                            "s.borderStyle]; }")
    return tuple(style)


def counter(page) -> str:
    return page.inner_text("#annotate-counter").strip()


def wait_for_task(page, number: int, total: int, previous: list[str]) -> list[str]:
    """Wait until the page shows task `number` with four loaded images other than `previous`; return their
    sources."""
    page.wait_for_function("([text]) => document.querySelector('#annotate-counter')?.innerText.trim() === text",
                           arg=[f"{number} / {total}"])
    page.wait_for_function(f"""(previous) => {IMAGES}.every(img => img && img.complete && img.naturalWidth > 0
                               && img.offsetParent !== null && !previous.includes(img.src))""", arg=previous)
    return page.evaluate(f"() => {IMAGES}.map(img => img.src)")


def answers_of(settings, external_id: str) -> list[tuple[str, str]]:
    rows = db.rows(settings.db, "select a.choice, n.source from answers a join annotators n on n.id = "
                                "a.annotator_id where n.external_id = ? order by a.id", (external_id,))
    return [(row["choice"], row["source"]) for row in rows]


def test_a_participant_answers_with_the_keyboard_and_gets_the_code_after_the_last_answer(served, page):
    settings, url, _ = served
    page.goto(url + LINK)
    sources, captions = [], []
    for number, key in enumerate(["2", "n", "4"], start=1):
        sources = wait_for_task(page, number, TASKS, sources)
        captions.append(page.inner_text("#annotate-caption"))
        if number == 1:
            assert page.is_visible("#annotate-instructions"), "the first task shows the instructions"
            assert page.locator("input:visible, textarea:visible").count() == 0, "nothing to type in"
            assert looks(page, "#answer-none") != looks(page, "#answer-4"), "None looks unlike the images' keys"
            screenshot(page, "annotate-step3.png", settled=True)
        else:
            assert not page.is_visible("#annotate-instructions"), "read once, they fold away"
        assert not page.is_visible("#annotate-done")
        page.keyboard.press(key)
    sources = wait_for_task(page, 4, TASKS, sources)
    captions.append(page.inner_text("#annotate-caption"))
    assert len(set(captions)) == 4, f"every key press brought a new caption: {captions}"
    assert answers_of(settings, PID) == [("2", "prolific"), ("none", "prolific"), ("4", "prolific")]
    parts = [f"#annotate-image-{k}" for k in range(1, 5)] + [f"#answer-{key}" for key in ("1", "2", "3", "4", "none")]
    boxes = {part: page.locator(part).bounding_box() for part in parts}
    screen = {"x": 0, "y": 0, **VIEWPORT}
    assert all(inside(box, screen) for box in boxes.values()), f"images and keys fit the window unscrolled: {boxes}"

    page.keyboard.press("1")
    wait_for_task(page, 5, TASKS, sources)
    assert not page.is_visible("#annotate-done") and page.locator("a[href*='prolific.com']").count() == 0
    page.keyboard.press("1")
    done = page.locator("#annotate-done")
    done.wait_for(state="visible")
    code = campaigns.get(settings.db, "study")["config"].completion_code
    assert f"Your completion code is {code}" in done.inner_text()
    link = done.get_by_role("link", name="Return to Prolific to complete your submission")
    assert link.is_visible()
    assert link.get_attribute("href") == f"https://app.prolific.com/submissions/complete?cc={code}"
    assert not page.is_visible("#annotate-task")
    assert len(answers_of(settings, PID)) == TASKS
    screenshot(page, "annotate-done.png", settled=True)


def test_a_second_participant_starts_with_the_step_4_another_annotators_answer_opened(served, page):
    """Another annotator's session ends on step 3 of a fresh item; the next participant's session, reserved when
    their link opens, begins with that item's step 4 (later steps first)."""
    settings, url, _ = served
    campaign_id = campaigns.get(settings.db, "study")["id"]
    helper = assign.join(settings.db, campaign_id, "helper", "local")
    their, decided = assign.next_task(settings.db, helper), None
    while their is not None:
        if their.task == "select":
            decided = their.item_id
        assign.submit(settings.db, helper, their.assignment_id, "1" if their.task == "select" else "left")
        their = assign.next_task(settings.db, helper)
    assert decided is not None, "the helper's session had a step-3 task"
    page.goto(url + f"?campaign=study&PROLIFIC_PID={PID[::-1]}&STUDY_ID=s1&SESSION_ID=x2")
    page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.trim().startsWith('1 / ')")
    page.wait_for_function("""() => ['left', 'right'].every(side => {
        const img = document.querySelector(`#annotate-${side} img`);
        return img && img.complete && img.naturalWidth > 0 && img.offsetParent !== null; })""")
    original = db.rows(settings.db, "select caption from items where id = ?", (decided,))[0]["caption"]
    assert page.inner_text("#annotate-caption").strip().splitlines()[-1] == original
    assert "Which image best matches this description? (Both" in page.inner_text("#annotate-caption"), \
        "step 4's question is on screen, whether its instructions are open or not"
    assert not page.is_visible("#annotate-image-1") and not page.is_visible("#answer-none")
    assert page.is_visible("#answer-both")
    assert "Both" in page.inner_text("#annotate-instructions"), "step 4's instructions, open the first time"
    assert not page.is_visible("#annotate-done") and page.locator("a[href*='prolific.com']").count() == 0
    screenshot(page, "annotate-step4.png", settled=True)


def test_keys_typed_into_a_text_field_stay_there(served, page):
    settings, url, _ = served
    page.goto(url + "?campaign=local")  # the start form, the campaign chosen
    name = page.locator("#annotate-name textarea, #annotate-name input").first
    name.click()
    page.keyboard.type("ann 1234 n")
    assert name.input_value() == "ann 1234 n", "digits typed into the name field are the name's"
    page.keyboard.press("Enter")
    wait_for_task(page, 1, 3, [])
    # With a task on screen, a focused text field (here one added to the page) keeps its keys too.
    page.evaluate("""() => { const field = document.createElement('textarea'); field.id = 'typing';
                             document.querySelector('#annotate-task').prepend(field); field.focus(); }""")
    page.keyboard.type("12n4")
    page.wait_for_timeout(700)  # an answer would have been sent and shown by now
    assert page.input_value("#typing") == "12n4"
    assert counter(page) == "1 / 3" and answers_of(settings, "ann 1234 n") == []
    page.click("#annotate-caption")  # focus leaves the field: keys answer again
    page.keyboard.press("3")
    page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.trim() === '2 / 3'")
    assert answers_of(settings, "ann 1234 n") == [("3", "local")]
