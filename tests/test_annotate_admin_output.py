"""What annotators type reaches the admin's tools harmless, and a new campaign is joinable at once.

A campaign created while the app runs is joined by its typed name; an annotator named like a spreadsheet formula
answers it; the exported answers.csv (through the command line, as an admin runs it) holds that name as text, with
each answer's Prolific study and session and its gold flag; `campaign status` prints an escape sequence stored in
a name as visible text, never as the byte that would recolour the admin's terminal; `campaign intro` sets the
study link's first page.
"""
from __future__ import annotations

import csv
import json

import pytest

from backend.annotate import assign, campaigns, db
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.campaign_cli import cli
from tests.support.clients import local_client

pytestmark = pytest.mark.system

FORMULA = '=HYPERLINK("http://evil.example","click")'


def original_side(store, task) -> str:
    """A careful answer: step 4's side showing the original (the layout is keyed by the campaign's secret), else
    the second image."""
    if task.task != "ambiguity":
        return "2"
    layout = json.loads(db.rows(store, "select layout from assignments where id = ?", (task.assignment_id,))[0]["layout"])
    return "left" if layout["images"][0] == "original" else "right"


def test_a_new_campaign_is_joined_by_name_and_annotator_text_reaches_the_admin_harmless(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    with annotate_app(settings) as url:
        config = CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0.5, "gold_items": 2, "tasks_per_session": 4})
        campaign_id = toy_campaign(settings.db, settings.data_dir, "late", 3, config)  # after the server started
        client = local_client(url, download_files=False)
        shown = client.predict("late", FORMULA, api_name="/start")  # typed: not in the page's list when it was built
        for _ in range(4):
            shown = client.predict(task_token(shown), "1", api_name="/answer")
    prolific_id = assign.join(settings.db, campaign_id, "5f1a2b3c4d5e6f7a8b9c0d1e", "prolific", "STUDY9", "SESS9")
    theirs = 0  # a gold task sits somewhere in the session's first quarter: answer until a step-4 task is stored
    while not db.rows(settings.db, "select 1 from answers where annotator_id = ? and stage = 'ambiguity'",
                      (prolific_id,)):
        task = assign.next_task(settings.db, prolific_id)
        assign.submit(settings.db, prolific_id, task.assignment_id, original_side(settings.db, task))
        theirs += 1
    with db.write(settings.db) as conn:  # a name stored before names were cleaned: an escape sequence in it
        conn.execute("update annotators set external_id = ? where id = ?", ("old\x1b[2Jname", prolific_id))

    out = tmp_path / "export"
    cli(settings, "export", "late", "--out", str(out))
    with (out / "answers.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 + theirs
    mine = [row for row in rows if row["annotator"] == "'" + FORMULA]
    assert len(mine) == 4 and {row["study_id"] for row in mine} == {""}
    assert sorted(row["gold"] for row in mine) == ["false", "false", "true", "true"]  # gold every other task
    assert [(row["study_id"], row["session_id"]) for row in rows if row not in mine] == [("STUDY9", "SESS9")] * theirs

    status = cli(settings, "status", "late").stdout
    assert "\x1b" not in status and "old\\x1b\\[2Jname" in status  # visible, Markdown-escaped
    assert "\x1b" not in cli(settings, "status", "late", "--json").stdout
    intro = tmp_path / "intro.md"
    intro.write_text("## Our study\n\nTwelve pictures, about ten minutes.")
    assert "Twelve pictures" in cli(settings, "intro", "late", "--file", str(intro)).stdout
    assert campaigns.get(settings.db, "late")["config"].intro.startswith("## Our study")  # what /study shows
