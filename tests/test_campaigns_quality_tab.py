"""The Campaigns tab's Quality view through a real server on 127.0.0.1, in Debian's chromium and by gradio_client.

The campaign is built through the backend as a crowd would fill it: a careful annotator and one who always gives
the wrong side (`tests.support.annotate_fixtures.answer_session`), so every step-3 pair disagrees, the majority
rule drops each item and the adjudication queue holds them all. An admin signed in with the password policy sees
the bad annotator flagged with a low competence, decides one queued item (it leaves the queue), excludes the
flagged annotator after reading the plan (the other items reopen: the Progress view says so), and restores them;
an anonymous caller is refused every action and changes nothing.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from backend.annotate import assign, db, exclusion
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.admin import ADMIN_LOGIN
from tests.support.annotate_fixtures import answer_session, toy_campaign
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import choose, new_page, read_table, screenshot, sign_in_to_campaigns
from tests.support.clients import local_client
from tests.support.security_support import database_rows

pytestmark = pytest.mark.system

ITEMS = 10


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app over campaign "crowd": 10 items and 6 gold, answered by "careful" (right) and "bad" (wrong)."""
    workspace = tmp_path_factory.mktemp("quality")
    settings = workspace_settings(workspace, **ADMIN_LOGIN)
    Store(settings.db)
    config = CampaignConfig.from_dict({"overlap": 2, "resolution": "majority", "gold_rate": 0.25, "gold_items": 6,
                                       "tasks_per_session": 24, "min_gold": 3})
    campaign_id = toy_campaign(settings.db, settings.data_dir, "crowd", ITEMS, config, seed=4)
    for name, good in (("careful", True), ("bad", False)):
        assert answer_session(settings.db, assign.join(settings.db, campaign_id, name), good) > ITEMS
    with running_app(workspace, ["toyworld"], workspace, **ADMIN_LOGIN) as url:
        yield url, settings


def _stages(settings) -> dict[str, int]:
    rows = db.rows(settings.db, "select stage, count(*) n from items where gold = 0 group by stage")
    return {row["stage"]: row["n"] for row in rows}


def test_an_anonymous_caller_is_refused_and_changes_nothing(app):
    url, settings = app
    client = local_client(url)
    before = database_rows(settings.db)
    calls = {"/quality_view": ("crowd", None), "/quality_plan": ("crowd", None),
             "/quality_exclude": ("crowd", ["bad"], None), "/quality_restore": ("crowd", "bad", None),
             "/quality_decide": ("crowd", 1, "select", "none", None)}
    for api_name, arguments in calls.items():
        with pytest.raises(Exception, match="needs an admin; you are anonymous"):
            client.predict(*arguments, api_name=api_name)
    with pytest.raises(Exception, match="needs an admin; you are anonymous"):  # no campaign named: still refused
        client.predict("", None, api_name="/quality_plan")
    assert database_rows(settings.db) == before


@pytest.mark.browser
def test_an_admin_sees_the_bad_annotator_decides_a_tie_excludes_and_restores(app, browser):
    url, settings = app
    with new_page(browser, 30_000) as page:
        sign_in_to_campaigns(page, url, "admin", "s3cret pass")
        choose(page, "Campaign", "crowd")
        page.get_by_role("tab", name="Quality").click()
        summary = page.locator("#campaign-quality-summary")
        expect(summary).to_contain_text(f"{ITEMS} task(s) to decide")
        expect(summary).to_contain_text("1 flagged annotator(s)")

        people, _ = read_table(page, "campaign-quality-annotators")
        by_name = {row["annotator"]["text"]: row for row in people}
        assert float(by_name["bad"]["competence"]["text"]) < 0.3 < 0.8 < float(by_name["careful"]["competence"]["text"])
        assert "competence" in by_name["bad"]["flags"]["text"] and by_name["careful"]["flags"]["text"] == ""
        assert all(re.fullmatch(r"\d\.\d\d", row["competence"]["text"]) for row in people)  # rounded, not 0.93282…
        queued, total = read_table(page, "campaign-quality-queue")
        assert total == ITEMS and {row["rule says"]["text"] for row in queued} == {"tie"}
        assert "bad: " in queued[0]["answers (competence)"]["text"]

        # decide the first queued item: it leaves the queue, the others stay
        first = queued[0]["item"]["text"]
        page.locator("#campaign-quality-queue [role=gridcell]").first.click()
        expect(page.locator("#campaign-quality-item input")).to_have_value(first)
        choose(page, "Decision", "1")
        page.locator("#campaign-quality-decide").click()
        result = page.locator("#campaign-quality-result")
        expect(result).to_contain_text(f"Item {first}: select decided 1 by admin")
        expect(summary).to_contain_text(f"{ITEMS - 1} task(s) to decide")
        queued, total = read_table(page, "campaign-quality-queue")
        assert total == ITEMS - 1 and first not in {row["item"]["text"] for row in queued}
        screenshot(page, "campaigns-quality-queue.png")

        # exclude the flagged annotator: a plan first, nothing changed until confirmed
        before = _stages(settings)
        page.locator("#campaign-quality-plan").click()
        expect(result).to_contain_text("Confirm below")
        planned, _ = read_table(page, "campaign-quality-plan-table")
        assert [row["annotator"]["text"] for row in planned] == ["bad"]
        assert _stages(settings) == before and not exclusion.history(settings.db, "crowd")
        page.locator("#campaign-quality-confirm").click()
        expect(result).to_contain_text("Excluded bad: ")
        expect(result).to_contain_text(f"{ITEMS - 1} item(s) reopened")
        expect(page.locator("#campaign-quality-confirm")).to_be_hidden()
        assert read_table(page, "campaign-quality-plan-table")[1] == 0  # the plan applied is cleared
        expect(summary).to_contain_text("0 flagged annotator(s)")
        expect(summary).to_contain_text("0 task(s) to decide")  # the reopened items wait for new answers
        people, _ = read_table(page, "campaign-quality-annotators")
        assert {row["annotator"]["text"]: row["excluded"]["text"] for row in people} == {"careful": "", "bad": "yes"}
        history, _ = read_table(page, "campaign-quality-history")
        assert [(row["annotator"]["text"], row["by"]["text"], row["restored by"]["text"]) for row in history] == \
            [("bad", "admin", "")]
        assert _stages(settings).get("generated") == ITEMS - 1
        screenshot(page, "campaigns-quality.png")
        page.get_by_role("tab", name="Progress").click()
        expect(page.locator("#campaign-status")).to_contain_text(f"generated {ITEMS - 1}")
        page.get_by_role("tab", name="Quality").click()

        # restore: the answers return, the audit trail says who restored them
        expect(page.locator("#campaign-quality-who input")).to_have_value("bad")
        page.locator("#campaign-quality-restore").click()
        expect(result).to_contain_text("Restored bad:")
        history, _ = read_table(page, "campaign-quality-history")
        assert history[0]["restored by"]["text"] == "admin"
        expect(summary).to_contain_text("1 flagged annotator(s)")
