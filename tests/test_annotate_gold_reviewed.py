"""Gold items that look like the campaign's own: the items of an earlier campaign whose step 3 an admin decided,
their files copied, their answer key the admin's decision (`backend.annotate.gold_reviewed`)."""
from __future__ import annotations

import io
import json

import pytest

from backend.annotate import assign, campaigns, db, resolution, service
from backend.cli import main
from backend.core.auth import cli_actor
from backend.core.settings import Settings
from backend.core.store import Store
from backend.generate.job import GenerateConfig, run_job
from backend.jobs.reporter import Reporter
from tests.support.appserver import workspace_settings

ADMIN = cli_actor()
DECISIONS = ("2", "none", "1")  # what the admin decided for three items of the earlier campaign
LATER = {"gold_from": "earlier", "gold_items": 3, "gold_rate": 0.25, "tasks_per_session": 8, "overlap": 1}


def draw(settings: Settings, name: str) -> None:
    run_job(GenerateConfig.from_dict({"campaign": name, "preset": "toyworld", "db": str(settings.db),
                                      "data_dir": str(settings.data_dir)}), Reporter(out=io.StringIO()))


@pytest.fixture
def reviewed(tmp_path) -> tuple[Settings, dict[str, str]]:
    """A workspace with campaign "earlier" (no gold) drawn, three of its items decided by the admin: caption ->
    decision."""
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    service.create_campaign(ADMIN, "earlier", "toyworld", settings, config={"gold_rate": 0}, n_items=6, seed=1)
    draw(settings, "earlier")
    items = db.rows(settings.db, "select id, caption from items order by id")
    for item, decision in zip(items, DECISIONS):
        resolution.override(settings.db, item["id"], "select", decision, "admin")
    return settings, {item["caption"]: decision for item, decision in zip(items, DECISIONS)}


def test_a_campaigns_gold_items_are_the_admin_decided_items_of_an_earlier_one(reviewed):
    settings, decided = reviewed
    summary = service.create_campaign(ADMIN, "later", "toyworld", settings, config=LATER, n_items=4, seed=2)
    assert summary["gold_items"] == 3
    later_id = campaigns.get(settings.db, "later")["id"]
    gold = db.rows(settings.db, "select * from items where campaign_id = ? and gold = 1", (later_id,))
    assert {item["caption"]: json.loads(item["truth"])["select"] for item in gold} == \
        {caption: [decision] for caption, decision in decided.items()}
    assert {item["stage"] for item in gold} == {"generated"}  # ready for step 3 before any generation
    folder = campaigns.campaign_dir(settings.data_dir, "later")
    for item in gold:
        assert (folder / item["image"]).is_file()
        records = campaigns.candidates(settings.db, item["id"])
        assert len(records) == 4 and all((folder / r["path"]).is_file() and (folder / r["display_path"]).is_file()
                                         for r in records)
    owed = campaigns.image_requests(settings.db, "later", 4)
    assert owed and not any(request.gold for request in owed)  # generation owes the campaign's own items only


def test_an_annotator_is_scored_on_reviewed_gold_against_the_admins_decision(reviewed):
    settings, decided = reviewed
    service.create_campaign(ADMIN, "later", "toyworld", settings, config=LATER, n_items=4, seed=2)
    draw(settings, "later")
    annotator = assign.join(settings.db, campaigns.get(settings.db, "later")["id"], "p1")
    gold_answers = []
    while isinstance(task := assign.serve(settings.db, annotator), assign.Task):
        item = db.rows(settings.db, "select gold, caption from items where id = ?", (task.item_id,))[0]
        answer = decided[item["caption"]] if item["gold"] else "1"
        assert assign.submit(settings.db, annotator, task.assignment_id, answer).recorded
        gold_answers += [item["caption"]] if item["gold"] else []
    assert gold_answers  # the session met reviewed gold, and every answer equal to the admin's is right
    scored = db.rows(settings.db, "select a.correct from answers a join items i on i.id = a.item_id where "
                                  "i.gold = 1 and a.annotator_id = ?", (annotator,))
    assert [row["correct"] for row in scored] == [1] * len(gold_answers)


def test_too_few_reviewed_items_or_an_unknown_campaign_is_a_message_and_nothing_is_created(reviewed):
    settings, _ = reviewed
    with pytest.raises(ValueError, match=r"'earlier' has 3 items whose step 3 an admin decided .* needs 5 gold"):
        service.create_campaign(ADMIN, "later", "toyworld", settings, config={**LATER, "gold_items": 5})
    with pytest.raises(ValueError, match="no campaign named 'nowhere'"):
        service.create_campaign(ADMIN, "later", "toyworld", settings, config={**LATER, "gold_from": "nowhere"})
    assert [c["name"] for c in campaigns.list_campaigns(settings.db)] == ["earlier"]


def test_the_cli_creates_a_campaign_with_reviewed_gold(reviewed, monkeypatch):
    settings, decided = reviewed
    monkeypatch.setenv("COMPLAB_WORKSPACE", str(settings.workspace))
    assert main(["campaign", "create", "later", "--items", "2", "--gold-from", "earlier", "--gold-rate", "0.25",
                 "--tasks-per-session", "8", "--config", '{"gold_items": 3}', "--db", str(settings.db)]) == 0
    gold = db.rows(settings.db, "select caption from items i join campaigns c on c.id = i.campaign_id where "
                                "c.name = 'later' and i.gold = 1")
    assert {row["caption"] for row in gold} == set(decided)
