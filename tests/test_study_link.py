"""The study link lands in the study, in a real browser: on the full app and on the annotation-only app, /study
shows the campaign's intro (as the admin edited it), then its tasks, and nothing else: no tab, no header, no
"Use via API". A link to no campaign, or without a Prolific id, says only that it is not valid."""
from __future__ import annotations

import pytest

from app import build_app, launch_options
from backend.annotate import campaigns
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from backend.models.registry import EmbeddingCache, ModelRegistry
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_server, launch, workspace_settings
from tests.support.browser import new_page, screenshot
from tests.support.clients import local_client
from ui.context import AppContext

pytestmark = [pytest.mark.browser, pytest.mark.system]

PID = "6a7b8c9d0e1f2a3b4c5d6e7f"
QUERY = f"&PROLIFIC_PID={PID}&STUDY_ID=st9&SESSION_ID=se9"
INTRO = "## About this study\n\nYou will judge **12** pictures. Your answers are kept for research only."


@pytest.fixture(scope="module")
def full_app(tmp_path_factory):
    """The whole app (Probe, Train, Campaigns...) with the launch options `python app.py` gives it."""
    settings = workspace_settings(tmp_path_factory.mktemp("study-link"))
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 4,
                 CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 3}))
    ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                     model_choices=[], default_models=[], store=Store(settings.db))
    demo = build_app(ctx).queue()
    options = {k: v for k, v in launch_options(ctx).items() if k not in ("server_name", "server_port")}
    url = launch(demo, **options)
    try:
        yield settings, url
    finally:
        demo.close()


def visible_text(page) -> str:
    return page.inner_text("body")


def test_the_study_link_shows_the_edited_intro_then_the_tasks_and_nothing_else_in_both_app_modes(full_app, browser):
    settings, url = full_app
    saved = local_client(url).predict("study", INTRO, api_name="/save_intro")  # the admin edits the intro
    assert "Saved the intro" in saved and campaigns.get(settings.db, "study")["config"].intro == INTRO
    with new_page(browser) as page:
        page.goto(f"{url}study?campaign=study{QUERY}")
        page.locator("#study-intro-text").get_by_text("About this study").wait_for()
        assert page.locator("#study-intro-text strong").inner_text() == "12", "the Markdown is rendered"
        text = visible_text(page)
        assert "Use via API" not in text and "Compositionality Lab" not in text and "Campaign" not in text
        assert page.locator("[role=tab]:visible").count() == 0 and page.locator("nav:visible").count() == 0
        assert page.locator("input:visible, textarea:visible").count() == 0, "no form: the link says who"
        assert page.locator("#annotate-counter").is_hidden()
        screenshot(page, "study-intro.png")
        page.click("#study-agree")
        page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.trim() === '1 / 3'")
        assert page.locator("#study-intro").is_hidden()
        screenshot(page, "study-task.png")
        page.reload()  # the link again: the session goes on, no second intro
        page.wait_for_function("() => document.querySelector('#annotate-counter')?.innerText.trim() === '1 / 3'")
        assert page.locator("#study-intro").is_hidden()
    # The annotation-only app (`python app.py --mode annotate`) serves the same page. Its tests are one (xdist may
    # split a module's tests between processes, each with its own fixture): the wait below needs the first
    # participant's three tasks held.
    with annotate_server(settings) as annotate_url, new_page(browser) as page:
        page.goto(f"{annotate_url}study?campaign=study&PROLIFIC_PID={PID[::-1]}&STUDY_ID=st9&SESSION_ID=se8")
        page.locator("#study-intro-text").get_by_text("About this study").wait_for()
        assert "Use via API" not in visible_text(page)
        page.click("#study-agree")  # one task is free, too few while the first participant holds three: a wait
        page.locator("#annotate-done").get_by_text("Please wait a moment").wait_for()


@pytest.mark.parametrize("query", ["?campaign=stduy" + QUERY, "?campaign=study", "?campaign=study&PROLIFIC_PID=<x>"])
def test_a_link_to_no_campaign_or_without_a_prolific_id_is_not_valid(full_app, browser, query):
    _, url = full_app
    with new_page(browser) as page:
        page.goto(f"{url}study{query}")
        page.locator("#study-notice").get_by_text("This link is not valid").wait_for()
        text = visible_text(page)
        assert "study" not in text.replace("the study", ""), "no campaign is named"
        assert page.locator("#study-agree").is_hidden() and page.locator("#annotate-task").is_hidden()
        if query.startswith("?campaign=stduy"):
            screenshot(page, "study-invalid.png")


def test_the_campaigns_tab_gives_the_study_link_and_previews_the_intro_it_edits(full_app, browser):
    """The admin's side (open-local: this machine's user is the admin): the study link, the places line, and the
    intro editor whose Markdown is rendered beside it as participants will read it."""
    _, url = full_app
    with new_page(browser) as page:
        page.goto(url)
        page.get_by_role("tab", name="Campaigns").click()
        page.click("#campaign-pick input")
        page.get_by_role("option", name="study", exact=True).click()
        link = page.locator("#campaign-study-link")
        link.get_by_text("/study?campaign=study&PROLIFIC_PID=").wait_for()
        assert "Prolific places: 3 in all" in page.inner_text("#campaign-status")  # 4 x 1 x 2 over 3 a session
        page.get_by_role("tab", name="Instructions").click()
        editor = page.locator("#campaign-intro textarea")
        editor.fill("## Welcome, participant\n\nIt takes **ten** minutes.")
        page.locator("#campaign-intro-preview strong").get_by_text("ten").wait_for()
        assert page.locator("#campaign-intro-preview h2").inner_text() == "Welcome, participant"
        screenshot(page, "campaigns-intro.png")
