"""An admin watches a campaign fill up without touching anything, then takes the dataset home as a zip.

Debian's chromium against a real server on 127.0.0.1: the admin signs in, opens the Campaigns tab and picks a
campaign (the list arrives with the tab's own refresh), and reads how many answers are still needed; a
participant (through the real assignment code, as the study page calls it) reserves and answers tasks, and the
number on the admin's screen goes down by itself, to zero. The admin then exports and downloads the zip from the
Export view; the test opens it: the dataset folder `datasets.load_from_disk` reads, and answers.csv with one row
per answer. An anonymous caller of the zip endpoint gets nothing. `SAVE_SCREENSHOT=1` writes the two views to
docs/campaigns-progress.png and docs/campaigns-export.png.
"""
from __future__ import annotations

import csv
import io
import re
import zipfile

import pytest
from playwright.sync_api import expect

from backend.annotate import assign, campaigns, db
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.admin import CREDENTIALS
from tests.support.annotate_fixtures import answer, toy_campaign
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import new_page, screenshot, sign_in
from tests.support.clients import local_client

pytestmark = [pytest.mark.system, pytest.mark.browser]



def test_the_admin_sees_answers_still_needed_fall_by_themselves_and_downloads_the_zip(tmp_path, browser):
    settings = workspace_settings(tmp_path, **CREDENTIALS)
    Store(settings.db)
    with running_app(tmp_path, ["toyworld"], tmp_path, **CREDENTIALS) as url, new_page(browser, 30_000) as page:
        config = CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0.0, "tasks_per_session": 20})
        campaign_id = toy_campaign(settings.db, settings.data_dir, "live", 4, config)  # after the server started
        page.goto(url)
        sign_in(page, "admin", "s3cret pass")
        page.get_by_role("tab", name="Campaigns").click()
        page.locator("#campaign-pick input").click()
        page.get_by_role("option", name="live").click()  # listed by the tab's refresh, not by a reload
        status = page.locator("#campaign-status")
        expect(status).to_contain_text("8 answers still needed (0 of them reserved or held by participants now): "
                                       "select 4 of 4, ambiguity 4 of 4.")

        participant = assign.join(settings.db, campaign_id, "5f1a2b3c4d5e6f7a8b9c0d1e", "prolific", "S1", "X1")
        assert answer(settings.db, participant, 1) == 1  # the session reserved every open task, answered one
        expect(status).to_contain_text(re.compile(r"7 answers still needed \(3 of them reserved or held"))
        assert answer(settings.db, participant, 100) == 3  # their session: the 4 step-3 tasks open when it began
        expect(status).to_contain_text("4 answers still needed (0 of them reserved or held by participants now): "
                                       "select 0 of 4, ambiguity 4 of 4.")
        second = assign.join(settings.db, campaign_id, "6a1a2b3c4d5e6f7a8b9c0d1e", "prolific", "S1", "X2")
        assert answer(settings.db, second, 100) == 4
        expect(status).to_contain_text("0 answers still needed")
        screenshot(page, "campaigns-progress.png")

        page.get_by_role("tab", name="Export").click()
        page.locator("#campaign-export-zip").click()
        expect(page.locator("#campaign-export")).to_contain_text("Zipped")
        with page.expect_download() as download:
            page.locator("#campaign-export-zip-file a").first.click()
        archive = zipfile.ZipFile(download.value.path())
        names = set(archive.namelist())
        assert {"answers.csv", "dataset/dataset_info.json", "dataset/state.json"} <= names
        assert any(re.fullmatch(r"dataset/data-\d+-of-\d+\.arrow", name) for name in names)
        rows = list(csv.DictReader(io.StringIO(archive.read("answers.csv").decode())))
        stored = db.rows(settings.db, "select count(*) as n from answers where campaign_id = ?", (campaign_id,))
        assert len(rows) == stored[0]["n"] >= 4 and {row["study_id"] for row in rows} == {"S1"}
        shown = re.search(r"Exported \*?\*?(\d+)", page.locator("#campaign-export").inner_text())
        archive.extractall(tmp_path / "unzipped")
        import datasets
        dataset = datasets.load_from_disk(str(tmp_path / "unzipped" / "dataset"))
        assert shown is not None and len(dataset) == int(shown.group(1)) > 0
        assert dataset[0]["negative_image"].size[0] > 0  # the images travel inside the zip
        screenshot(page, "campaigns-export.png")
        assert not list(settings.downloads_dir.glob(".zip-*"))  # the zip's temporary folder is gone

        with pytest.raises(Exception, match="admin"):
            local_client(url, download_files=False).predict("live", "", api_name="/export_zip")
        assert campaigns.get(settings.db, "live")["id"] == campaign_id
