"""Security: every handler the app runs, called by someone who may not, and annotators kept apart.

One real app under the password policy (as a public deployment runs it), with a
campaign, a training run and a sweep in its store. Every handler with server
code is listed below by who may call it, private ones included: the page posts
their index to the queue and so can anyone, whatever `gradio_client` allows
(`tests/support/security_support.Visitor` does). A handler added to the app fails
`test_every_handler_is_classified` until someone decides who may call it.
"""
from __future__ import annotations

import re
import sqlite3

import httpx
import pytest

from backend.annotate import campaigns, db, prolific, resume
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.admin import ADMIN_LOGIN
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.clients import TIMEOUT, local_client
from tests.support.security_support import (
    Page,
    Visitor,
    carries_nothing,
    database_rows,
    files_under,
    served_app,
)

REFUSED = "needs an admin; you are anonymous"

# Who may call each handler, by the api_name the app's config gives it (Gradio numbers repeated names: tick_1).
ANNOTATE = {"start", "begin", "_remember", "_remember_1", "answer", "from_link", "poll",
            *(f"handler_{k}" if k else "handler" for k in range(13)),  # one per answer button (13: 4 panels)
            "answer_1", "poll_1", "open_link", "consent", *(f"handler_{k}" for k in range(13, 26)),  # the study page
            "undo", "take_back"}  # Undo my last answer: the annotate page's /undo, the study page's (private)
PUBLIC = {
    *ANNOTATE,
    "probe", "probe_1", "apply_layout", "apply_layout_1", "check_upload", "model_choices", "lambda_6", "lambda_7",
    "describe_with_data", "mark_benchmarks", "leaderboard", "board", "board_1", "fitted", "fitted_1", "fitted_2",
    "leaderboard_csv", "lambda", "refresh_if_changed", "evaluate_status",
    "evaluate_status_1", "failure_results", "failures", "failures_1", "failures_2", "failure_subtypes",
    "disagreements", "paired_test", "selected_position", "selected_position_1", "failure_item", "send_to_probe",
    "login", "logout", "_restore",
}
# Anyone else gets the PermissionDenied message: they launch, cancel or read jobs, campaigns, exports, the store.
ADMIN = {
    "launch", "run_status", "cancel", "resume", "list_runs", "launch_evaluate",
    "launch_sweep", "sweep_status", "list_sweeps", "export_patched", "download_sweep",
    "create_campaign", "list_campaigns", "campaign_status", "campaign_items", "launch_generation",
    "save_instructions", "save_intro", "items", "items_1", "items_2", "item", "item_1", "item_2", "campaign_item",
    "decisions", "decisions_1", "decisions_2", "override_item", "lambda_5", "export_campaign", "export_zip",
    "backup_database",
    # the Campaigns tab's Prolific panel (ui/tabs/campaigns_prolific.py)
    "prolific_status", "prolific_create", "prolific_publish", "prolific_pause", "prolific_sync", "prolific_review",
    "prolific_review_apply", "prolific_bonus", "prolific_reconcile", "bonus_frame",
    # the Campaigns tab's Quality view (ui/tabs/campaigns_quality.py): its refresh, the queue's decision choices
    "quality_view", "view", "quality_plan", "quality_exclude", "quality_restore", "quality_decide", "decisions_3",
    "decisions_4",
}
# Timers and refreshes of admin views: for anyone else they return nothing at all (no message every 2 s).
SILENT = {"tick", "tick_1", "tick_2", "tick_3", "tick_4", "refresh_if_changed_1", "load_config",
          "refresh_models", "shown"}  # the Sweep tab's model lists (its timer, the tab shown)
# Redraw a form from its own inputs (visibility, recipe values, a licence line, a clicked row): no stored data.
LAYOUT = {"lambda_1", "recipe_values", "lambda_2", "lambda_3", "licence_markdown", "lambda_4", "pick_row", "pick_row_1",
          "_preview", "_progress_shown", "_progress_hidden", "switched"}

# Plausible arguments, by input label: what an attacker would try (everything else: the page's own values).
ATTEMPTS = {"Run name": "owned", "Manifest (CSV/JSONL, for data = manifest)": "/etc/passwd", "Run": 1, "Sweep": 2,
            "Finetuned model (alpha = 1)": "toyworld", "Patched model name": "owned", "Alpha": 0.5, "Name": "owned",
            "File": "lab.db", "Images folder": "/etc", "Probed image": "/etc/passwd", "Folder (optional)": "/tmp",
            "Hub dataset repo (optional)": "attacker/owned", "Item id": 1, "Step 3: select": "owned",
            "Step 4: ambiguity": "owned", "Baseline: I2T": "owned", "Baseline: T2I": "owned"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The password-policy app over a store with a campaign ("study": 6 items, two answers each, no gold, sessions
    of 2 tasks: every annotator of these tests gets a task), a training run and a sweep whose names must not reach
    anyone but an admin."""
    workspace = tmp_path_factory.mktemp("lab")
    seed = workspace_settings(workspace)
    store = Store(seed.db)
    toy_campaign(seed.db, seed.data_dir, "study", 6, CampaignConfig.from_dict({"gold_rate": 0, "overlap": 2,
                                                                               "tasks_per_session": 2}))
    store.create_job("train", {"name": "secret-run", "base_model": "toyworld"}, name="secret-run", actor="admin")
    store.create_job("sweep", {"pretrained": "toyworld", "finetuned": "local-dir:/srv/secret-model"}, actor="admin")
    with served_app(workspace, ["toyworld"], **ADMIN_LOGIN) as (url, settings):
        yield url, settings


@pytest.mark.system
def test_every_handler_is_classified(lab):
    url, _ = lab
    names = Page(url).names()
    classified = PUBLIC | ADMIN | SILENT | LAYOUT
    assert not (names - classified), f"handlers nobody classified (who may call them?): {sorted(names - classified)}"
    assert not (classified - names), f"classified handlers the app no longer has: {sorted(classified - names)}"
    assert len(classified) == len(PUBLIC) + len(ADMIN) + len(SILENT) + len(LAYOUT)  # each in one class only


@pytest.mark.system
def test_admin_handlers_refuse_anonymous_visitors_and_annotators_and_change_nothing(lab):
    url, settings = lab
    page = Page(url)
    annotator = local_client(url, download_files=False)
    annotator.predict("study", "annie", api_name="/start")
    before = database_rows(settings.db), files_under(settings.workspace)
    for visitor in (Visitor(url), Visitor(url, annotator.session_hash)):
        for name in sorted(ADMIN):
            outcome = visitor.call(page.handler(name), page.arguments(page.handler(name), ATTEMPTS))
            assert outcome.error is not None and REFUSED in outcome.error, f"{name}: {outcome.text}"
        for name in sorted(SILENT):
            outcome = visitor.call(page.handler(name), page.arguments(page.handler(name), ATTEMPTS))
            assert outcome.error is None and carries_nothing(outcome.data), f"{name}: {outcome.text}"
        steps = page.failure_steps()
        assert len(steps) > len(ADMIN)  # every event with outputs has one (tests/test_refusals.py)
        for step in steps:
            outcome = visitor.call(step, [])
            assert outcome.error is None and carries_nothing(outcome.data), f"{step['api_name']}: {outcome.text}"
        visitor.close()
    assert (database_rows(settings.db), files_under(settings.workspace)) == before


@pytest.mark.system
def test_no_admin_data_reaches_a_visitor(lab):
    """The config every visitor downloads holds the hidden admin tabs too: no run or sweep may be listed there.
    The public evaluate status reads evaluate jobs only."""
    url, _ = lab
    config = httpx.get(url + "config", timeout=TIMEOUT).text
    assert "secret-run" not in config and "/srv/secret-model" not in config
    client = local_client(url, download_files=True)
    for job_id in (1, 2):
        with pytest.raises(Exception, match=f"Job {job_id} is not an evaluate job"):
            client.predict(job_id, api_name="/evaluate_status")


@pytest.mark.system
def test_no_login_route_or_wrong_password_makes_an_admin(lab):
    url, settings = lab
    page = Page(url)
    gradio_login = httpx.post(url + "login", data={"username": "admin", "password": "s3cret pass"},
                              timeout=TIMEOUT)
    assert gradio_login.status_code == 302 and not gradio_login.cookies  # Gradio's own sign-in is not ours
    before = database_rows(settings.db)
    client = local_client(url, download_files=False)
    for user, password in (("admin", "wrong"), ("Robert'); DROP TABLE answers;--", "s3cret pass"),
                           ("<script>window.__xss=1</script>", "' or '1'='1")):
        with pytest.raises(Exception, match="Wrong user name or password"):
            client.predict(user, password, api_name="/login")
    outcome = Visitor(url, client.session_hash).call(page.handler("list_runs"), [None])
    assert REFUSED in (outcome.error or "")
    assert database_rows(settings.db) == before


@pytest.mark.system
def test_annotators_never_see_answer_or_continue_each_others_tasks(lab):
    url, settings = lab
    alice, bob, mallory = (local_client(url, download_files=False) for _ in range(3))
    started = alice.predict("study", "alice", api_name="/start")
    alices_task, alices_key = task_token(started), _key(started)
    assert task_token(bob.predict("study", "bob", api_name="/start")) != alices_task
    assert any("this task is not yours" in str(value) for value in bob.predict(alices_task, "1", api_name="/answer"))
    assert _assignment(settings, alices_task) == ("held", "alice") and not _answers(settings, alices_task)
    annotators = database_rows(settings.db)["annotators"]
    for key in ("", "WRONG-KEYS-HERE", alices_key.lower().replace("-", "") + "x"):
        with pytest.raises(Exception, match="'alice' has already started in this campaign"):
            mallory.predict("study", "alice", key, api_name="/start")
    assert database_rows(settings.db)["annotators"] == annotators
    assert task_token(alice.predict("study", "alice", api_name="/start")) == alices_task  # her own session: no key
    elsewhere = local_client(url, download_files=False)  # alice in another browser, with her key
    assert task_token(elsewhere.predict("study", "alice", alices_key.lower(), api_name="/start")) == alices_task
    elsewhere.predict(alices_task, "1", api_name="/answer")
    assert _assignment(settings, alices_task) == ("answered", "alice")


@pytest.mark.system
def test_a_typed_name_never_continues_a_prolific_participant(lab):
    url, settings = lab
    page, pid = Page(url), "5f1a2b3c4d5e6f7a8b9c0d1e"
    link = {"campaign": "study", "PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": "x1"}
    shown = Visitor(url).call(page.handler("from_link"), [None, None], params=link)
    assert shown.error is None and db.rows(settings.db, "select source from annotators where external_id = ?",
                                           (pid,)) == [{"source": "prolific"}]
    with pytest.raises(Exception, match="is already in use in this campaign: pick another name"):
        local_client(url, download_files=False).predict("study", pid, api_name="/start")
    again = Visitor(url).call(page.handler("from_link"), [None, None], params=link)  # the link itself resumes
    assert task_token(again.data) == task_token(shown.data)


def test_resume_keys_are_needed_only_off_an_open_local_app(tmp_path):
    local = workspace_settings(tmp_path)
    public = workspace_settings(tmp_path, GRADIO_SERVER_NAME="0.0.0.0")
    assert not resume.keys_required(local) and resume.keys_required(public)
    Store(local.db)
    campaign_id = campaigns.create(local.db, "c", [campaigns.ItemSpec("a cat", "a dog", "", "", None)],
                                   CampaignConfig.from_dict({"gold_rate": 0}), "file")
    first = resume.enter(local.db, campaign_id, prolific.local_identity("ann"), required=False)
    assert re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}", first.issued)
    assert resume.enter(local.db, campaign_id, prolific.local_identity("ann"), required=False) == \
        resume.Entry(first.annotator_id)  # loopback: the name alone, as before keys existed
    with pytest.raises(resume.ResumeRefused):
        resume.enter(local.db, campaign_id, prolific.local_identity("ann"), "", required=True)
    spaced = " ".join(first.issued.lower().replace("-", ""))
    assert resume.enter(local.db, campaign_id, prolific.local_identity("ann"), spaced).annotator_id == \
        first.annotator_id
    with sqlite3.connect(local.db) as conn:  # a name from before keys existed: the next start claims it
        conn.execute("update annotators set resume_hash = null where id = ?", (first.annotator_id,))
    claimed = resume.enter(local.db, campaign_id, prolific.local_identity("ann"), "")
    assert claimed.annotator_id == first.annotator_id and claimed.issued not in ("", first.issued)


@pytest.mark.system
def test_the_annotation_app_has_no_admin_handler(tmp_path):
    settings = workspace_settings(tmp_path, GRADIO_SERVER_NAME="0.0.0.0")
    Store(settings.db)
    with annotate_app(settings) as url:
        assert Page(url).names() <= ANNOTATE
        assert set(local_client(url, download_files=True).view_api(return_format="dict")["named_endpoints"]) == \
            {"/start", "/answer", "/undo"}


def _key(outputs) -> str:
    """The resume key among /start's outputs."""
    return next(value for value in outputs if isinstance(value, str) and re.fullmatch(r"\w{4}-\w{4}-\w{4}", value))


def _assignment(settings, token: str) -> tuple[str, str]:
    """(status, holder's name) of the task `token` names."""
    row = db.rows(settings.db, "select s.status, a.external_id from assignments s join annotators a "
                               "on a.id = s.annotator_id where s.id = ?", (int(token),))[0]
    return row["status"], row["external_id"]


def _answers(settings, token: str) -> list:
    return db.rows(settings.db, "select * from answers where assignment_id = ?", (int(token),))
