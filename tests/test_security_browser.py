"""Security: SQL-looking and HTML/script strings in every text field are stored verbatim (or refused by the slug
rule) and shown as typed, never run: checked in SQLite and in a real browser (Debian chromium via playwright).

The app runs open-local (everyone is admin, as `python app.py` on a laptop), so one browser reaches every tab.
Each page that shows such text is opened and must show it literally, with `window.__xss` never set and no
dialog opened: the Probe's results, the annotator's task caption, the Campaigns tab's report and item view
(annotator names, captions), the Train tab's run list and status (a job's message and error).
"""
from __future__ import annotations

import csv
import json
import re

import pytest
from gradio_client import handle_file
from playwright.sync_api import expect

from backend.annotate import campaigns, db
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.browser import new_page
from tests.support.clients import local_client
from tests.support.security_support import Page, Visitor, served_app
from tests.support.tiny import solid_image

pytestmark = [pytest.mark.browser, pytest.mark.system]

SQL, SCRIPT, IMAGE = "Robert'); DROP TABLE answers;--", "<script>window.__xss=1</script>", \
    '<img src=x onerror="window.__xss=1">'
INJECTIONS = [SQL, SCRIPT, IMAGE, "{{7*7}}", "[x](javascript:alert(1))", "| a | b |"]
WAIT_MS = 30_000
STORED = "() => localStorage.getItem('complab-annotate')"  # what the annotation page remembers (encrypted)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, browser):
    """The app over a campaign whose two captions are injections (as a campaign file could hold them) and a
    failed training run whose message and error are."""
    workspace = tmp_path_factory.mktemp("injection")
    settings = workspace_settings(workspace)
    store = Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 1, CampaignConfig.from_dict({"gold_rate": 0}))
    campaigns.create(settings.db, "names", [campaigns.ItemSpec("a cat", "a dog")], CampaignConfig(), "file")
    with db.write(settings.db) as conn:
        conn.execute("update items set caption = ?, negative_caption = ?", (SCRIPT, IMAGE))
    job_id = store.create_job("train", {"name": "injected", "base_model": "toyworld"}, name="injected")
    store.update_job(job_id, status="failed", message=SCRIPT, error=IMAGE)
    image = workspace / "red.png"
    solid_image((200, 30, 30), size=64).save(image)
    with served_app(workspace, ["toyworld"]) as (url, settings):
        yield url, settings, browser, image


@pytest.fixture
def page(lab):
    """A fresh page that records every dialog it opens."""
    with new_page(lab[2], WAIT_MS) as page:
        page.dialogs = []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(lab[0])
        yield page


def shown_literally(page, selector: str, texts: list[str]) -> None:
    """Every text reads as typed inside `selector` (its rendered text, what a person sees), and nothing ran."""
    page.wait_for_function("([selector, texts]) => { const e = document.querySelector(selector);"
                           " return e && texts.every(t => e.innerText.includes(t)); }", arg=[selector, texts])
    assert page.evaluate("() => window.__xss") is None and page.dialogs == []


def test_names_and_captions_are_stored_verbatim_or_refused_by_the_slug_rule(lab):
    url, settings, _, image = lab
    admin = local_client(url, download_files=False)
    items = settings.data_dir / "items.csv"
    with items.open("w", newline="") as handle:
        csv.writer(handle).writerows([("caption", "negative_caption"), *[(text, text[::-1]) for text in INJECTIONS]])
    page = Page(url)
    for name in INJECTIONS:
        with pytest.raises(Exception, match="is not allowed: use 1-100 letters"):
            admin.predict(name, "file", 1, 0, str(items), "", "", 2, "third", 0.1, "", 50, 0, False, "toyworld",
                          api_name="/create_campaign")
        launch = page.handler("launch")
        outcome = Visitor(url).call(launch, page.arguments(launch, {"Run name": name}))
        assert "run name" in (outcome.error or "") and "is not allowed" in outcome.error
    admin.predict("verbatim", "file", 1, 0, str(items), "", "", 2, "third", 0, "", 50, 0, False, "toyworld",
                  api_name="/create_campaign")
    stored = db.rows(settings.db, "select i.caption, i.negative_caption from items i join campaigns c on "
                                  "c.id = i.campaign_id where c.name = 'verbatim' order by i.position")
    expected = [(campaigns.normalise_caption(t), campaigns.normalise_caption(t[::-1])) for t in INJECTIONS]
    assert [(row["caption"], row["negative_caption"]) for row in stored] == expected  # BiVLC's final period only
    for name in INJECTIONS:
        admin.predict("names", name, api_name="/start")
    assert {row["external_id"] for row in db.rows(settings.db, "select external_id from annotators")} == \
        set(INJECTIONS)
    *_, json_path = admin.predict(handle_file(str(image)), SQL, ["toyworld"], [], 0,
                                  "\n".join(f"- {text}" for text in INJECTIONS[1:]), api_name="/probe")[:5]
    rows = json.loads(open(json_path["path"]).read())["rows"]
    assert [row["text"] for row in rows] == INJECTIONS  # the download holds them as typed
    tables = db.rows(settings.db, "select name from sqlite_master where type = 'table'")
    assert {"answers", "annotators", "items"} <= {row["name"] for row in tables}


def test_every_view_shows_captions_names_and_job_text_as_typed(lab, page):
    """One page through every tab that shows such text (a page load costs seconds; each view is checked)."""
    _the_probe_table_shows_the_captions_as_typed(page, lab[3])
    _a_field_over_the_request_cap_gets_the_message(page, lab[3])
    _the_annotators_task_and_the_admins_views_show_names_and_captions_as_typed(page, lab[1])
    _the_run_list_and_status_show_a_jobs_message_and_error_as_typed(page)


def _the_probe_table_shows_the_captions_as_typed(page, image):
    page.locator("[data-testid=image] input[type=file]").set_input_files(str(image))
    page.get_by_label("Caption", exact=True).fill(SQL)
    page.get_by_text("Perturbations and extra captions").click()
    for box in page.locator("#probe-families input[type=checkbox]").all():
        if box.is_checked():
            box.uncheck()
    page.get_by_label("Extra captions", exact=False).fill("\n".join(f"- {text}" for text in INJECTIONS[1:]))
    page.get_by_role("button", name="Probe", exact=True).click()
    shown_literally(page, "#probe-table", [SQL, SCRIPT, IMAGE, "{{7*7}}"])


def _a_field_over_the_request_cap_gets_the_message(page, image):
    page.locator("[data-testid=image] input[type=file]").set_input_files(str(image))
    page.get_by_label("Caption", exact=True).fill("a" * 1_100_000)  # the cap is 1 MiB: just over it
    page.get_by_role("button", name="Probe", exact=True).click()
    page.get_by_text("Request too large: this app takes at most 1,048,576 bytes per request").first.wait_for()


def _the_annotators_task_and_the_admins_views_show_names_and_captions_as_typed(page, settings):
    page.get_by_role("tab", name="Annotate").click()
    page.locator("#annotate-campaign input").click()
    page.get_by_role("option", name="study", exact=True).click()
    page.locator(field("name")).fill(IMAGE)
    page.locator("#annotate-start").click()
    shown_literally(page, "#annotate-caption", [IMAGE])  # step 3 shows the negative caption
    assert db.rows(settings.db, "select n.external_id from annotators n join campaigns c on c.id = n.campaign_id "
                                "where c.name = 'study'") == [{"external_id": IMAGE}]

    page.get_by_role("tab", name="Campaigns").click()
    page.locator("#campaign-pick input").click()
    page.get_by_role("option", name="study", exact=True).click()
    shown_literally(page, "#campaign-status", [IMAGE])  # the annotators' table of the report
    page.get_by_role("tab", name="Items").click()
    page.locator("#campaign-items-table [role=gridcell]").first.click()
    shown_literally(page, "#campaign-item", [SCRIPT, IMAGE])
    shown_literally(page, "#campaign-items-table", [SCRIPT])


def _the_run_list_and_status_show_a_jobs_message_and_error_as_typed(page):
    page.get_by_role("tab", name="Train").click()
    shown_literally(page, "#train-runs", [SCRIPT])
    page.get_by_label("Run", exact=True).click()
    page.get_by_role("option", name="#1 injected (failed)").click()
    shown_literally(page, "#train-status", [IMAGE])


def test_a_reload_resumes_with_the_remembered_key_and_another_browser_needs_it(lab, tmp_path):
    """On a server others can reach, the key shown at the start is what continues the session: this browser
    remembers it (a reload fills the form in), another browser must type it."""
    settings = workspace_settings(tmp_path, GRADIO_SERVER_NAME="0.0.0.0")
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 2, CampaignConfig.from_dict({"gold_rate": 0}))
    with annotate_app(settings) as url, new_page(lab[2], WAIT_MS) as page, new_page(lab[2], WAIT_MS) as stranger:
        page.goto(url)
        remembered = page.evaluate(STORED)
        task = start(page, "alice")
        key = re.search(r"\w{4}-\w{4}-\w{4}", page.inner_text("#annotate-resume-note")).group(0)
        page.wait_for_function(f"(before) => ({STORED})() !== before", arg=remembered)  # written after the start
        page.reload()
        expect(page.locator(field("key"))).to_have_value(key)  # filled in from this browser's memory
        assert start(page, None) == task  # the held task, not a new one
        stranger.goto(url)
        stranger.locator(field("name")).fill("alice")
        stranger.locator("#annotate-start").click()
        stranger.get_by_text("'alice' has already started in this campaign").first.wait_for()
        assert start(stranger, "alice", key) == task


def start(page, name: str | None, key: str | None = None) -> str:
    """Start from the form (fields left as they are when None); returns the task's counter and caption."""
    if name is not None:
        page.locator(field("name")).fill(name)
    if key is not None:
        page.locator(field("key")).fill(key)
    page.locator("#annotate-start").click()
    page.locator("#annotate-counter strong").wait_for()
    return page.inner_text("#annotate-counter strong") + page.inner_text("#annotate-caption h3")


def field(name: str) -> str:
    """The text box of the annotation form's `name` field (Gradio draws a one-line Textbox as a textarea)."""
    return f"#annotate-{name} textarea, #annotate-{name} input"
