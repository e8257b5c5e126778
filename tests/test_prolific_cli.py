"""`python -m backend campaign prolific ...` end to end against the fake Prolific server, in-process through
`backend.cli.main`: create, publish, sync, review, bonus (twice), pause, status, and the errors a user sees."""
import json

import pytest

from backend.annotate import campaigns
from backend.annotate.campaigns import CampaignConfig
from backend.cli import main
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.fake_prolific import FakeProlific, prolific_env
from tests.support.prolific_crowd import arrive, work

pytestmark = pytest.mark.system


@pytest.fixture
def lab(tmp_path, monkeypatch):
    with FakeProlific() as fake:
        env = {"COMPLAB_WORKSPACE": str(tmp_path), **prolific_env(fake)}
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        settings = workspace_settings(tmp_path, **prolific_env(fake))
        Store(settings.db)
        campaign_id = toy_campaign(settings.db, settings.data_dir, "cli", 4,
                                   CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 4}))
        yield settings, fake, campaign_id


def run(capsys, *argv):
    code = main(["campaign", "prolific", *argv])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if "--json" in argv and code == 0 else out.out), out.err


def test_a_study_run_from_the_command_line(lab, capsys):
    settings, fake, campaign_id = lab
    code, created, _ = run(capsys, "create", "cli", "--app-url", "https://owner-lab.hf.space", "--reward-cents",
                           "90", "--json")
    assert code == 0 and created["url"].startswith("https://owner-lab.hf.space/study?campaign=cli&PROLIFIC_PID=")
    study_id = created["study_id"]
    assert fake.studies[study_id]["total_available_places"] == created["places"] == 2  # 4 items x 1 x 2 steps / 4
    assert run(capsys, "publish", "cli", "--json")[1]["status"] == "ACTIVE"

    annotator, submission = arrive(fake, settings.db, campaign_id, study_id, "P-CLI")
    work(settings.db, annotator)
    fake.set_status(submission, "AWAITING REVIEW", campaigns.get(settings.db, "cli")["config"].completion_code)
    quitter, gone = arrive(fake, settings.db, campaign_id, study_id, "P-GONE")
    work(settings.db, quitter, limit=1)
    fake.set_status(gone, "RETURNED")

    code, synced, _ = run(capsys, "sync", "cli", "--json")
    assert synced["by_status"] == {"AWAITING REVIEW": 1, "RETURNED": 1} and synced["released"]["P-GONE"] >= 1
    code, plan, _ = run(capsys, "review", "cli", "--json")
    assert [(d["participant_id"], d["action"]) for d in plan["plan"]] == [("P-CLI", "APPROVE")]
    assert fake.submissions[submission]["status"] == "AWAITING REVIEW"  # a plan only
    assert run(capsys, "review", "cli", "--apply", "--json")[1]["applied"]
    assert fake.submissions[submission]["status"] == "APPROVED"

    code, paid, _ = run(capsys, "bonus", "cli", "--amount", "0.30", "--json")
    assert code == 0 and paid["state"] == "paid" and fake.payments == {"P-CLI": 1}
    code, again, _ = run(capsys, "bonus", "cli", "--amount", "0.30", "--json")
    assert again["skipped"] == ["P-CLI"] and fake.payments == {"P-CLI": 1}
    assert run(capsys, "bonus", "cli", "--reconcile", "--json")[1] == {"reconciled": {}}

    assert run(capsys, "pause", "cli")[0] == 0 and fake.studies[study_id]["status"] == "PAUSED"
    code, status, _ = run(capsys, "status", "cli", "--json")
    assert status["study"]["status"] == "PAUSED" and status["bonuses"] == {"paid": 1} and status["token_set"]
    assert status["submissions"] == {"APPROVED": 1, "RETURNED": 1}
    code, lines, _ = run(capsys, "status", "cli")
    assert "token_set\tTrue" in lines and fake.token not in lines


def test_what_a_user_gets_wrong_is_a_message_and_exit_code_2(lab, capsys, monkeypatch):
    settings, fake, _ = lab
    code, _, err = run(capsys, "publish", "cli")
    assert code == 2 and "has no Prolific study yet: create its draft first" in err
    code, _, err = run(capsys, "create", "cli", "--app-url", "owner-lab.hf.space", "--reward-cents", "90")
    assert code == 2 and "must start with https://" in err
    code, _, err = run(capsys, "create", "nosuch", "--app-url", "https://x", "--reward-cents", "90")
    assert code == 2 and "no campaign named 'nosuch'" in err
    monkeypatch.setenv("PROLIFIC_TOKEN", "wrong-token")
    code, _, err = run(capsys, "create", "cli", "--app-url", "https://x.example", "--reward-cents", "90")
    assert code == 2 and "HTTP 401 (check PROLIFIC_TOKEN)" in err and "wrong-token" not in err
    monkeypatch.setenv("PROLIFIC_TOKEN", "")
    code, _, err = run(capsys, "create", "cli", "--app-url", "https://x.example", "--reward-cents", "90")
    assert code == 2 and "no Prolific API token: set PROLIFIC_TOKEN" in err
    assert not fake.studies
