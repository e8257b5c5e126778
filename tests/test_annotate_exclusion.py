"""Competence, exclusion and adjudication through the real store: a bad annotator is flagged, their answers set
aside, their items reopened and answered by someone else, the export leaves them out (the answers CSV marks
them), a restore brings them back; the adjudication queue lists a tie and an admin's override clears it."""
from __future__ import annotations

import csv
import json

import pytest

from backend.annotate import assign, competence, db, exclusion, report, service
from backend.annotate.campaigns import CampaignConfig
from backend.core.auth import Actor, PermissionDenied, cli_actor
from backend.core.store import Store
from tests.support.annotate_fixtures import answer_session, toy_campaign
from tests.support.appserver import workspace_settings

ADMIN = cli_actor()
GUEST = Actor("guest", "anonymous", "web")
LATE = ("late1", "late2", "late3")


def _stages(store, item_ids: list[int]) -> list[dict]:
    return [db.rows(store, "select id, stage from items where id = ?", (item_id,))[0] for item_id in item_ids]


@pytest.fixture()
def lab(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    config = CampaignConfig.from_dict({"overlap": 2, "resolution": "majority", "gold_rate": 0.25, "gold_items": 6,
                                       "tasks_per_session": 24, "min_gold": 3})
    campaign_id = toy_campaign(settings.db, settings.data_dir, "crowd", 10, config, seed=4)
    return settings, campaign_id


def test_a_bad_annotator_is_flagged_excluded_reopened_and_left_out_of_the_export(lab, tmp_path):
    settings, campaign_id = lab
    store = settings.db
    people = {name: assign.join(store, campaign_id, name) for name in ("good1", "bad", "good2", *LATE)}
    answer_session(store, people["bad"], good=False)
    answer_session(store, people["good1"], good=True)
    answer_session(store, people["good2"], good=True)

    state = competence.competence(store, "crowd")
    rows = {row["annotator"]: row for row in state["annotators"]}
    assert "gold" in rows["bad"]["flags"] and "competence" in rows["bad"]["flags"]
    assert rows["bad"]["competence"] < 0.3 < 0.8 < rows["good1"]["competence"]
    assert not rows["good1"]["flags"] and not rows["good2"]["flags"]

    with pytest.raises(PermissionDenied):
        exclusion.exclude(GUEST, store, "crowd")
    planned = exclusion.plan(ADMIN, store, "crowd")
    assert [p["annotator"] for p in planned] == ["bad"] and planned[0]["answers"] > 0
    bad_answers = planned[0]["answers"]
    stages_before = report.status(store, "crowd")["stages"]
    [made] = exclusion.exclude(ADMIN, store, "crowd")
    assert made["annotator"] == "bad" and made["answers"] >= bad_answers and made["reopened"]
    assert exclusion.exclude(ADMIN, store, "crowd") == []  # nothing flagged is left to exclude
    reopened = _stages(store, made["reopened"])
    assert all(row["stage"] in ("generated", "selected") for row in reopened)
    assert report.status(store, "crowd")["stages"] != stages_before
    # the annotator table still counts the excluded annotator's answers as theirs (their session stands)
    table = {row["annotator"]: row for row in report.status(store, "crowd")["annotators"]}
    assert table["bad"]["answered"] >= bad_answers

    # others answer the reopened items (new people: step 4 needs two who were not among its step-3 answerers)
    assert all(answer_session(store, people[name], good=True) > 0 for name in LATE)
    after = _stages(store, made["reopened"])
    assert all(row["stage"] not in ("generated", "selected") for row in after)
    bad_in_resolution = db.rows(store, "select count(*) n from answers where annotator_id = ? and source = "
                                       "'annotator'", (people["bad"],))[0]["n"]
    assert bad_in_resolution == 0

    result = service.export_campaign(ADMIN, "crowd", settings, str(tmp_path / "out"))
    with open(result["answers_csv"], newline="") as handle:
        written = list(csv.DictReader(handle))
    assert {row["source"] for row in written if row["annotator"] == "bad"} == {"excluded"}
    kept = {row.item_id for row in service.export_rows(store, "crowd", tmp_path)}
    for item_id in kept:  # every exported item was decided by answers still in resolution
        outcome = db.loads(db.rows(store, "select outcome from items where id = ?", (item_id,))[0]["outcome"], {})
        assert outcome["select"]["decision"] not in (None, "none")
    history = exclusion.history(store, "crowd")
    assert history[0]["actor"] == ADMIN.name and history[0]["reasons"] and history[0]["restored_at"] is None

    restored = exclusion.restore(ADMIN, store, "crowd", "bad")
    assert restored["answers"] >= bad_answers
    assert exclusion.history(store, "crowd")[0]["restored_by"] == ADMIN.name
    assert db.rows(store, "select count(*) n from answers where annotator_id = ? and source = 'excluded'",
                   (people["bad"],))[0]["n"] == 0
    with pytest.raises(ValueError, match="not excluded"):
        exclusion.restore(ADMIN, store, "crowd", "bad")


def test_an_excluded_annotators_later_answers_are_set_aside_and_their_session_completes(lab):
    settings, campaign_id = lab
    store = settings.db
    bad = assign.join(store, campaign_id, "bad")
    assert answer_session(store, bad, good=False, limit=3) == 3
    exclusion.exclude(ADMIN, store, "crowd", ["bad"])
    assert exclusion.history(store, "crowd")[0]["reasons"] == ["admin"]
    more = answer_session(store, bad, good=False)
    quota = db.rows(store, "select quota from annotators where id = ?", (bad,))[0]["quota"]
    assert 3 + more == quota  # the session contract holds: every answer counts for its author
    assert isinstance(assign.serve(store, bad), assign.Ended)
    assert db.rows(store, "select count(*) n from answers where annotator_id = ? and source = 'annotator'",
                   (bad,))[0]["n"] == 0
    with pytest.raises(ValueError, match="no annotator"):
        exclusion.plan(ADMIN, store, "crowd", ["nobody"])


def test_a_tie_reaches_the_adjudication_queue_and_an_override_clears_it(lab):
    settings, campaign_id = lab
    store = settings.db
    one, two = (assign.join(store, campaign_id, name) for name in ("one", "two"))
    answer_session(store, one, good=True)
    answer_session(store, two, good=False)  # every step-3 pair disagrees on image vs none: the majority rule drops it
    state = competence.competence(store, "crowd")
    tied = [entry for entry in state["queue"] if entry["task"] == "select" and entry["rule_tied"]]
    assert tied
    entry = tied[0]
    assert {a["annotator"] for a in entry["answers"]} == {"one", "two"}
    assert all(a["competence"] is not None for a in entry["answers"])
    from backend.annotate import resolution
    resolution.override(store, entry["item_id"], "select", "none", ADMIN.name)
    again = competence.competence(store, "crowd")
    assert (entry["item_id"], "select") not in {(e["item_id"], e["task"]) for e in again["queue"]}


def test_the_command_line_plans_excludes_restores_and_adjudicates(lab, capsys):
    from backend.cli import main

    settings, campaign_id = lab
    store = settings.db
    bad = assign.join(store, campaign_id, "bad")
    good = assign.join(store, campaign_id, "good")
    answer_session(store, bad, good=False)
    answer_session(store, good, good=True)
    base = ["campaign"]
    tail = ["--db", str(store)]
    assert main([*base, "competence", "crowd", *tail]) == 0
    printed = capsys.readouterr().out
    assert "bad" in printed and "GOLD" in printed and "adjudication queue:" in printed
    assert main([*base, "exclude", "crowd", "--json", *tail]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert [p["annotator"] for p in planned["plan (add --apply)"]] == ["bad"]
    assert main([*base, "exclude", "crowd", "--apply", "--json", *tail]) == 0
    applied = json.loads(capsys.readouterr().out)
    assert applied["applied"][0]["annotator"] == "bad" and applied["history"][0]["actor"] == ADMIN.name
    assert main([*base, "adjudicate", "crowd", "--json", *tail]) == 0
    queue = json.loads(capsys.readouterr().out)["queue"]
    assert main([*base, "adjudicate", "crowd", "--item", "999999", "--task", "select", "--decision", "1", *tail]) == 2
    assert "no item" in capsys.readouterr().err
    assert main([*base, "restore", "crowd", "bad", *tail]) == 0
    assert main([*base, "restore", "crowd", "bad", *tail]) == 2
    assert "not excluded" in capsys.readouterr().err
    assert isinstance(queue, list)
