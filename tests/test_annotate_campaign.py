"""Whole campaigns, as the issue's "done when" says: generate as a real job, simulated annotators through
gradio_client against the real app on 127.0.0.1 (a disagreement settled by a third annotator, a duplicate
submission, an abandoned task reclaimed), agreement computed, the ambiguity filter applied, the export read
back with `datasets`. Once on the built-in world, once on a tiny diffusers pipeline."""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import datasets
import pytest
from gradio_client import Client

from backend import jobs
from backend.annotate import assist, campaigns, db, report, service
from backend.core.auth import cli_actor
from backend.core.store import Store
from backend.toyworld.render import render, to_pil
from backend.toyworld.scene import sample_scene
from tests.support.appserver import running_app, wait_for, workspace_settings
from tests.support.tiny_diffusion import save_tiny_sdxl

ADMIN = cli_actor()
CONFIG = {"overlap": 2, "resolution": "third", "gold_rate": 0.2, "gold_items": 3, "tasks_per_session": 30,
          "reclaim_after_s": 1.5}


class Annotator:
    """A simulated annotator: a gradio_client session that answers from what the store says it was shown."""

    def __init__(self, url: str, campaign: str, name: str, db_path: Path):
        self.client, self.db, self.name = Client(url, verbose=False, download_files=False), db_path, name
        self.token = self._token(self.client.predict(campaign, name, api_name="/start"))

    @staticmethod
    def _token(outputs) -> str | None:
        """The hidden task token among the outputs (the only all-digit text); None when the session is over."""
        texts = [value for value in outputs if isinstance(value, str) and value.isdigit()]
        return texts[-1] if texts else None

    def task(self) -> dict:
        return db.rows(self.db, "select a.id, a.stage, a.layout, i.id item_id, i.truth from assignments a join items i "
                                "on i.id = a.item_id where a.id = ?", (int(self.token),))[0]

    def answer(self, value: str) -> None:
        self.token = self._token(self.client.predict(self.token, value, api_name="/answer"))

    def truthful(self) -> str:
        """What a careful annotator answers: the image the renderer says shows the caption (image 1 when nobody
        knows), and the original image's side in step 4."""
        task = self.task()
        if task["stage"] == "select":
            return (db.loads(task["truth"], {}).get("select") or ["1"])[0]
        return "left" if json.loads(task["layout"])["images"][0] == "original" else "right"

    def work(self, choose=None, limit: int = 100) -> int:
        done = 0
        while self.token and done < limit:
            self.answer((choose or (lambda annotator: annotator.truthful()))(self))
            done += 1
        return done


def diffusers_file(folder: Path) -> Path:
    """A BiVLC-format CSV whose original images are rendered scenes (the captions need not match them here)."""
    import numpy as np
    rows = []
    for k, (caption, negative) in enumerate([("A red circle left of a blue square.", "A blue circle left of a red square."),
                                             ("A big green triangle.", "A small green triangle."),
                                             ("A yellow cross above a red circle.", "A red circle above a yellow cross.")]):
        to_pil(render(sample_scene(np.random.default_rng(k), n_objects=2), 128)).save(folder / f"original{k}.png")
        rows.append({"image": f"original{k}.png", "caption": caption, "negative_caption": negative,
                     "type": "swap", "subtype": "att"})
    path = folder / "campaign.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def create(kind: str, settings, tmp_path: Path) -> dict:
    if kind == "toyworld":
        summary = service.create_campaign(ADMIN, "toy", "toyworld", settings, config=CONFIG, n_items=4, seed=3)
        generate = {"assist_model": "toyworld"}  # the admin's model assistance, scored by the job
    else:
        data = tmp_path / "source"
        data.mkdir()
        summary = service.create_campaign(ADMIN, "tiny", "file", settings, config={**CONFIG, "generator": "custom"},
                                          path=str(diffusers_file(data)), images_dir=str(data))
        generate = {"model": str(save_tiny_sdxl(tmp_path / "tiny-sdxl")), "steps": 2}
    store = Store(settings.db)
    job_id = service.launch_generation(ADMIN, summary["name"], settings, store, **generate)
    job = wait_for(lambda: store.get_job(job_id)["status"] in jobs.FINAL and store.get_job(job_id),
                   timeout=240, what="the generate job")
    assert job["status"] == "done", job.get("error")
    return summary


@pytest.mark.system
@pytest.mark.parametrize("kind", ["toyworld", "tiny-diffusers"])
def test_a_whole_campaign_from_generation_to_export(kind, tmp_path):
    settings = workspace_settings(tmp_path / "ws")
    summary = create(kind, settings, tmp_path)
    name = summary["name"]
    stages = report.status(settings.db, name)["stages"]
    assert stages == {"generated": summary["items"]}, "every item has its 4 candidates, each with its seed"
    seeds = db.rows(settings.db, "select seed, clip_negative from candidates")
    assert len({row["seed"] for row in seeds}) == len(seeds)
    if kind == "toyworld":
        assert all(row["clip_negative"] is not None for row in seeds)
        assert assist.report(settings.db, name)["items"] == summary["items"] + summary["gold_items"]

    with running_app(tmp_path, ["toyworld"], settings.workspace, db_path=settings.db) as url:
        alice = Annotator(url, name, "alice", settings.db)
        first = alice.task()
        alice.answer(alice.truthful())
        repeat = alice.client.predict(str(first["id"]), "none", api_name="/answer")  # a retry of the same task
        assert Annotator._token(repeat) == alice.token  # nothing recorded, the current task shown again
        assert len(db.rows(settings.db, "select id from answers where assignment_id = ?", (first["id"],))) == 1

        dave = Annotator(url, name, "dave", settings.db)  # takes a task and leaves
        abandoned = dave.task()["item_id"]
        time.sleep(CONFIG["reclaim_after_s"] + 0.2)

        bob = Annotator(url, name, "bob", settings.db)
        bob.work(lambda annotator: "none" if annotator.task()["stage"] == "select" else annotator.truthful())
        alice.work()
        carol = Annotator(url, name, "carol", settings.db)  # the third annotator ties are sent to
        carol.work()
        for again in ("alice", "bob"):  # back for step 4 of the items carol settled
            Annotator(url, name, again, settings.db).work()

    answered = {row["item_id"] for row in db.rows(settings.db, "select item_id from answers a join annotators n on "
                                                               "n.id = a.annotator_id where n.external_id != 'dave'")}
    assert abandoned in answered, "dave's abandoned task went to someone else"
    assert db.rows(settings.db, "select count(*) n from answers a join annotators n on n.id = a.annotator_id "
                                "where n.external_id = 'dave'")[0]["n"] == 0
    state = report.status(settings.db, name)
    assert "generated" not in state["stages"] and "selected" not in state["stages"], state["stages"]
    assert state["agreement"]["picked_or_none"]["pairs"], "kappa per annotator pair was computed"
    outcomes = [db.loads(row["outcome"]) for row in db.rows(settings.db, "select outcome from items where gold = 0")]
    assert any("ambiguity" in outcome for outcome in outcomes), "the ambiguity filter ran"
    assert any(outcome["select"].get("votes", {}).get("none") for outcome in outcomes), "bob disagreed"
    table = {row["annotator"]: row for row in state["annotators"]}
    assert table["alice"]["gold"] >= 1 and table["alice"]["gold_accuracy"] == 1.0

    exported = service.export_campaign(ADMIN, name, settings, out_dir=str(tmp_path / "export"))
    dataset = datasets.load_from_disk(exported["dataset"])
    assert dataset.column_names[:6] == ["image", "caption", "negative_caption", "negative_image", "type", "subtype"]
    assert len(dataset) == state["stages"].get("done", 0) == exported["rows"] > 0
    assert dataset[0]["negative_image"].size[0] > 0
    with open(exported["answers_csv"]) as handle:
        answers = list(csv.DictReader(handle))
    assert len(answers) == exported["answers"] == len(db.rows(settings.db, "select id from answers"))
    assert {row["annotator"] for row in answers} >= {"alice", "bob", "carol"}
    assert campaigns.get(settings.db, name)["config"].overlap == 2
