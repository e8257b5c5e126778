"""Quality and abuse through the real app: a bot answering faster than the campaign's minimum is refused and flagged,
a script answering at 1,000 a minute is stopped by the per-client limit, a hoarder starting forty sessions holds
two sessions' worth at most, and a participant undoes a mis-keyed answer on the study page in a real browser
(seeing the question of every task, the counter going back, and no Undo once the code is shown)."""
from __future__ import annotations

import contextlib
import time

import pytest

from app import build_annotate_app, launch_options
from backend.annotate import db, report
from backend.annotate.campaigns import CampaignConfig
from backend.annotate.quality import HELD_SESSIONS_PER_CLIENT
from backend.core import limits
from backend.core.store import Store
from backend.models.registry import EmbeddingCache, ModelRegistry
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import launch, workspace_settings
from tests.support.browser import new_page, screenshot
from tests.support.clients import local_client
from tests.support.crowd import Page
from ui.context import AppContext, Guards

pytestmark = pytest.mark.system

PID = "5a6b7c8d9e0f1a2b3c4d5e6f"


@contextlib.contextmanager
def served(settings):
    """The annotation app (`python app.py --mode annotate`) whose per-client limits count this machine's clients
    too (every test client is 127.0.0.1, which the app leaves unlimited)."""
    ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                     model_choices=[], default_models=[], store=Store(settings.db), guards=Guards(limit_loopback=True))
    demo = build_annotate_app(ctx).queue()
    options = {k: v for k, v in launch_options(ctx).items() if k not in ("server_name", "server_port")}
    try:
        yield launch(demo, **options)
    finally:
        demo.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    settings = workspace_settings(tmp_path_factory.mktemp("quality-app"))
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "paced", 6,
                 CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 4,
                                           "min_seconds_per_task": 1.0}))
    toy_campaign(settings.db, settings.data_dir, "open", 40,
                 CampaignConfig.from_dict({"overlap": 3, "gold_rate": 0, "tasks_per_session": 5}), seed=1)
    toy_campaign(settings.db, settings.data_dir, "undoable", 6,  # overlap 2: one answer decides nothing
                 CampaignConfig.from_dict({"overlap": 2, "gold_rate": 0, "tasks_per_session": 4,
                                           "min_seconds_per_task": 1.0}), seed=3)
    toy_campaign(settings.db, settings.data_dir, "flood", 70,
                 CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 100}), seed=2)
    with served(settings) as url:
        yield settings, url


def answers(settings, campaign: str) -> int:
    return db.rows(settings.db, "select count(*) n from answers a join campaigns c on c.id = a.campaign_id where "
                                "c.name = ? and a.source = 'annotator'", (campaign,))[0]["n"]


def test_a_bot_faster_than_the_minimum_is_refused_with_a_message_and_flagged(lab):
    settings, url = lab
    bot = local_client(url, download_files=False)
    page = Page(bot)
    view = page.read(bot.predict("paced", "bot", "", api_name="/start"), "/start")
    for _ in range(4):
        again = page.read(bot.predict(view.token, "1", api_name="/answer"), "/answer")
        assert "You answered in 0." in again.message and "not recorded" in again.message
        assert (again.token, again.number) == (view.token, 1), "the same task stays, the counter does not move"
    assert answers(settings, "paced") == 0
    time.sleep(1.1)
    after = page.read(bot.predict(view.token, "1", api_name="/answer"), "/answer")
    assert after.number == 2 and after.message == "" and answers(settings, "paced") == 1
    row = next(r for r in report.status(settings.db, "paced")["annotators"] if r["annotator"] == "bot")
    assert row["too_fast"] == 4 and row["flags"] == ["speed"]


def test_one_client_answering_at_a_thousand_a_minute_is_stopped_and_a_hoarder_holds_two_sessions(lab):
    settings, _ = lab
    with served(settings) as url:  # a server of its own: its limits start from nothing
        _flood_and_hoard(settings, url)


def _flood_and_hoard(settings, url):
    script = local_client(url, download_files=False)
    page = Page(script)
    refused, sent = None, 0
    names = iter(f"script{k}" for k in range(100))
    view = page.read(script.predict("flood", next(names), "", api_name="/start"), "/start")
    started = time.monotonic()
    while refused is None and sent < limits.ANNOTATE_ANSWERS_PER_MINUTE + 5:
        if view.done:  # its session is over: the script starts another under a new name
            view = page.read(script.predict("flood", next(names), "", api_name="/start"), "/start")
        outputs = script.predict(view.token, "1", api_name="/answer")
        sent += 1
        message = str(outputs[page.where["/answer"]["message"]])
        if "Too many answers" in message:  # the page is left as it is, with the message
            refused = message
        else:
            view = page.read(outputs, "/answer")
    rate = sent / (time.monotonic() - started) * 60
    assert refused is not None and sent == limits.ANNOTATE_ANSWERS_PER_MINUTE + 1, f"{sent} sent at {rate:.0f}/min"
    assert "wait" in refused and "Nothing was recorded" in refused
    assert answers(settings, "flood") == limits.ANNOTATE_ANSWERS_PER_MINUTE

    hoarder = local_client(url, download_files=False)
    shown = []
    for k in range(40):  # forty study visits from one client
        try:
            shown.append(str(hoarder.predict("open", f"visit{k}", "", api_name="/start")))
        except Exception as error:  # noqa: BLE001 - the refusal comes back as the client's error
            shown.append(str(error))
    held = db.rows(settings.db, "select count(*) n from assignments a join annotators n on n.id = a.annotator_id "
                                "where n.external_id like 'visit%' and a.status in ('reserved', 'held')")[0]["n"]
    assert held <= HELD_SESSIONS_PER_CLIENT * 5, "two sessions' worth at most"
    assert any("Too many sessions from your connection" in text for text in shown)
    assert any("Too many session starts from your connection" in text for text in shown)
    free = db.rows(settings.db, "select count(*) n from items i join campaigns c on c.id = i.campaign_id where "
                                "c.name = 'open' and i.stage = 'generated'")[0]["n"]
    assert free > 20, "most of the campaign is still open to real participants"


@pytest.mark.browser
def test_a_participant_undoes_a_mis_keyed_answer_and_sees_every_tasks_question(lab, browser):
    settings, url = lab
    with new_page(browser) as page:
        page.goto(f"{url}study?campaign=undoable&PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1")
        page.click("#study-agree")
        counter = "() => document.querySelector('#annotate-counter')?.innerText.trim() === '{}'"
        page.wait_for_function(counter.format("1 / 4"))
        assert "Which image shows this description?" in page.locator("#annotate-caption").inner_text()
        page.click("#answer-1")  # at once: faster than the campaign's minimum
        page.locator("#annotate-message").get_by_text("You answered in").wait_for()
        screenshot(page, "annotate-too-fast.png")
        page.wait_for_timeout(1100)
        page.click("#answer-none")
        page.wait_for_function(counter.format("2 / 4"))
        page.click("#annotate-undo")
        page.wait_for_function(counter.format("1 / 4"))
        page.locator("#annotate-message").get_by_text("Your last answer was withdrawn").wait_for()
        screenshot(page, "annotate-undo.png")
        assert db.rows(settings.db, "select a.source from answers a join annotators n on n.id = a.annotator_id "
                                    "where n.external_id = ?", (PID,)) == [{"source": "undone"}]
        for number in range(1, 5):
            page.wait_for_function(counter.format(f"{number} / 4"))
            question = page.locator("#annotate-caption").inner_text()
            assert question.startswith("Which"), f"task {number}: the question is on screen: {question!r}"
            page.wait_for_timeout(1100)
            page.keyboard.press("1")
        page.locator("#annotate-done").get_by_text("Your completion code is").wait_for()
        assert page.locator("#annotate-undo").is_hidden(), "a code once shown is never taken back"
        screenshot(page, "annotate-done-after-undo.png")


@pytest.mark.browser
def test_the_admin_sets_the_minimum_in_the_form_and_reads_speed_flags_in_the_annotator_table(lab, browser):
    from app import build_app
    from backend.annotate import assign

    settings, _ = lab
    campaign_id = db.rows(settings.db, "select id from campaigns where name = 'paced'")[0]["id"]
    rusher = assign.join(settings.db, campaign_id, "rusher")
    shown = assign.serve(settings.db, rusher)
    for _ in range(3):
        assert not assign.submit(settings.db, rusher, shown.assignment_id, "1").recorded
    ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                     model_choices=[], default_models=[], store=Store(settings.db))
    demo = build_app(ctx).queue()
    url = launch(demo, **{k: v for k, v in launch_options(ctx).items() if k not in ("server_name", "server_port")})
    try:
        with new_page(browser) as page:
            page.goto(url)
            page.get_by_role("tab", name="Campaigns").click()
            field = page.locator("#campaign-min-seconds input")
            assert field.input_value() == "1", "the form offers a minimum of 1 s"
            page.click("#campaign-pick input")
            page.get_by_role("option", name="paced", exact=True).click()
            status = page.locator("#campaign-status")
            status.get_by_text("rusher").wait_for()
            assert "too fast" in status.inner_text() and "SPEED" in status.inner_text()
            # The settings line is another output of the same event: the page may draw it a moment later.
            page.locator("#campaign-settings").get_by_text("at least 1 s per task").wait_for()
            screenshot(page, "campaigns-speed-flags.png")
    finally:
        demo.close()
