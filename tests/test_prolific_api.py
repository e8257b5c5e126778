"""The Prolific client against the fake Prolific server on 127.0.0.1: each call's request shape, the token,
paging, and which failures mean "nothing done" (refused) or "maybe done" (unsure)."""
import pytest

from backend.annotate.prolific_api import ProlificClient, ProlificError, ProlificRefused, ProlificUnsure
from tests.support.fake_prolific import PLACEHOLDERS, FakeProlific

pytestmark = pytest.mark.system

STUDY = {"name": "Judge pictures", "description": "Look at pictures.", "prolific_id_option": "url_parameters",
         "external_study_url": "https://lab.example/study?campaign=c&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID="
                               "{{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
         "completion_codes": [{"code": "ABC123", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
         "total_available_places": 3, "estimated_completion_time": 10, "reward": 150}


@pytest.fixture
def fake():
    with FakeProlific(page_size=2) as server:
        yield server


@pytest.fixture
def api(fake):
    with ProlificClient(fake.token, fake.url) as client:
        yield client


def test_every_call_has_the_documented_shape(fake, api):
    study = api.create_study(STUDY)
    assert study["status"] == "UNPUBLISHED" and fake.calls("POST", "/studies/") == [STUDY]
    assert all(p in fake.studies[study["id"]]["external_study_url"] for p in PLACEHOLDERS)
    assert api.transition_study(study["id"], "PUBLISH")["status"] == "ACTIVE"
    assert api.transition_study(study["id"], "PAUSE")["status"] == "PAUSED"
    assert api.transition_study(study["id"], "START")["status"] == "ACTIVE"
    assert fake.calls("POST", f"/studies/{study['id']}/transition/") == [
        {"action": "PUBLISH"}, {"action": "PAUSE"}, {"action": "START"}]

    ids = [fake.add_submission(study["id"], f"p{n}") for n in range(5)]  # three pages of two
    listed = api.list_submissions(study["id"])
    assert [s["id"] for s in listed] == ids and {s["status"] for s in listed} == {"ACTIVE"}
    assert len(fake.calls("GET", f"/studies/{study['id']}/submissions/")) == 3

    for submission_id in ids[:3]:
        fake.set_status(submission_id, "AWAITING REVIEW", "ABC123")
    api.bulk_approve(ids[:2])
    assert fake.calls("POST", "/submissions/bulk-approve/") == [{"submission_ids": ids[:2]}]
    message = "x" * 100
    rejected = api.transition_submission(ids[2], "REJECT", message, "TOO_QUICKLY")
    assert rejected["status"] == "REJECTED"
    assert fake.calls("POST", f"/submissions/{ids[2]}/transition/") == [
        {"action": "REJECT", "message": message, "rejection_category": "TOO_QUICKLY"}]
    with pytest.raises(ProlificRefused, match="at least 100 characters"):
        api.transition_submission(ids[1], "REJECT", "too short", "TOO_QUICKLY")

    bulk = api.set_up_bonuses(study["id"], "p0,0.50\np1,1.25")
    assert fake.calls("POST", "/submissions/bonus-payments/") == [{"study_id": study["id"],
                                                                  "csv_bonuses": "p0,0.50\np1,1.25"}]
    assert fake.payments == {}  # set up is not paid
    api.pay_bonuses(bulk["id"])
    assert fake.payments == {"p0": 1, "p1": 1}
    assert api.get_submission(ids[1])["bonus_payments"] == [125]
    with pytest.raises(ProlificRefused, match="invalid bonus line"):
        api.set_up_bonuses(study["id"], "stranger,1.00")


def test_a_wrong_token_is_refused_and_never_printed(fake):
    with ProlificClient("not-the-token", fake.url) as client, pytest.raises(ProlificRefused) as refused:
        client.create_study(STUDY)
    assert "HTTP 401" in str(refused.value) and "PROLIFIC_TOKEN" in str(refused.value)
    assert "not-the-token" not in str(refused.value) and not fake.studies
    with pytest.raises(ProlificError, match="no Prolific API token"):
        ProlificClient("", fake.url)


def test_a_failure_before_or_after_the_work_is_unsure_and_a_refusal_is_not(fake, api):
    fake.fail("POST", "/studies/", "500")
    with pytest.raises(ProlificUnsure, match="HTTP 500"):
        api.create_study(STUDY)
    assert not fake.studies
    fake.fail("POST", "/studies/", "drop")  # done on the server, the answer lost
    with pytest.raises(ProlificUnsure, match="connection to Prolific failed"):
        api.create_study(STUDY)
    assert len(fake.studies) == 1
    with pytest.raises(ProlificRefused, match="HTTP 404"):
        api.get_study("0" * 24)
    with ProlificClient(fake.token, "http://127.0.0.1:9/api/v1", timeout_s=2) as nowhere, \
            pytest.raises(ProlificUnsure):
        nowhere.get_study("x")
