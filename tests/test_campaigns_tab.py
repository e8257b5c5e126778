"""The Campaigns tab through a real server on 127.0.0.1 (gradio_client) and in Debian's chromium.

An admin signs in with the password policy, as on a public deployment; an
anonymous caller is refused. Candidate images are drawn by the toy renderer
and stored with `campaigns.add_candidate`, answers come from the real
assignment code (`assign.join/next_task/submit`), as an annotator's would.

`SAVE_SCREENSHOT=1` also writes the tab with a campaign under way to docs/campaigns.png.
"""
import json
import re
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from backend.annotate import assign, assist, campaigns, db
from backend.core.store import Store
from backend.toyworld.campaign import toy_items
from backend.toyworld.grammar import parse
from backend.toyworld.negative_images import negative_scene, scene_for_caption
from backend.toyworld.oracle import evaluate
from backend.toyworld.render import render, to_pil
from tests.support import tiny_diffusion
from tests.support.admin import CREDENTIALS
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import choose, new_page, read_table, screenshot, sign_in_to_campaigns
from tests.support.clients import local_client
from tests.support.crashes import candidate_rows, kill_job, settled, wait_for_candidates
from tests.support.forms import create
from tests.support.waiting import wait_for



@pytest.fixture(scope="module")
def app(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("campaigns-tab")
    with running_app(workspace, ["toyworld"], workspace, **CREDENTIALS) as url:
        yield url, workspace_settings(workspace, **CREDENTIALS)


@pytest.fixture(scope="module")
def admin(app):
    url, _ = app
    client = local_client(url)
    status, *_ = client.predict("admin", "s3cret pass", api_name="/login")  # the status line first
    assert "Signed in as **admin** (admin)" in status
    return client


@pytest.fixture(scope="module")
def toy_model():
    from backend.models.loading import load_model
    return load_model("toyworld", device="cpu")


def existing(client, settings, name: str) -> None:
    """Create campaign `name` unless an earlier test of this process did (pytest-xdist may run them elsewhere)."""
    if name not in [row["name"] for row in campaigns.list_campaigns(settings.db)]:
        create(client, name)


def draw_candidates(settings, name: str, exact_slot: int = 1) -> None:
    """Four toy candidates per item (gold included): slot `exact_slot` shows the negative caption, the others
    show the original caption; `shows_caption` is the oracle's verdict, so toy truths are derived."""
    campaign = campaigns.get(settings.db, name)
    folder = campaigns.campaign_dir(settings.data_dir, name)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for request in campaigns.image_requests(settings.db, name, campaign["config"].images_per_item):
        positive, negative = parse(request.caption), parse(request.negative_caption)
        for slot in request.missing_slots:
            rng = np.random.default_rng([request.item_id, slot])
            scene = negative_scene(positive, negative, rng) if slot == exact_slot else \
                scene_for_caption(positive, rng)
            path = f"images/{request.item_id}-{slot}.png"
            to_pil(render(scene, 128)).save(folder / path)
            campaigns.add_candidate(settings.db, request.item_id, slot, {
                "path": path, "generator": "toyworld", "model": "test-renderer", "seed": slot,
                "defect": None if slot == exact_slot else "shows the original caption",
                "shows_caption": evaluate(negative, scene)})


def answer(settings, name: str, annotator: str, n_tasks: int, choose=lambda task: "2") -> None:
    """`n_tasks` answers from one local annotator through the real assignment code."""
    annotator_id = assign.join(settings.db, campaigns.get(settings.db, name)["id"], annotator)
    for _ in range(n_tasks):
        task = assign.next_task(settings.db, annotator_id)
        if task is None:
            return
        assign.submit(settings.db, annotator_id, task.assignment_id, choose(task) if task.task == "select" else "1",
                      now=time.time() + 3)


@pytest.mark.system
def test_an_anonymous_caller_is_refused_and_nothing_is_created(app):
    url, settings = app
    anonymous = local_client(url)
    with pytest.raises(Exception, match="Creating a campaign needs an admin; you are anonymous"):
        create(anonymous, "sneaky")
    with pytest.raises(Exception, match="needs an admin"):
        anonymous.predict(api_name="/backup_database")
    assert "sneaky" not in [row["name"] for row in campaigns.list_campaigns(settings.db)]


@pytest.mark.system
def test_create_shows_stage_counts_settings_and_the_study_link(admin, app):
    _, settings = app
    message, picked = create(admin, "pilot", human_baseline=True)
    assert "Created **pilot**: 6 items and 10 gold items" in message and picked["value"] == "pilot"
    status, settings_line, study, generating = admin.predict("pilot", api_name="/campaign_status")
    assert "**pilot**: items by stage: pending 6; gold items 10." in status
    # 6 items x 2 answers x 4 steps (the baseline's two included) = 48 answers, 45 regular tasks a session
    assert "Prolific places: **2** in all (48 answers" in status and "**2** still to fill" in status
    assert "human baseline on" in settings_line and "generator **toyworld**" in settings_line
    code = campaigns.get(settings.db, "pilot")["config"].completion_code
    assert ("/study?campaign=pilot&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
            "&SESSION_ID={{%SESSION_ID%}}`") in study and f"Completion code: **{code}**" in study
    assert study.startswith("**Study link**") and "http://127.0.0.1:" in study
    assert generating == ("Candidate images: **0 of 64** stored; 16 item(s) still waiting for theirs. "
                          "No generate job yet.")
    table = admin.predict("pilot", api_name="/campaign_items")
    assert [row[1] for row in table["data"]] == ["pending"] * 16
    assert [row[2] for row in table["data"]].count("gold") == 10


@pytest.mark.parametrize("overrides, message", [
    ({"name": "../escape"}, "campaign name '../escape' is not allowed"),
    ({"name": "pilot"}, "a campaign named 'pilot' exists already"),
    ({"name": "from-file", "source": "file", "path": "missing.csv"}, "campaign file .*missing.csv does not exist"),
    ({"name": "outside", "source": "file", "path": "/etc/passwd"}, "outside the allowed folders"),
    ({"name": "zero-overlap", "overlap": 0}, "Value 0 is less than minimum value 1"),
    ({"name": "no-seed", "seed": None}, "seed is empty"),
])
@pytest.mark.system
def test_a_bad_form_is_a_message_and_creates_nothing(admin, app, overrides, message):
    _, settings = app
    if overrides["name"] == "pilot":
        existing(admin, settings, "pilot")
    before = campaigns.list_campaigns(settings.db)
    with pytest.raises(Exception, match=message):
        create(admin, **{"name": "x", **overrides})
    assert campaigns.list_campaigns(settings.db) == before


@pytest.mark.system
def test_saved_instructions_are_what_annotators_get(admin, app):
    _, settings = app
    create(admin, "worded", n_items=2)
    texts = ["Pick the image that shows the sentence.", "Which image fits the original sentence?",
             "Which sentence describes the image?", "Which image fits the sentence?",
             "Is the second sentence false of the image?"]
    assert admin.predict("worded", *texts, api_name="/save_instructions") == "Saved the instructions of **worded**."
    assert campaigns.get(settings.db, "worded")["config"].instructions == dict(zip(campaigns.ALL_TASKS, texts))
    with pytest.raises(Exception, match="Instructions for i2t are empty"):
        admin.predict("worded", texts[0], texts[1], " ", *texts[3:], api_name="/save_instructions")
    assert campaigns.get(settings.db, "worded")["config"].instructions["i2t"] == texts[2]


@pytest.mark.system
def test_item_view_override_and_export(admin, app, toy_model):
    _, settings = app
    create(admin, "judged", n_items=4)
    with pytest.raises(Exception, match="nothing to export"):
        admin.predict("judged", "", "", True, api_name="/export_campaign")
    draw_candidates(settings, "judged", exact_slot=1)
    answer(settings, "judged", "ann-1", 3)
    assist.score_candidates(settings.db, "judged", campaigns.campaign_dir(settings.data_dir, "judged"), toy_model)
    picks = assist.picks(settings.db, "judged")
    first = campaigns.get(settings.db, "judged")["id"]
    item_id = db.rows(settings.db, "select min(id) as id from items where campaign_id = ? and gold = 0",
                      (first,))[0]["id"]

    text, original, gallery, candidates, answers = admin.predict("judged", item_id, api_name="/campaign_item")
    assert f"**Item {item_id}**: stage **generated**" in text and "Known answer: select 2" in text
    assert Path(original).is_file()
    assert [entry["caption"] for entry in gallery] == ["1 · flawed", "2 · exact", "3 · flawed", "4 · flawed"]
    assert "| 2 | yes |  | test-renderer |" in candidates and "| 1 | no | shows the original caption |" in candidates
    assert all(Path(entry["image"]).is_file() for entry in gallery)
    assert answers["headers"][:3] == ["annotator", "task", "choice"]
    assert "CLIP negative | CLIP original | model pick |" in candidates
    assert f"Model's pick: {picks[item_id]}" in text
    status, *_ = admin.predict("judged", api_name="/campaign_status")
    assert "**Model assistance** (toyworld; admins only): 14 item(s) scored, 14 with a known answer." in status

    with pytest.raises(Exception, match="'7' is not a select decision"):
        admin.predict("judged", item_id, "select", "7", api_name="/override_item")
    existing(admin, settings, "pilot")  # its items belong to another campaign (a worker may not have run its test)
    other = db.rows(settings.db, "select min(i.id) as id from items i join campaigns c on c.id = i.campaign_id "
                                 "where c.name = 'pilot'")[0]["id"]
    with pytest.raises(Exception, match=f"campaign 'judged' has no item {other}"):
        admin.predict("judged", other, "select", "2", api_name="/override_item")

    message = admin.predict("judged", item_id, "select", "2", api_name="/override_item")
    assert message == f"Item {item_id}: select set to **2** by admin; it is now **selected**."
    message = admin.predict("judged", item_id, "ambiguity", "original", api_name="/override_item")
    assert message.endswith("it is now **done**.")
    stored = db.rows(settings.db, "select stage, choice, source, actor from answers where item_id = ? and "
                                  "source = 'admin' order by id", (item_id,))
    assert stored == [{"stage": "select", "choice": "2", "source": "admin", "actor": "admin"},
                      {"stage": "ambiguity", "choice": "original", "source": "admin", "actor": "admin"}]
    table = admin.predict("judged", api_name="/campaign_items")
    row = next(row for row in table["data"] if row[0] == item_id)
    assert row[7] == picks[item_id]
    assert row[1] == "done" and row[6].startswith("select ") and row[6].endswith(
        "2 (admin); ambiguity original (admin)")  # the annotators' choices first, then the overrides

    result, answers_csv = admin.predict("judged", "", "", True, api_name="/export_campaign")
    assert result.startswith("Exported **1** rows to") and "raw answers" in result
    lines = Path(answers_csv).read_text().splitlines()
    assert lines[0].startswith("campaign,item_id,stage,annotator,choice") and len(lines) == 1 + 3 + 2


@pytest.mark.system
def test_the_database_backup_opens_and_holds_the_campaigns(admin, app):
    create(admin, "backed-up", n_items=2)
    path = admin.predict(api_name="/backup_database")
    assert Path(path).name.startswith("lab-backup-") and Path(path).suffix == ".db"
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute("select name from campaigns")]
        assert "backed-up" in names
        assert conn.execute("select count(*) from items i join campaigns c on c.id = i.campaign_id "
                            "where c.name = 'backed-up'").fetchone()[0] == 2 + 10


@pytest.mark.system
def test_generate_images_starts_the_job_and_its_progress_shows(admin, app):
    _, settings = app
    create(admin, "drawn", n_items=2)
    message, progress = admin.predict("drawn", "toyworld", "", api_name="/launch_generation")
    job_id = int(message.split("#")[1].rstrip("."))
    assert f"Generate job **#{job_id}**" in progress
    store = Store(settings.db)
    wait_for(lambda: store.get_job(job_id)["status"] in ("done", "failed"), 120, "the generate job to end")
    assert store.get_job(job_id)["status"] == "done", store.get_job(job_id).get("error")
    status, *_, generating = admin.predict("drawn", api_name="/campaign_status")
    assert "generated 2" in status and "**done**, 100%" in generating
    assert generating.startswith("Candidate images: **48 of 48** stored; 0 item(s) still waiting")


@pytest.mark.system
def test_generate_images_after_a_crash_continues_where_the_killed_job_stopped(admin, app):
    _, settings = app
    create(admin, "crashed", n_items=50)  # 60 items with the gold ones: 240 images, seconds of drawing
    message, _ = admin.predict("crashed", "toyworld", "", api_name="/launch_generation")
    job_id = int(message.split("#")[1].rstrip("."))
    store = Store(settings.db)
    wait_for_candidates(settings.db, "crashed", 20)
    kill_job(store, job_id)
    assert settled(store, job_id)["status"] == "failed"
    *_, generating = admin.predict("crashed", api_name="/campaign_status")
    assert (f"Generate job **#{job_id}** on `local`: **failed**" in generating and
            "killed by SIGKILL; it can be resumed without redrawing the images already stored: "
            f"`python -m backend jobs resume {job_id}`" in generating)
    before = candidate_rows(settings.db, "crashed")

    message, _ = admin.predict("crashed", "toyworld", "", api_name="/launch_generation")  # the button again
    job = settled(store, int(message.split("#")[1].rstrip(".")))
    assert job["status"] == "done" and job["result"]["images_skipped"] == len(before), job["error"]
    after = {row["id"]: row for row in candidate_rows(settings.db, "crashed")}
    assert [after[row["id"]] for row in before] == before and len(after) == 240  # what was stored stays as it was
    *_, generating = admin.predict("crashed", api_name="/campaign_status")
    assert generating.startswith("Candidate images: **240 of 240** stored; 0 item(s) still waiting")


@pytest.mark.system
@pytest.mark.browser
def test_an_admin_creates_a_campaign_in_the_browser_and_follows_it(app, toy_model, browser):
    url, settings = app
    with new_page(browser, 20_000) as page:
        page.goto(url)
        assert page.get_by_role("tab", name="Campaigns").count() == 0  # hidden before signing in
        page.get_by_text("Admin sign-in").click()
        page.get_by_label("Admin user").fill("admin")
        page.get_by_label("Password").fill("s3cret pass")
        page.locator("#sign-in").click()
        page.get_by_role("tab", name="Campaigns").click()
        page.locator("#campaign-name input, #campaign-name textarea").first.fill("browser-pilot")
        page.locator("#campaign-items input").fill("8")
        page.locator("#campaign-create").click()
        status = page.locator("#campaign-status")
        status.get_by_text("items by stage: pending 8; gold items 10.").wait_for()
        # The Progress view's timer may draw the status before the campaign's own redraw brings the study link.
        page.locator("#campaign-study-link").get_by_text("Study link").wait_for()
        page.get_by_role("tab", name="Instructions").click()
        editor = page.locator("#campaign-instructions-select textarea")
        # The campaign's instructions arrive by their own event: edit only once they are there.
        expect(editor).to_have_value(re.compile(r"^You will see a description and 4 images\."), timeout=20_000)
        editor.fill("An edit in progress, not saved yet.")

        draw_candidates(settings, "browser-pilot")
        assist.score_candidates(settings.db, "browser-pilot",
                                campaigns.campaign_dir(settings.data_dir, "browser-pilot"), toy_model)
        answer(settings, "browser-pilot", "alice", 6)
        answer(settings, "browser-pilot", "bob", 6, choose=lambda task: "none" if task.item_id % 3 else "2")
        page.get_by_role("tab", name="Progress").click()
        status.locator("td", has_text="alice").first.wait_for()  # the timer redraws the report once answers arrive
        assert "generated" in status.inner_text() and "Model assistance" in status.inner_text()
        page.get_by_role("tab", name="Instructions").click()
        expect(editor).to_have_value("An edit in progress, not saved yet.")  # the redraw left the editor alone
        page.get_by_role("tab", name="Items").click()
        page.locator("#campaign-items-table [role=gridcell]").first.click()
        page.locator("#campaign-candidates img").nth(3).wait_for()
        page.locator("#campaign-item").get_by_text("Original caption:").wait_for()
        rows, total = read_table(page, "campaign-items-table")
        assert total == 18 and rows[0]["stage"]["text"] in campaigns.STAGES
        screenshot(page, "campaigns-items.png")
        page.get_by_role("tab", name="Progress").click()
        screenshot(page, "campaigns.png")


@pytest.mark.system
@pytest.mark.browser
def test_an_admin_creates_a_validation_campaign_from_a_file_in_the_browser(app, browser):
    """Kind "validate" and a SugarCrepe file in the workspace: the campaign's tasks are open at once, its question's
    instructions are in the editor, and Generate images is refused with the reason."""
    url, settings = app
    images = settings.workspace / "validate-images"
    items = toy_items(3, 5, images)
    (settings.workspace / "swap_att.json").write_text(json.dumps({str(k): {
        "filename": item.image, "caption": item.caption, "negative_caption": item.negative_caption}
        for k, item in enumerate(items)}))
    with new_page(browser, 20_000) as page:
        sign_in_to_campaigns(page, url, "admin", "s3cret pass")
        page.get_by_label("validate generated negatives").check()
        page.get_by_label("file", exact=True).check()
        page.locator("#campaign-name input, #campaign-name textarea").first.fill("checked-negatives")
        page.locator("#campaign-file input, #campaign-file textarea").first.fill(str(settings.workspace /
                                                                                     "swap_att.json"))
        page.locator("#campaign-images input, #campaign-images textarea").first.fill(str(images))
        screenshot(page, "campaigns-validate.png")
        page.locator("#campaign-create").click()
        page.locator("#campaign-notice").get_by_text("Its tasks are open now").wait_for()
        page.locator("#campaign-status").get_by_text("items by stage: ready 3").wait_for()
        page.get_by_role("tab", name="Instructions").click()
        expect(page.locator("#campaign-instructions-validate textarea")).to_have_value(
            re.compile(r"decide whether it is \*\*false\*\* of the image"), timeout=20_000)
        page.locator("#campaign-generate").click()
        page.get_by_text("it has no image to generate").first.wait_for()
    assert campaigns.get(settings.db, "checked-negatives")["config"].kind == "validate"


@pytest.mark.system
@pytest.mark.browser
def test_an_admin_generates_a_campaigns_images_several_per_pipeline_call(app, browser):
    """A diffusion preset offers "Images per pipeline call" (the renderer's does not); 0 is refused with the reason
    and starts nothing; 4 starts a job that draws four images per call, each recording the batch it was drawn in."""
    url, settings = app
    model = tiny_diffusion.save_tiny_sdxl(settings.workspace / "models" / "tiny-sdxl-batched")
    store = Store(settings.db)
    with new_page(browser, 20_000) as page:
        sign_in_to_campaigns(page, url, "admin", "s3cret pass")
        page.locator("#campaign-name input, #campaign-name textarea").first.fill("batched")
        page.locator("#campaign-items input").fill("2")
        page.locator("#campaign-create").click()
        page.locator("#campaign-status").get_by_text("items by stage: pending 2").wait_for()
        batch = page.locator("#campaign-batch-size input")
        expect(batch).to_be_hidden()  # the toy renderer draws one image at a time
        choose(page, "Image generator", "custom")
        page.get_by_label("Model (custom)").fill(str(model))
        expect(batch).to_have_value("1", timeout=20_000)  # shown once the server answers the preset's change
        batch.fill("0")
        jobs_before = len(store.list_jobs(kind="generate", limit=None))
        page.locator("#campaign-generate").click()
        page.get_by_text("Value 0 is less than minimum value 1").first.wait_for()
        assert len(store.list_jobs(kind="generate", limit=None)) == jobs_before
        batch.fill("4")
        screenshot(page, "campaigns-batch.png")
        page.locator("#campaign-generate").click()
        notice = page.locator("#campaign-notice").get_by_text("Started generate job #")
        notice.wait_for()
        job_id = int(notice.inner_text().split("#")[1].rstrip("."))
    job = settled(store, job_id)
    assert job["status"] == "done" and job["args"]["batch_size"] == 4, job["error"]
    rows = db.rows(settings.db, "select c.batch, i.gold from candidates c join items i on i.id = c.item_id join "
                                "campaigns m on m.id = i.campaign_id where m.name = 'batched' order by c.id")
    drawn = [json.loads(row["batch"]) for row in rows if not row["gold"]]
    assert [(batch["index"], len(batch["seeds"])) for batch in drawn] == [(i, 4) for i in range(4)] * 2
    assert all(row["batch"] is None for row in rows if row["gold"]) and len(rows) == 4 * (2 + 10)
