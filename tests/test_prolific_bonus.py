"""Bonuses paid exactly once against the fake Prolific server (whose "pay", like Prolific's, pays again on every
call): a crash between set-up and pay, a lost answer to "pay" or to set-up, a "pay" that never arrived, and a
bonus asked for twice. The fake counts every payment to each participant."""
import time

import pytest

from backend.annotate import campaigns, prolific_bonus, prolific_study
from backend.annotate.campaigns import CampaignConfig
from backend.core.auth import cli_actor
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.fake_prolific import FakeProlific, prolific_env
from tests.support.prolific_crowd import arrive, work

pytestmark = pytest.mark.system
ADMIN = cli_actor()
PAY = r"/bulk-bonus-payments/\w+/pay/"
SET_UP = "/submissions/bonus-payments/"


class Crash(BaseException):
    """The process dies here (a BaseException: nothing catches it on the way out)."""


@pytest.fixture
def study(tmp_path):
    """A campaign with a published study and two approved participants, P1 and P2."""
    with FakeProlific() as fake:
        settings = workspace_settings(tmp_path, **prolific_env(fake))
        Store(settings.db)
        campaign_id = toy_campaign(settings.db, settings.data_dir, "paid", 4,
                                   CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 2}))
        study_id = prolific_study.create_study(ADMIN, settings, "paid", "https://lab.example", 100)["study_id"]
        code = campaigns.get(settings.db, "paid")["config"].completion_code
        for pid in ("P1", "P2"):
            annotator, submission = arrive(fake, settings.db, campaign_id, study_id, pid)
            work(settings.db, annotator)
            fake.set_status(submission, "AWAITING REVIEW", code)
        prolific_study.review(ADMIN, settings, "paid", apply=True)
        yield settings, fake


def states(settings):
    return [row["state"] for row in prolific_bonus.bonuses(settings.db, "paid")]


def test_a_bonus_is_paid_once_and_never_again_for_the_same_reason(study):
    settings, fake = study
    paid = prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.50")
    assert paid["state"] == "paid" and paid["amount_cents"] == 50
    assert fake.payments == {"P1": 1, "P2": 1}
    assert fake.calls("POST", SET_UP)[0]["csv_bonuses"] == "P1,0.50\nP2,0.50"
    again = prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.50")
    assert again["bonus_id"] is None and again["skipped"] == ["P1", "P2"]
    other = prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.25", ["P1"], reason="extra item")
    assert other["state"] == "paid" and fake.payments == {"P1": 2, "P2": 1}
    assert len(fake.calls("POST", PAY)) == 2


def test_a_crash_between_set_up_and_pay_is_paid_once_by_reconcile(study, monkeypatch):
    settings, fake = study

    def crash(*args):
        raise Crash()
    monkeypatch.setattr(prolific_bonus, "pay", crash)
    with pytest.raises(Crash):
        prolific_bonus.pay_bonus(ADMIN, settings, "paid", "1.00")
    assert states(settings) == ["set_up", "set_up"] and fake.payments == {}
    monkeypatch.undo()  # the process restarts
    assert prolific_bonus.reconcile(ADMIN, settings, "paid")["reconciled"] == {1: "paid"}
    assert fake.payments == {"P1": 1, "P2": 1}
    assert prolific_bonus.reconcile(ADMIN, settings, "paid")["reconciled"] == {}
    assert prolific_bonus.pay_bonus(ADMIN, settings, "paid", "1.00")["skipped"] == ["P1", "P2"]
    assert fake.payments == {"P1": 1, "P2": 1} and len(fake.calls("POST", PAY)) == 1


def test_a_lost_answer_to_pay_is_settled_by_asking_prolific_not_by_paying_again(study):
    settings, fake = study
    fake.fail("POST", PAY, "drop")  # Prolific paid; the answer never came back
    assert prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.75")["state"] == "paid"
    fake.fail("POST", PAY, "500-after")  # paid, then a 5xx
    assert prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.75", reason="second")["state"] == "paid"
    assert fake.payments == {"P1": 2, "P2": 2} and len(fake.calls("POST", PAY)) == 2
    assert prolific_bonus.reconcile(ADMIN, settings, "paid")["reconciled"] == {}


def test_a_pay_that_never_arrived_waits_for_prolific_then_is_sent_once(study):
    settings, fake = study
    fake.fail("POST", PAY, "500")  # refused before doing anything, but a 5xx says nothing certain
    assert prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.40")["state"] == "paying"
    assert prolific_bonus.reconcile(ADMIN, settings, "paid")["reconciled"] == {1: "paying"}  # may still come
    assert fake.payments == {}
    later = time.time() + prolific_bonus.SETTLE_S + 1
    assert prolific_bonus.reconcile(ADMIN, settings, "paid", now=later)["reconciled"] == {1: "paid"}
    assert prolific_bonus.reconcile(ADMIN, settings, "paid", now=later + 10_000)["reconciled"] == {}
    assert fake.payments == {"P1": 1, "P2": 1} and len(fake.calls("POST", PAY)) == 2


def test_a_lost_set_up_is_set_up_again_and_the_orphan_is_never_paid(study):
    settings, fake = study
    fake.fail("POST", SET_UP, "drop")
    assert prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.20")["state"] == "intended"
    assert prolific_bonus.reconcile(ADMIN, settings, "paid")["reconciled"] == {1: "paid"}
    assert fake.payments == {"P1": 1, "P2": 1}
    assert sorted(bulk["paid"] for bulk in fake.bulk.values()) == [0, 1]


def test_bad_bonuses_are_refused_before_anything_is_asked(study):
    settings, fake = study
    for amount in ("abc", "0", "-1", "0.001", "500"):
        with pytest.raises(ValueError, match="the bonus must be"):
            prolific_bonus.pay_bonus(ADMIN, settings, "paid", amount)
    with pytest.raises(ValueError, match="no submission of this study is from NOBODY"):
        prolific_bonus.pay_bonus(ADMIN, settings, "paid", "0.10", ["NOBODY"])
    assert not fake.calls("POST", SET_UP) and states(settings) == []
