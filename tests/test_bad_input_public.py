"""Bad data that used to pass, tried against a real server: 16-bit images, invisible and control characters in
captions and names, look-alike forms, and campaign files too large to import without stalling the crowd."""
from __future__ import annotations

import re
import sqlite3
import threading

import numpy as np
import pytest
from gradio_client import Client, handle_file
from PIL import Image

from backend.annotate.campaigns import CampaignConfig
from backend.benchmarks.task import load_image
from backend.core.limits import MAX_CAMPAIGN_ITEMS
from backend.core.store import Store
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.clients import local_client
from tests.support.admin import ADMIN_LOGIN
from tests.support.public_support import public_app
from tests.support.security_support import Page, Visitor

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The password-policy app with a toy campaign; an admin signed in (no visitor's probe allowance in the way)."""
    workspace = tmp_path_factory.mktemp("bad-input")
    settings = workspace_settings(workspace)
    toy_campaign(Store(settings.db).path, settings.data_dir, "study", 2, CampaignConfig.from_dict({"gold_rate": 0}))
    with public_app(workspace, **ADMIN_LOGIN) as (url, ctx):
        admin = local_client(url, download_files=False)
        admin.predict("admin", "s3cret pass", api_name="/login")
        yield url, ctx, admin, workspace


def scores(client: Client, image, caption: str = "a red circle above a blue square") -> list[list]:
    _, table, *_ = client.predict(handle_file(str(image)), caption, ["toyworld"], ["replace"], 0, "", False,
                                  api_name="/probe")
    return table["data"]


def test_a_16_bit_grey_photo_scores_as_its_8_bit_self_not_as_a_white_image(lab, tmp_path):
    _, _, admin, _ = lab
    grey = np.add.outer(np.arange(96), np.arange(96)) * 65535 // 190  # a diagonal ramp, dark to light
    Image.fromarray(grey.astype(np.uint16)).save(tmp_path / "grey16.png")
    Image.fromarray(np.rint(grey / 257).astype(np.uint8)).save(tmp_path / "grey8.png")
    Image.new("RGB", (96, 96), (255, 255, 255)).save(tmp_path / "white.png")
    assert Image.open(tmp_path / "grey16.png").mode == "I;16"
    sixteen = scores(admin, tmp_path / "grey16.png")
    assert sixteen == scores(admin, tmp_path / "grey8.png")
    assert sixteen != scores(admin, tmp_path / "white.png")  # what it scored as before
    assert np.array_equal(np.asarray(load_image(Image.open(tmp_path / "grey16.png"))),  # benchmarks' loader
                          np.asarray(load_image(Image.open(tmp_path / "grey8.png"))))


def test_a_caption_of_invisible_characters_is_refused_and_look_alikes_are_read_as_plain_text(lab, tmp_path):
    _, _, admin, _ = lab
    Image.new("RGB", (48, 48), (200, 30, 30)).save(tmp_path / "red.png")
    for caption, message in (("\u200b\u200b\u200b", "U+200B ZERO WIDTH SPACE"),
                             ("a red\u202e square", "U+202E RIGHT-TO-LEFT OVERRIDE"),
                             ("a red\x1b[31m square", "U+001B")):
        with pytest.raises(Exception, match=f"The caption contains an? [a-z ]+ character \\({re.escape(message)}"):
            scores(admin, tmp_path / "red.png", caption)
    rows = scores(admin, tmp_path / "red.png", "ａ ｒｅｄ\u00a0square")
    assert rows[0][1] == "a red square"  # the original, as it was scored


def test_an_annotator_name_with_control_or_invisible_characters_is_refused(lab):
    url, ctx, _, _ = lab
    client = local_client(url, download_files=False)
    for name in ("ann\u202eeic", "ann\x00", "\u200b"):
        with pytest.raises(Exception, match=r"the name contains an? [a-z ]+ character \(U\+"):
            client.predict("study", name, api_name="/start")
    assert sqlite3.connect(ctx.store.path).execute("select count(*) from annotators").fetchone() == (0,)
    token = task_token(client.predict("study", "Ａｎｎ", api_name="/start"))  # full-width: the plain name
    assert token and sqlite3.connect(ctx.store.path).execute("select external_id from annotators").fetchall() == \
        [("Ann",)]


def create(url: str, admin: Client, name: str, path) -> str | None:
    """The Campaigns tab's Create, as the admin's page calls it; None when created, else the message."""
    page = Page(url)
    handler = page.handler("create_campaign")
    values = {"Name": name, "Items from": "file", "File": str(path), "Gold rate": 0}
    outcome = Visitor(url, admin.session_hash).call(handler, page.arguments(handler, values))
    return outcome.error


def campaign_rows(ctx, name: str) -> tuple[int, int]:
    with sqlite3.connect(ctx.store.path) as conn:
        found = conn.execute("select id from campaigns where name = ?", (name,)).fetchone()
        items = conn.execute("select count(*) from items where campaign_id = ?", (found[0],)).fetchone()[0] \
            if found else 0
    return (1 if found else 0), items


def test_campaign_files_with_invisible_characters_or_too_many_rows_are_refused_whole(lab):
    url, ctx, admin, workspace = lab
    data = ctx.settings.data_dir
    (data / "zw.csv").write_text("caption,negative_caption\na dog,a cat\n\u200b,a cow\n")
    assert "zw.csv, line 3: caption contains an invisible formatting character (U+200B ZERO WIDTH SPACE)" in \
        create(url, admin, "zw", data / "zw.csv")
    (data / "huge.csv").write_text("caption,negative_caption\n" + "a dog,a cat\n" * (MAX_CAMPAIGN_ITEMS + 1))
    assert f"holds more than {MAX_CAMPAIGN_ITEMS:,} records; the limit is {MAX_CAMPAIGN_ITEMS:,}" in \
        create(url, admin, "huge", data / "huge.csv")
    assert campaign_rows(ctx, "zw") == campaign_rows(ctx, "huge") == (0, 0)


def test_a_campaign_at_the_cap_is_imported_in_batches_while_the_crowd_answers(lab):
    """The store's write lock is free between batches: another connection sees the items arrive in steps, and an
    annotator's answer goes through while the import runs."""
    url, ctx, admin, _ = lab
    data = ctx.settings.data_dir
    (data / "cap.csv").write_text("caption,negative_caption\n" + "".join(
        f"a dog number {k},a cat number {k}\n" for k in range(MAX_CAMPAIGN_ITEMS)))
    seen, answers, done = set(), [], threading.Event()
    annotator = local_client(url, download_files=False)
    token = task_token(annotator.predict("study", "crowd", api_name="/start"))

    def watch():
        while not done.is_set():
            seen.add(campaign_rows(ctx, "cap")[1])
            if 0 < max(seen) < MAX_CAMPAIGN_ITEMS and not answers:
                answers.append(annotator.predict(token, "1", api_name="/answer"))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        assert create(url, admin, "cap", data / "cap.csv") is None
    finally:
        done.set()
        watcher.join()
    assert campaign_rows(ctx, "cap") == (1, MAX_CAMPAIGN_ITEMS)
    assert any(0 < count < MAX_CAMPAIGN_ITEMS for count in seen), sorted(seen)  # committed batch by batch
    assert answers and task_token(answers[0]) != token  # the crowd was answered mid-import
    with sqlite3.connect(ctx.store.path) as conn:
        assert conn.execute("select source from campaigns where name = 'cap'").fetchone() == ("file",)
