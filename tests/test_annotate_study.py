"""A small Prolific study, start to end, in a real browser: six participants on study links, what each ends with.

The campaign has 4 items, one answer per item and step, sessions of 3 tasks: 8 answers, 3 places. R opens the
link and leaves at once (a returned submission); P1 arrives while R holds the tasks and waits, and the page
goes on by itself once R's tasks come back; P2 waits for step 4, which P1's answers open; P1 reloads in the
middle; P3 and P4 get the one-task sessions left; P5 and R (back) find the study full. A completion code is
shown only after a session's last answer is stored, and only to those who gave every answer of theirs.
"""
from __future__ import annotations

import time

import pytest

from backend.annotate import campaigns, db, report
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_server, workspace_settings
from tests.support.browser import new_page, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.system]

RECLAIM_S = 15  # P1 must open the link before R's tasks come back: 8 s was too short on a loaded machine
WAIT_MS = 40_000


def open_study(page, url: str, pid: str, intro: bool = True) -> None:
    """Open the study link (the Campaigns tab's: /study) and agree to the intro, which a first visit shows."""
    page.goto(f"{url}study?campaign=study&PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID=se-{pid}")
    if intro:
        page.click("#study-agree")


def pid(name: str) -> str:
    return f"{name:0>24}"  # Prolific ids are 24 characters


def counter_is(page, text: str) -> None:
    page.wait_for_function("(text) => document.querySelector('#annotate-counter')?.innerText.trim() === text "
                           "&& document.querySelector('#annotate-task')?.offsetParent !== null", arg=text,
                           timeout=WAIT_MS)


def ending(page, title: str) -> str:
    """The end-of-session text once it says `title`."""
    page.wait_for_function("(title) => { const done = document.querySelector('#annotate-done'); "
                           "return done && done.offsetParent !== null && done.innerText.includes(title); }",
                           arg=title, timeout=WAIT_MS)
    return page.inner_text("#annotate-done")


def answer(page, keys: str, total: int, first: int = 1) -> None:
    """Answer tasks `first`.. with `keys`, one key a task, waiting for each task's number before its key."""
    for number, key in enumerate(keys, start=first):
        counter_is(page, f"{number} / {total}")
        page.keyboard.press(key)


def answers(settings, who: str) -> int:
    return db.rows(settings.db, "select count(*) n from answers a join annotators n on n.id = a.annotator_id "
                                "where n.external_id = ?", (pid(who),))[0]["n"]


def last_seen(settings, who: str) -> float:
    """When the server last heard from `who` (what it reclaims by)."""
    return db.rows(settings.db, "select coalesce(last_seen, started_at) t from annotators where external_id = ?",
                   (pid(who),))[0]["t"]


def code_shown(text: str, code: str) -> bool:
    return code in text or "completion code is" in text


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    settings = workspace_settings(tmp_path_factory.mktemp("study"))
    Store(settings.db)
    config = CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 3,
                                       "reclaim_after_s": RECLAIM_S})
    toy_campaign(settings.db, settings.data_dir, "study", 4, config)
    with annotate_server(settings) as url:
        yield settings, url


def test_six_participants_each_end_with_a_code_only_for_a_whole_session(study, browser):
    settings, url = study
    code = campaigns.get(settings.db, "study")["config"].completion_code
    assert report.status(settings.db, "study")["places"]["places"] == 3
    ends: dict[str, str] = {}

    with new_page(browser, WAIT_MS) as r_page:  # R opens the link, sees a task, closes the tab
        open_study(r_page, url, pid("R"))
        counter_is(r_page, "1 / 3")

    with new_page(browser, WAIT_MS) as p1, new_page(browser, WAIT_MS) as p2:
        open_study(p1, url, pid("P1"))
        waiting = ending(p1, "Please wait a moment")
        assert not code_shown(waiting, code) and p1.locator("a[href*='prolific.com']").count() == 0
        screenshot(p1, "study-wait.png")
        counter_is(p1, "1 / 3")  # no reload: the page asked again until R's tasks came back
        # R's tasks came back only once R had been away RECLAIM_S, by the server's own clock: a time taken in the
        # test after R's page closed ran up to the page's render later than R's last request (14.95 s once, loaded)
        assert time.time() - last_seen(settings, "R") >= RECLAIM_S

        open_study(p2, url, pid("P2"))  # one step-3 task is free: too few to start while P1 holds three
        assert not code_shown(ending(p2, "Please wait a moment"), code)

        answer(p1, "11", 3)
        p1.reload()  # mid-session: the same task, the same counter
        counter_is(p1, "3 / 3")
        p1.keyboard.press("1")
        ends["P1"] = ending(p1, "Thank you")
        assert answers(settings, "P1") == 3

        answer(p2, "lll", 3)  # P1's answers opened step 4: P2's page went on by itself
        ends["P2"] = ending(p2, "Thank you")
        screenshot(p2, "study-done.png")

    for name, key in (("P3", "1"), ("P4", "l")):  # the last step-3 task, then its step 4
        with new_page(browser, WAIT_MS) as page:
            open_study(page, url, pid(name))
            answer(page, key, 1)
            ends[name] = ending(page, "Thank you")

    for name in ("P5", "R"):
        with new_page(browser, WAIT_MS) as page:
            open_study(page, url, pid(name), intro=name != "R")  # R began a session: no second intro
            ends[name] = ending(page, "This study is full: please return your submission")
            assert page.locator("a[href*='prolific.com']").count() == 0
            if name == "P5":
                screenshot(page, "study-full.png")

    expected = {"R": 0, "P1": 3, "P2": 3, "P3": 1, "P4": 1, "P5": 0}
    assert {name: answers(settings, name) for name in expected} == expected
    assert {name for name, text in ends.items() if code_shown(text, code)} == {"P1", "P2", "P3", "P4"}
    assert all(f"Your completion code is {code}" in ends[name] for name in ("P1", "P2", "P3", "P4"))
    stages = report.status(settings.db, "study")["stages"]
    assert set(stages) <= {"done", "dropped"}, stages
    table = {row["annotator"]: row for row in report.status(settings.db, "study")["annotators"]}
    assert {name: (table[pid(name)]["session"], table[pid(name)]["finished"]) for name in expected} == {
        "R": (3, False), "P1": (3, True), "P2": (3, True), "P3": (1, True), "P4": (1, True), "P5": (None, False)}
