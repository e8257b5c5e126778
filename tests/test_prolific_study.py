"""A campaign's Prolific study driven from the lab against the fake Prolific server, over a real store: the
draft's URL and places, the tasks of returned and timed-out participants going to a newcomer, the pause when
the campaign is full, review with its reasons, and only admins."""
import pytest

from backend.annotate import assign, campaigns, db, exclusion, prolific_study, report
from backend.annotate.campaigns import CampaignConfig
from backend.core.auth import Actor, PermissionDenied, cli_actor
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.fake_prolific import PLACEHOLDERS, FakeProlific, prolific_env
from tests.support.prolific_crowd import arrive, finished, work

pytestmark = pytest.mark.system
ADMIN = cli_actor()
APP = "https://lab.example.org"


@pytest.fixture
def fake():
    with FakeProlific() as server:
        yield server


def setup(tmp_path, fake, name="study", items=4, **config):
    settings = workspace_settings(tmp_path, **prolific_env(fake))
    Store(settings.db)
    values = {"overlap": 1, "gold_rate": 0, "tasks_per_session": 4, **config}
    campaign_id = toy_campaign(settings.db, settings.data_dir, name, items, CampaignConfig.from_dict(values))
    created = prolific_study.create_study(ADMIN, settings, name, APP, reward_cents=120)
    return settings, campaign_id, created["study_id"]


def test_the_draft_has_the_study_link_its_placeholders_the_code_and_the_places(tmp_path, fake):
    settings, campaign_id, study_id = setup(tmp_path, fake)
    body = fake.studies[study_id]
    campaign = campaigns.get(settings.db, "study")
    places = report.places(settings.db, campaign_id, campaign["config"])
    assert body["external_study_url"].startswith(f"{APP}/study?campaign=study&")
    assert all(p in body["external_study_url"] for p in PLACEHOLDERS)
    assert body["prolific_id_option"] == "url_parameters" and body["reward"] == 120
    assert body["completion_codes"][0]["code"] == campaign["config"].completion_code
    assert body["total_available_places"] == places["places_left"] == places["places"]
    assert body["status"] == "UNPUBLISHED"
    assert prolific_study.publish(ADMIN, settings, "study")["status"] == fake.studies[study_id]["status"] == "ACTIVE"
    assert prolific_study.pause(ADMIN, settings, "study")["status"] == fake.studies[study_id]["status"] == "PAUSED"
    assert prolific_study.publish(ADMIN, settings, "study")["status"] == "ACTIVE"  # START from PAUSED
    with pytest.raises(ValueError, match="has a Prolific study already"):
        prolific_study.create_study(ADMIN, settings, "study", APP, reward_cents=120)
    toy_campaign(settings.db, settings.data_dir, "more", 2, CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0}))
    with pytest.raises(ValueError, match="places must be 1.."):  # never more places than the campaign can fill
        prolific_study.create_study(ADMIN, settings, "more", APP, 100, places=10_000)
    assert len(fake.studies) == 1


def test_returned_and_timed_out_participants_tasks_go_to_a_newcomer_at_once_and_their_answers_do_not_count(
        tmp_path, fake):
    settings, campaign_id, study_id = setup(tmp_path, fake, items=4, tasks_per_session=2,
                                            reclaim_after_s=3600)  # never reclaimed by time in this test
    prolific_study.publish(ADMIN, settings, "study")
    first, first_sub = arrive(fake, settings.db, campaign_id, study_id, "P-RETURN")
    second, second_sub = arrive(fake, settings.db, campaign_id, study_id, "P-TIMEOUT")
    assert work(settings.db, first, limit=1) == 1  # one answer, one task still reserved for the session
    assign.serve(settings.db, second)  # the second holds both of theirs on screen/reserved, answers none
    held = {row["item_id"] for row in db.rows(settings.db, "select item_id from assignments where annotator_id in "
                                                           "(?, ?) and status in ('reserved', 'held')", (first, second))}
    assert len(held) == 3
    config = campaigns.get(settings.db, "study")["config"]
    left = report.places(settings.db, campaign_id, config)["answers_left"]

    fake.set_status(first_sub, "RETURNED")
    fake.set_status(second_sub, "TIMED-OUT")
    synced = prolific_study.sync(ADMIN, settings, "study")
    assert synced["released"] == {"P-RETURN": 1, "P-TIMEOUT": 2}
    assert synced["by_status"] == {"RETURNED": 1, "TIMED-OUT": 1}
    assert not synced["paused_because_full"]
    answered = {row["item_id"] for row in db.rows(settings.db, "select item_id from answers where annotator_id = ?",
                                                  (first,))}
    # open to others again: the three tasks held and the one the returned participant answered
    assert report.places(settings.db, campaign_id, config)["answers_left"] == left + 4
    assert not db.rows(settings.db, "select 1 from assignments where annotator_id in (?, ?) and status in "
                                    "('reserved', 'held')", (first, second))
    late, _ = arrive(fake, settings.db, campaign_id, study_id, "P-LATE")  # before reclaim_after_s: an hour
    task = assign.serve(settings.db, late)
    assert isinstance(task, assign.Task) and task.total == 2
    late_items = {row["item_id"] for row in db.rows(settings.db, "select item_id from assignments where "
                                                                 "annotator_id = ? and stage = 'select'", (late,))}
    assert late_items and late_items <= held | answered
    # Polling again releases nothing twice; the returned participant's answer is kept, set aside, with why
    assert prolific_study.sync(ADMIN, settings, "study")["released"] == {}
    assert [row["source"] for row in db.rows(settings.db, "select source from answers where annotator_id = ?",
                                             (first,))] == ["excluded"]
    assert [(row["annotator"], row["reasons"], row["actor"]) for row in exclusion.history(settings.db, "study")] == [
        ("P-RETURN", ["Prolific: returned"], "Prolific"), ("P-TIMEOUT", ["Prolific: timed-out"], "Prolific")]


def test_the_study_pauses_itself_when_the_campaign_is_full(tmp_path, fake):
    settings, campaign_id, study_id = setup(tmp_path, fake, items=2, tasks_per_session=10)
    prolific_study.publish(ADMIN, settings, "study")
    assert prolific_study.sync(ADMIN, settings, "study")["paused_because_full"] is False
    people = 0
    while report.places(settings.db, campaign_id, campaigns.get(settings.db, "study")["config"])["places_left"]:
        annotator, submission = arrive(fake, settings.db, campaign_id, study_id, f"P{people}")
        work(settings.db, annotator)
        fake.set_status(submission, "AWAITING REVIEW", campaigns.get(settings.db, "study")["config"].completion_code)
        people += 1
        assert people < 10
    synced = prolific_study.sync(ADMIN, settings, "study")
    assert synced["paused_because_full"] and synced["places_left"] == 0
    assert fake.studies[study_id]["status"] == "PAUSED"
    assert prolific_study.status(ADMIN, settings, "study")["study"]["paused_reason"] == "the campaign is full"
    assert not prolific_study.sync(ADMIN, settings, "study")["paused_because_full"]  # paused once


def test_review_approves_complete_sessions_and_rejects_with_the_reason(tmp_path, fake):
    settings, campaign_id, study_id = setup(tmp_path, fake, items=12, tasks_per_session=4, gold_rate=0.5,
                                            gold_items=8, min_gold=1, gold_threshold=0.7)
    code = campaigns.get(settings.db, "study")["config"].completion_code
    kinds = {"P-GOOD": {}, "P-FAST": {"seconds": 0.3}, "P-SLOPPY": {"wrong_gold": True}}
    subs = {}
    for pid, how in kinds.items():
        annotator, subs[pid] = arrive(fake, settings.db, campaign_id, study_id, pid)
        work(settings.db, annotator, **how)
        assert finished(settings.db, annotator)
        fake.set_status(subs[pid], "AWAITING REVIEW", code)
    subs["P-NOWORK"] = fake.add_submission(study_id, "P-NOWORK", "AWAITING REVIEW")  # a code obtained elsewhere

    planned = prolific_study.review(ADMIN, settings, "study")
    assert not planned["applied"] and all(fake.submissions[s]["status"] == "AWAITING REVIEW" for s in subs.values())
    decided = {d["participant_id"]: (d["action"], d["category"]) for d in planned["plan"]}
    assert decided == {"P-GOOD": ("APPROVE", ""), "P-FAST": ("REJECT", "TOO_QUICKLY"),
                       "P-SLOPPY": ("REJECT", "FAILED_CHECK"), "P-NOWORK": ("REJECT", "NO_DATA")}
    assert all(len(d["message"]) >= 100 for d in planned["plan"] if d["action"] == "REJECT")

    applied = prolific_study.review(ADMIN, settings, "study", apply=True)
    assert applied["applied"]
    assert {pid: fake.submissions[s]["status"] for pid, s in subs.items()} == {
        "P-GOOD": "APPROVED", "P-FAST": "REJECTED", "P-SLOPPY": "REJECTED", "P-NOWORK": "REJECTED"}
    assert fake.calls("POST", "/submissions/bulk-approve/") == [{"submission_ids": [subs["P-GOOD"]]}]
    rejection = fake.calls("POST", f"/submissions/{subs['P-SLOPPY']}/transition/")[0]
    assert rejection["rejection_category"] == "FAILED_CHECK" and "check questions" in rejection["message"]
    assert prolific_study.review(ADMIN, settings, "study", apply=True)["plan"] == []  # nothing decided twice


def test_only_an_admin_manages_the_study(tmp_path, fake):
    settings, _, study_id = setup(tmp_path, fake)
    visitor = Actor("someone", via="password")
    for action in (lambda: prolific_study.publish(visitor, settings, "study"),
                   lambda: prolific_study.sync(visitor, settings, "study"),
                   lambda: prolific_study.review(visitor, settings, "study", apply=True),
                   lambda: prolific_study.create_study(visitor, settings, "study", APP, 100)):
        with pytest.raises(PermissionDenied):
            action()
    assert fake.studies[study_id]["status"] == "UNPUBLISHED"
