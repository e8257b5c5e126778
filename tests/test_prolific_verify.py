"""Participants verified against the campaign's study and the fake Prolific server (a real HTTP server on
127.0.0.1): the link's STUDY_ID must be the study made from the app, and with a token its SESSION_ID must be
Prolific's submission of that participant in that study. A bot with made-up PIDs gets no task; a participant
is asked about once; when Prolific does not answer, newcomers are refused with a message saying so."""
from __future__ import annotations

import dataclasses

import pytest

from backend.annotate import db, prolific_study
from backend.annotate.campaigns import CampaignConfig
from backend.annotate.prolific import Identity
from backend.annotate.verify import NotVerified, admit
from backend.core.auth import cli_actor
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_server, workspace_settings
from tests.support.browser import new_page, screenshot
from tests.support.fake_prolific import FakeProlific, prolific_env

pytestmark = pytest.mark.system
PID = "5f3c2b1a0e9d8c7b6a5f4e3d"


@pytest.fixture
def fake():
    with FakeProlific() as server:
        yield server


def study(tmp_path, fake):
    settings = workspace_settings(tmp_path, **prolific_env(fake))
    Store(settings.db)
    config = CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 2})
    campaign_id = toy_campaign(settings.db, settings.data_dir, "verified", 4, config)
    study_id = prolific_study.create_study(cli_actor(), settings, "verified", "https://lab.example", 100)["study_id"]
    return settings, campaign_id, study_id


def person(pid, study_id, session_id) -> Identity:
    return Identity(pid, "prolific", study_id, session_id)


def lookups(fake) -> int:
    return len(fake.calls("GET", r"/submissions/\w+/"))


def test_the_study_and_the_submission_are_checked_and_the_answer_is_kept(tmp_path, fake):
    settings, campaign_id, study_id = study(tmp_path, fake)
    submission = fake.add_submission(study_id, PID)
    with pytest.raises(NotVerified, match="This link is not for this study"):
        admit(settings, campaign_id, person(PID, "another-study", submission))
    assert lookups(fake) == 0, "a wrong study is refused without asking Prolific"
    admit(settings, campaign_id, person(PID, study_id, submission))
    admit(settings, campaign_id, person(PID, study_id, submission))  # a reload, a second tab
    assert lookups(fake) == 1, "Prolific's answer is kept"
    stored = db.rows(settings.db, "select participant_id, status from prolific_submissions")
    assert stored == [{"participant_id": PID, "status": "ACTIVE"}]
    for pid, session in (("0" * 24, submission), (PID, "f" * 24), (PID, "")):  # someone else's, unknown, none
        with pytest.raises(NotVerified, match="not for this study"):
            admit(settings, campaign_id, person(pid, study_id, session))
    returned = fake.add_submission(study_id, "1" * 24, status="RETURNED")
    with pytest.raises(NotVerified, match="returned on Prolific"):
        admit(settings, campaign_id, person("1" * 24, study_id, returned))
    admit(settings, campaign_id, Identity("alice", "local"))  # local names are not Prolific's to check


def test_when_prolific_does_not_answer_newcomers_wait_and_known_participants_go_on(tmp_path, fake):
    settings, campaign_id, study_id = study(tmp_path, fake)
    known, new = fake.add_submission(study_id, PID), fake.add_submission(study_id, "2" * 24)
    admit(settings, campaign_id, person(PID, study_id, known))
    fake.fail("GET", r"/submissions/\w+/", "500")
    with pytest.raises(NotVerified, match="could not check your Prolific submission just now"):
        admit(settings, campaign_id, person("2" * 24, study_id, new))
    admit(settings, campaign_id, person(PID, study_id, known))  # asked before: not asked again
    admit(settings, campaign_id, person("2" * 24, study_id, new))  # Prolific answers again


def test_without_a_token_only_the_study_is_checked_and_without_an_app_study_nothing(tmp_path, fake):
    settings, campaign_id, study_id = study(tmp_path, fake)
    settings = dataclasses.replace(settings, prolific_token="")  # the token removed after the study was made
    admit(settings, campaign_id, person("3" * 24, study_id, "made-up"))
    with pytest.raises(NotVerified, match="not for this study"):
        admit(settings, campaign_id, person("3" * 24, "st-other", "made-up"))
    other = toy_campaign(settings.db, settings.data_dir, "by-hand", 2, CampaignConfig.from_dict({"gold_rate": 0}))
    admit(settings, other, person("3" * 24, "any-study", "any-session"))  # a study made on Prolific's site


@pytest.mark.browser
def test_a_bot_with_made_up_pids_gets_no_task_and_a_participant_does(tmp_path, fake, browser):
    settings, _, study_id = study(tmp_path, fake)
    submission = fake.add_submission(study_id, PID)
    with annotate_server(settings) as url, new_page(browser) as page:
        for k in range(3):  # the bot: made-up PIDs and sessions, the real study id from a leaked link
            page.goto(f"{url}study?campaign=verified&PROLIFIC_PID={k:024d}&STUDY_ID={study_id}&SESSION_ID={k:024x}")
            page.locator("#study-agree").click()
            page.locator("#study-notice").get_by_text("This link is not for this study").wait_for()
            assert page.locator("#annotate-counter").is_hidden()
        screenshot(page, "study-not-verified.png")
        assert db.rows(settings.db, "select count(*) n from assignments")[0]["n"] == 0, "the bot holds nothing"
        assert db.rows(settings.db, "select count(*) n from annotators")[0]["n"] == 0
        page.goto(f"{url}study?campaign=verified&PROLIFIC_PID={PID}&STUDY_ID={study_id}&SESSION_ID={submission}")
        page.locator("#study-agree").click()
        page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.trim() === '1 / 2'")
        screenshot(page, "study-verified.png")
