"""The server polls Prolific by itself (`backend.annotate.prolific_poll`), and `sync` starts again a study it
paused because the campaign was full once those who left gave places back; an admin's pause stays. Against the
fake Prolific server, over a real store."""
from __future__ import annotations

import threading
import time

import pytest

from backend.annotate import campaigns, db, prolific_poll, prolific_study, report
from backend.annotate.campaigns import CampaignConfig
from backend.core.auth import cli_actor
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.fake_prolific import FakeProlific, prolific_env
from tests.support.prolific_crowd import arrive, work

pytestmark = pytest.mark.system  # the fake Prolific server listens on 127.0.0.1
ADMIN = cli_actor()


@pytest.fixture
def fake():
    with FakeProlific() as server:
        yield server


def published(tmp_path, fake, **env):
    """A published study over a campaign of two items, one answer each, two tasks per session: two places."""
    settings = workspace_settings(tmp_path, **prolific_env(fake), **env)
    Store(settings.db)
    config = CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 2,
                                       "reclaim_after_s": 3600})
    campaign_id = toy_campaign(settings.db, settings.data_dir, "study", 2, config)
    study_id = prolific_study.create_study(ADMIN, settings, "study", "https://lab.example.org", 100)["study_id"]
    prolific_study.publish(ADMIN, settings, "study")
    return settings, campaign_id, study_id


def places_left(settings, campaign_id) -> int:
    return report.places(settings.db, campaign_id, campaigns.get(settings.db, "study")["config"])["places_left"]


def test_a_study_paused_because_full_starts_again_when_a_participant_returns_and_an_admins_pause_stays(
        tmp_path, fake):
    settings, campaign_id, study_id = published(tmp_path, fake)
    first, _ = arrive(fake, settings.db, campaign_id, study_id, "P-FIRST")
    assert work(settings.db, first) == 2  # step 3 of both items: their step 4 opens
    last, last_submission = arrive(fake, settings.db, campaign_id, study_id, "P-LAST")
    assert work(settings.db, last, limit=1) == 1  # one step-4 answer given, the other task reserved: no place left
    assert places_left(settings, campaign_id) == 0
    assert prolific_study.sync(ADMIN, settings, "study")["paused_because_full"]
    assert fake.studies[study_id]["status"] == "PAUSED"
    assert not prolific_study.sync(ADMIN, settings, "study")["restarted"]  # still full: stays paused

    fake.set_status(last_submission, "RETURNED")  # their reserved task comes back: a place again
    synced = prolific_study.sync(ADMIN, settings, "study")
    assert synced["restarted"] and synced["places_left"] > 0 and synced["status"] == "ACTIVE"
    assert fake.studies[study_id]["status"] == "ACTIVE"
    assert prolific_study.status(ADMIN, settings, "study")["study"]["paused_reason"] is None

    prolific_study.pause(ADMIN, settings, "study")  # an admin's pause is the admin's to lift
    assert not prolific_study.sync(ADMIN, settings, "study")["restarted"]
    assert fake.studies[study_id]["status"] == "PAUSED"


def test_the_server_polls_running_studies_by_itself_and_a_failed_round_does_not_stop_it(tmp_path, fake):
    settings, campaign_id, study_id = published(tmp_path, fake, COMPLAB_PROLIFIC_POLL_S="1")
    annotator, submission = arrive(fake, settings.db, campaign_id, study_id, "P-GONE")
    work(settings.db, annotator, limit=1)
    fake.set_status(submission, "RETURNED")
    stop = threading.Event()
    thread = prolific_poll.start(settings, stop)
    try:
        assert thread is not None and thread.daemon
        deadline = time.monotonic() + 60
        while not db.rows(settings.db, "select released_at from prolific_submissions where id = ? and "
                                       "released_at is not null", (submission,)):
            assert time.monotonic() < deadline, "the poller never released the returned participant's tasks"
            time.sleep(0.2)
        assert not db.rows(settings.db, "select 1 from assignments where annotator_id = ? and status in "
                                        "('reserved', 'held')", (annotator,))
        for _ in range(2):  # Prolific answers 500 to the next two rounds: they fail, the thread goes on
            fake.fail("GET", f"/studies/{study_id}/", "500")
        studies, listed = (len(fake.calls("GET", f"/studies/{study_id}/{tail}")) for tail in ("", "submissions/"))
        while len(fake.calls("GET", f"/studies/{study_id}/")) < studies + 3 or \
                len(fake.calls("GET", f"/studies/{study_id}/submissions/")) < listed + 1:
            assert time.monotonic() < deadline and thread.is_alive()
            time.sleep(0.2)
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_nothing_polls_without_a_token_or_with_polling_off_and_drafts_are_left_alone(tmp_path, fake):
    assert prolific_poll.start(workspace_settings(tmp_path / "a")) is None  # no token
    off = workspace_settings(tmp_path / "b", **prolific_env(fake), COMPLAB_PROLIFIC_POLL_S="0")
    assert prolific_poll.start(off) is None
    settings = workspace_settings(tmp_path / "c", **prolific_env(fake))
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "draft", 2, CampaignConfig.from_dict({"gold_rate": 0}))
    prolific_study.create_study(ADMIN, settings, "draft", "https://lab.example.org", 100)
    assert prolific_poll.poll_once(settings) == {}  # an unpublished draft is not polled
