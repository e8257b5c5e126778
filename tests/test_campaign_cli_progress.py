"""`python -m backend campaign status` says how many answers are still needed (text and --json), and `campaign
export NAME --zip PATH` leaves a zip holding what the export wrote, as an admin runs them in a shell."""
from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from backend.annotate import assign
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import answer, toy_campaign
from tests.support.appserver import workspace_settings
from tests.support.campaign_cli import cli

pytestmark = pytest.mark.system


def test_status_counts_answers_still_needed_and_export_zips_the_dataset_and_the_answers(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    config = CampaignConfig.from_dict({"overlap": 2, "gold_rate": 0.0, "tasks_per_session": 3})
    campaign_id = toy_campaign(settings.db, settings.data_dir, "shell", 3, config)
    state = json.loads(cli(settings, "status", "shell", "--json").stdout)
    assert state["remaining"]["total"] == {"target": 12, "answered": 0, "needed": 12, "in_progress": 0,
                                           "unclaimed": 12}
    ann = assign.join(settings.db, campaign_id, "ann")
    assert answer(settings.db, ann, 1) == 1  # 3 step-3 tasks reserved, one answered
    text = cli(settings, "status", "shell").stdout
    assert "**11 answers still needed** (2 of them reserved or held by participants now): select 5 of 6 (2 " \
           "reserved or held now), ambiguity 6 of 6." in text
    assert answer(settings.db, ann, 100) == 2  # the rest of their session
    for who in ("a", "b", "c", "d"):
        answer(settings.db, assign.join(settings.db, campaign_id, who), 100)
    after = json.loads(cli(settings, "status", "shell", "--json").stdout)["remaining"]
    assert after["total"]["in_progress"] == 0 and after["select"]["needed"] == 0

    target = tmp_path / "out" / "shell.zip"
    result = json.loads(cli(settings, "export", "shell", "--out", str(tmp_path / "export"), "--zip", str(target),
                            "--json").stdout)
    archive = zipfile.ZipFile(target)
    names = archive.namelist()
    assert result["zip"] == str(target) and result["zip_files"] == len(names)
    assert "answers.csv" in names and "dataset/state.json" in names and all(not n.startswith(".") for n in names)
    rows = list(csv.DictReader(io.StringIO(archive.read("answers.csv").decode())))
    assert len(rows) == result["answers"] == after["total"]["answered"]
    assert archive.getinfo("answers.csv").compress_type == zipfile.ZIP_DEFLATED
    assert {archive.getinfo(n).compress_type for n in names if n.endswith(".arrow")} == {zipfile.ZIP_STORED}
