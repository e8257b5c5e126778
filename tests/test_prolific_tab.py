"""The Campaigns tab's Prolific panel through a real app on 127.0.0.1 and the fake Prolific server: an admin
creates, publishes, polls, reviews and pays a bonus (gradio_client, then in chromium); an anonymous caller is
refused everything and the token never reaches a browser.

`SAVE_SCREENSHOT=1` writes the panel to docs/campaigns-prolific.png.
"""
import json
import urllib.request

import pytest

from backend.annotate import campaigns, prolific_study
from backend.annotate.campaigns import CampaignConfig
from backend.core.auth import cli_actor
from tests.support.admin import CREDENTIALS
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import new_page, screenshot, sign_in_to_campaigns
from tests.support.clients import local_client
from tests.support.fake_prolific import FakeProlific, prolific_env
from tests.support.prolific_crowd import arrive, work

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("prolific-tab")
    with FakeProlific(token="tab-secret-token") as fake:
        env = {**CREDENTIALS, **prolific_env(fake)}
        settings = workspace_settings(workspace, **env)
        with running_app(workspace, ["toyworld"], workspace, **env) as url:
            toy_campaign(settings.db, settings.data_dir, "tabstudy", 4,
                         CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 4}))
            yield url, settings, fake


def test_an_admin_runs_the_study_from_the_panel_and_an_anonymous_caller_is_refused(lab):
    url, settings, fake = lab
    anonymous = local_client(url)
    for api, args in (("/prolific_status", ("tabstudy",)), ("/prolific_create", ("tabstudy", 100, "", "")),
                      ("/prolific_sync", ("tabstudy",)), ("/prolific_bonus", ("tabstudy", "0.50", "", "bonus"))):
        with pytest.raises(Exception, match="needs an admin"):
            anonymous.predict(*args, api_name=api)
    assert not fake.studies

    admin = local_client(url)
    admin.predict("admin", "s3cret pass", api_name="/login")
    assert "Prolific API token: **set**" in admin.predict("tabstudy", api_name="/prolific_status")
    created, shown = admin.predict("tabstudy", 120, "", "", api_name="/prolific_create")
    assert "Created the draft study" in created and "**UNPUBLISHED**" in shown
    (study_id, study), = fake.studies.items()
    assert study["external_study_url"].startswith(f"{url.rstrip('/')}/study?campaign=tabstudy&PROLIFIC_PID=")
    assert "**ACTIVE**" in admin.predict("tabstudy", api_name="/prolific_publish")[0]

    campaign_id = campaigns.get(settings.db, "tabstudy")["id"]
    annotator, submission = arrive(fake, settings.db, campaign_id, study_id, "P-TAB")
    work(settings.db, annotator)
    fake.set_status(submission, "AWAITING REVIEW", campaigns.get(settings.db, "tabstudy")["config"].completion_code)
    assert "Polled 1 submission(s)" in admin.predict("tabstudy", api_name="/prolific_sync")[0]
    said, plan, _ = admin.predict("tabstudy", 1.5, api_name="/prolific_review")
    assert said.startswith("Planned") and plan["data"] == [["P-TAB", "approve", "", plan["data"][0][3]]]
    assert admin.predict("tabstudy", 1.5, api_name="/prolific_review_apply")[0].startswith("Sent: 1")
    said, bonuses, shown = admin.predict("tabstudy", "0.50", "", "bonus", api_name="/prolific_bonus")
    assert "**paid**" in said and fake.payments == {"P-TAB": 1} and "Bonuses: paid 1." in shown
    assert "Already given this bonus: P-TAB" in admin.predict("tabstudy", "0.50", "", "bonus",
                                                              api_name="/prolific_bonus")[0]
    with pytest.raises(Exception, match="the bonus must be"):
        admin.predict("tabstudy", "lots", "", "bonus", api_name="/prolific_bonus")
    assert fake.payments == {"P-TAB": 1}
    config = urllib.request.urlopen(f"{url.rstrip('/')}/config", timeout=30).read().decode()
    assert fake.token not in config and fake.token not in json.dumps(admin.view_api(print_info=False, return_format="dict"))


@pytest.mark.browser
def test_the_panel_in_the_browser(lab, browser):
    url, settings, fake = lab
    if not fake.studies:  # run alone: the study the first test made from the panel
        prolific_study.create_study(cli_actor(), settings, "tabstudy", url, 120)
    with new_page(browser, 30_000) as page:
        sign_in_to_campaigns(page, url, "admin", "s3cret pass")
        page.locator("#campaign-pick input").fill("tabstudy")
        page.locator("#campaign-pick input").press("Enter")
        page.get_by_role("tab", name="Prolific").click()
        status = page.locator("#campaign-prolific-status")
        status.get_by_text("Prolific API token: set").wait_for()
        page.locator("#campaign-prolific-sync").click()
        page.locator("#campaign-prolific-result").get_by_text("Polled").wait_for()
        page.locator("#campaign-prolific-preview").click()
        page.locator("#campaign-prolific-result").get_by_text("decision(s)").wait_for()
        assert "Study " in status.inner_text() and fake.token not in page.content()
        screenshot(page, "campaigns-prolific.png")
