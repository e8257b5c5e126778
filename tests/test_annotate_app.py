"""The annotation flow served alone (`python app.py --mode annotate`): only the annotator's endpoints exist,
and each annotator reads and writes only their own tasks. Also Prolific's identity and completion URL."""
from __future__ import annotations

import pytest

from backend.annotate import db, prolific
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.clients import local_client


@pytest.mark.system
def test_annotate_mode_has_no_admin_endpoint_and_nobody_answers_anothers_task(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 3, CampaignConfig.from_dict({"gold_rate": 0}))
    with annotate_app(settings) as url:
        alice, mallory = (local_client(url, download_files=False) for _ in range(2))
        assert set(alice.view_api(return_format="dict")["named_endpoints"]) == {"/start", "/answer", "/undo"}
        alices_task = task_token(alice.predict("study", "alice", api_name="/start"))
        mallory.predict("study", "mallory", api_name="/start")
        shown = mallory.predict(alices_task, "1", api_name="/answer")
        assert any("not yours" in str(value) for value in shown)
        assert db.rows(settings.db, "select count(*) n from answers")[0]["n"] == 0
        with pytest.raises(Exception, match="Start a session first"):
            local_client(url).predict(alices_task, "1", api_name="/answer")
        alice.predict(alices_task, "1", api_name="/answer")
        assert [row["choice"] for row in db.rows(settings.db, "select choice from answers")] == ["1"]


def test_prolific_identity_comes_from_the_link_and_the_completion_url_carries_the_code():
    who = prolific.identity_from_params({"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "s1",
                                         "SESSION_ID": "x9", "campaign": "c"})
    assert who == prolific.Identity("5f1a2b3c4d5e6f7a8b9c0d1e", "prolific", "s1", "x9")
    assert prolific.identity_from_params({}) is None and prolific.identity_from_params(None) is None
    with pytest.raises(ValueError, match="malformed Prolific parameter"):
        prolific.identity_from_params({"PROLIFIC_PID": "<script>"})
    assert prolific.completion_url("C7CDA574") == "https://app.prolific.com/submissions/complete?cc=C7CDA574"
    with pytest.raises(ValueError):
        prolific.completion_url("a b")


@pytest.mark.system
def test_a_page_load_handled_after_start_keeps_the_annotators_session(tmp_path):
    """A busy server may handle a page's load after its annotator pressed Start (the same race as the admin's
    sign-in): the load must not put the start form back over the task they were shown."""
    from tests.support.security_support import Page, Visitor, carries_nothing

    settings = workspace_settings(tmp_path)
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 3, CampaignConfig.from_dict({"gold_rate": 0}))
    with annotate_app(settings) as url:
        page, browser = Page(url), Visitor(url)
        started = browser.call(page.handler("start"), ["study", "alice", "", None])
        assert started.error is None
        late_load = browser.call(page.handler("from_link"), [None, None])
        assert late_load.error is None and carries_nothing(late_load.data)
        token = task_token(started.data)
        answered = browser.call(page.handler("answer"), [None, token, "1"])
        assert answered.error is None
        assert [row["choice"] for row in db.rows(settings.db, "select choice from answers")] == ["1"]
