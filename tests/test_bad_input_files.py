"""Bad files through the real app (a Gradio server on 127.0.0.1, driven by gradio_client) and the command line:
damaged images and decompression bombs uploaded to the Probe or named by a campaign file, a 50 MB upload,
empty and 20,000-character captions, mis-encoded and malformed campaign files.

Each gets a message that names the file (and the line) and says why; nothing is
created (the campaigns table and the campaigns folder are as before), and the
server goes on serving: every refusal is followed by a probe that works.
"""
from __future__ import annotations

import re

import httpx
import pytest
from gradio_client import handle_file

from backend.annotate import campaigns
from backend.cli import main
from backend.core.limits import MAX_UPLOAD_BYTES
from backend.core.store import Store
from backend.perturb import perturb
from tests.support.appserver import running_app, workspace_settings
from tests.support.bad_files import BAD_IMAGES, good_image, malformed_record_files, write_bad_images, write_csv
from tests.support.browser import new_page, upload_image
from tests.support.clients import local_client
from tests.support.forms import form as train_form

LONG = "a brown dog on the green grass " * 646  # 20,026 characters
CAMPAIGN_ROW = {"image": "good.jpg", "caption": "a brown dog on the grass",
                "negative_caption": "a green dog on the brown grass", "type": "swap", "subtype": "att"}


@pytest.fixture(scope="module")
def app(tiny_checkpoints, tmp_path_factory):
    workspace = tmp_path_factory.mktemp("bad-input")
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec], workspace) as url:
        yield local_client(url), workspace_settings(workspace)


@pytest.fixture(scope="module")
def images(app):
    """The bad images and one good one, in the app's workspace (a folder campaign files may name)."""
    _, settings = app
    files = write_bad_images(settings.workspace / "images")
    files["good.jpg"] = good_image(settings.workspace / "images" / "good.jpg")
    return files


def probe(client, image, caption="a brown dog on the grass", extra="-a green dog on the brown grass", models=None):
    """/probe with no generated variants (only the extra caption): the input is what is under test."""
    return client.predict(handle_file(str(image)), caption, models, [], 0, extra, api_name="/probe")


def assert_still_serves(client, images, tiny_checkpoints):
    summary, table, *_ = probe(client, images["good.jpg"], models=[tiny_checkpoints.dir_spec])
    kinds = [dict(zip(table["headers"], row))["kind"] for row in table["data"]]
    assert kinds == ["original", "negative"] and "tiny-dir" in summary


@pytest.mark.system
@pytest.mark.parametrize("name", list(BAD_IMAGES))
def test_a_bad_image_uploaded_to_the_probe_is_named_and_the_next_probe_works(app, images, tiny_checkpoints, name):
    client, _ = app
    with pytest.raises(Exception, match=f"Could not read the image '{re.escape(name)}': {BAD_IMAGES[name][1]}"):
        probe(client, images[name], models=[tiny_checkpoints.dir_spec])
    assert_still_serves(client, images, tiny_checkpoints)


@pytest.mark.system
@pytest.mark.parametrize("name", ["truncated.jpg", "bomb.png", "large.png"])
def test_the_command_line_probe_names_a_bad_image_and_exits_2(images, tiny_checkpoints, capsys, name):
    assert main(["probe", "--image", str(images[name]), "--caption", "a dog", "--model", tiny_checkpoints.dir_spec,
                 "--families", "hard_positive"]) == 2
    message = capsys.readouterr().err
    assert re.search(f"error: Could not read the image '{re.escape(str(images[name]))}': {BAD_IMAGES[name][1]}",
                     message), message


def fifty_megabytes(path):
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    return path


@pytest.mark.system
def test_a_50_mb_upload_is_refused_with_the_limit_and_the_server_still_serves(app, images, tiny_checkpoints,
                                                                              tmp_path):
    client, _ = app
    huge = fifty_megabytes(tmp_path / "huge.png")
    with pytest.raises(ValueError, match=f"exceeds the maximum file size of {MAX_UPLOAD_BYTES} bytes"):
        probe(client, huge)  # gradio_client reads the server's limit from its config and does not even send it
    with huge.open("rb") as handle:  # what a browser or any other client gets from the server itself
        response = httpx.post(client.upload_url, files={"files": ("huge.png", handle)}, timeout=60)
    assert response.status_code == 413
    assert f"File size exceeded maximum allowed size of {MAX_UPLOAD_BYTES} bytes" in response.text
    assert_still_serves(client, images, tiny_checkpoints)


@pytest.mark.system
@pytest.mark.browser
def test_the_page_shows_the_upload_limit_and_a_bomb_refusal_then_takes_a_good_image(app, images, tmp_path, browser):
    client, _ = app
    huge = fifty_megabytes(tmp_path / "huge.png")
    with new_page(browser) as page:
        page.goto(client.src)
        bomb_message = f"Could not read the image 'bomb.png': {BAD_IMAGES['bomb.png'][1]}"
        for path, message in ((huge, 'File(s) exceed the maximum allowed size of 20.0 Mb: "huge.png"'),
                              (images["bomb.png"], bomb_message)):
            page.locator("[data-testid=image] input[type=file]").set_input_files(str(path))
            page.locator("[data-testid=toast-body].error").filter(has_text=message).first.wait_for()
        upload_image(page, images["good.jpg"])


@pytest.mark.parametrize("caption, extra, message", [
    ("   ", "", "The caption is empty"),
    (LONG, "", f"The caption has {len(LONG.strip()):,} characters; the limit is 1,000"),
    ("a brown dog on the grass", "-" + LONG, f"The caption has {len(LONG.strip()):,} characters; the limit is 1,000"),
])
@pytest.mark.system
def test_empty_and_20000_character_captions_are_refused_with_the_limit(app, images, tiny_checkpoints, capsys,
                                                                       caption, extra, message):
    client, _ = app
    with pytest.raises(Exception, match=message):
        probe(client, images["good.jpg"], caption=caption, extra=extra, models=[tiny_checkpoints.dir_spec])
    assert_still_serves(client, images, tiny_checkpoints)
    assert main(["probe", "--image", str(images["good.jpg"]), "--caption", caption, f"--extra={extra}",
                 "--model", tiny_checkpoints.dir_spec, "--families", "hard_positive"]) == 2
    assert message in capsys.readouterr().err


def test_the_perturbation_engine_refuses_20000_characters_up_front():
    """Its parse grows faster than linearly (bench/bad_input.py times it): it must refuse, not work for minutes."""
    with pytest.raises(ValueError, match=f"The caption has {len(LONG):,} characters; the limit is 1,000"):
        perturb(LONG)


def create_from_file(client, name, path, images_dir=""):
    """/create_campaign from a file, the form's other values at their defaults."""
    return client.predict(name, "file", 6, 0, str(path), str(images_dir), "", 2, "third", 0.1, "", 50, 0,
                          False, "toyworld", api_name="/create_campaign")


def assert_nothing_created(settings, name, before):
    assert campaigns.list_campaigns(settings.db) == before
    assert not campaigns.campaign_dir(settings.data_dir, name).exists()


@pytest.mark.system
def test_malformed_campaign_files_are_named_with_their_line_and_create_nothing(app, images, tmp_path):
    client, settings = app
    before = campaigns.list_campaigns(settings.db)
    for number, (path, message) in enumerate(malformed_record_files(settings.workspace / "malformed", CAMPAIGN_ROW)):
        with pytest.raises(Exception, match=f"campaign file {message}"):
            create_from_file(client, f"malformed-{number}", path, images["good.jpg"].parent)
        assert_nothing_created(settings, f"malformed-{number}", before)


@pytest.mark.parametrize("field, text, message", [
    ("caption", "  ", "line 3: caption is empty"),
    ("negative_caption", LONG, f"line 3: negative_caption has {len(LONG.strip()):,} characters; the limit is 1,000"),
])
@pytest.mark.system
def test_empty_and_20000_character_captions_in_a_campaign_file_are_refused(app, images, field, text, message):
    client, settings = app
    before = campaigns.list_campaigns(settings.db)
    path = write_csv(settings.workspace / f"{field}.csv", [CAMPAIGN_ROW, {**CAMPAIGN_ROW, field: text}])
    with pytest.raises(Exception, match=f"campaign file {field}.csv, {message}"):
        create_from_file(client, f"bad-{field}", path, images["good.jpg"].parent)
    assert_nothing_created(settings, f"bad-{field}", before)


@pytest.mark.system
def test_a_campaign_whose_images_are_damaged_missing_or_bombs_names_each_and_creates_nothing(app, images):
    client, settings = app
    before = campaigns.list_campaigns(settings.db)
    named = ["gone.jpg", *BAD_IMAGES, "good.jpg"]
    path = write_csv(settings.workspace / "bad-images.csv", [{**CAMPAIGN_ROW, "image": name} for name in named])
    with pytest.raises(Exception) as error:
        create_from_file(client, "bad-images", path, images["good.jpg"].parent)
    message = str(error.value)
    assert f"{len(BAD_IMAGES) + 1} image(s) the items name cannot be used" in message
    assert f"{images['good.jpg'].parent / 'gone.jpg'}: the file does not exist" in message
    for name in list(BAD_IMAGES)[:4]:  # the message lists the first five: gone.jpg and these
        assert re.search(f"{re.escape(str(images[name]))}: {BAD_IMAGES[name][1]}", message), message
    assert "and 2 more. Fix or remove them: nothing was created" in message
    assert_nothing_created(settings, "bad-images", before)


@pytest.mark.system
def test_the_command_line_names_a_bad_campaign_file_and_creates_nothing(app, images, monkeypatch, capsys):
    _, settings = app
    monkeypatch.setenv("COMPLAB_WORKSPACE", str(settings.workspace))
    before = campaigns.list_campaigns(settings.db)
    latin1, message = malformed_record_files(settings.workspace / "for-cli", CAMPAIGN_ROW)[0]
    bomb = write_csv(settings.workspace / "bomb.csv", [{**CAMPAIGN_ROW, "image": "bomb.png"}])
    for path, expected in ((latin1, message), (bomb, f"bomb.png: {BAD_IMAGES['bomb.png'][1]}")):
        assert main(["campaign", "create", "cli-bad", "--source", "file", "--file", str(path),
                     "--images", str(images["good.jpg"].parent), "--db", str(settings.db)]) == 2
        assert re.search(f"error: .*{expected}", capsys.readouterr().err)
        assert_nothing_created(settings, "cli-bad", before)


@pytest.mark.system
def test_a_utf16_campaign_file_from_a_spreadsheet_is_read_as_written(app, images):
    """A byte-order mark says how the text is encoded: such a file is not bad input, it is followed."""
    client, settings = app
    row = {**CAMPAIGN_ROW, "caption": "a brown dog on the grass near the café"}
    path = write_csv(settings.workspace / "utf16.csv", [row], encoding="utf-16")
    message, _ = create_from_file(client, "from-utf16", path, images["good.jpg"].parent)
    assert "Created **from-utf16**: 1 items" in message
    campaign_id = campaigns.get(settings.db, "from-utf16")["id"]
    item = campaigns.db.rows(settings.db, "select caption, image from items where campaign_id = ? and gold = 0",
                             (campaign_id,))[0]
    assert item == {"caption": "A brown dog on the grass near the café.", "image": str(images["good.jpg"])}


@pytest.mark.system
def test_the_train_tab_refuses_a_malformed_manifest_and_creates_no_job(app):
    client, settings = app
    before = Store(settings.db).list_jobs()
    cases = malformed_record_files(settings.workspace / "manifests", {"image": "good.jpg", "caption": "a brown dog"})
    for path, message in cases:
        with pytest.raises(Exception, match=f"Invalid training config: Manifest {message}"):
            client.predict(*train_form(data="manifest", manifest=str(path)), api_name="/launch")
    assert Store(settings.db).list_jobs() == before
