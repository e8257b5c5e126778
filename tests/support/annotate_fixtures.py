"""A toy annotation campaign with real candidate images, for the annotation page's tests and benchmark.

The candidates come from the real `generate` job with the built-in world's
renderer (`backend.toyworld.candidates`): no download, no GPU, a few milliseconds an
image, and the oracle knows what each shows. Its plan gives some items one
exact slot and some none, so step 3 answers disagree, some items reach step 4
and others are dropped, as in a real campaign. Annotators answer from that truth
(`answer_session`, or `answer` as a careful participant).
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from backend.annotate import assign, campaigns, db
from backend.generate.job import GenerateConfig, run_job
from backend.jobs.reporter import Reporter
from backend.toyworld.campaign import toy_items


def toy_campaign(store_path: Path | str, data_dir: Path, name: str, items: int,
                 config: campaigns.CampaignConfig, seed: int = 0) -> int:
    """Create campaign `name` with `items` toy items plus its gold items, every candidate drawn; returns its id.

    The store at `store_path` must exist (`backend.core.store.Store` runs the migrations)."""
    folder = campaigns.campaign_dir(data_dir, name)
    specs = toy_items(items, seed, folder)
    specs += toy_items(campaigns.gold_count(config), seed, folder, gold=True)
    campaign_id = campaigns.create(store_path, name, specs, config, "toyworld")
    job = GenerateConfig.from_dict({"campaign": name, "preset": "toyworld", "db": str(store_path),
                                    "data_dir": str(data_dir), "seed": seed})
    run_job(job, Reporter(out=io.StringIO()))  # the job's log is not the caller's output
    return campaign_id


def task_token(outputs) -> str:
    """The task token (assignment id) among the outputs of /start or /answer: the last all-digit string."""
    return [value for value in outputs if isinstance(value, str) and value.isdigit()][-1]


def answer_session(store_path: Path | str, annotator_id: int, good: bool, limit: int = 100) -> int:
    """Answer the annotator's session through `assign.serve/submit`: the renderer's truth (good), or always the
    wrong side of it (bad: "none" where an image shows the caption, the negative where the original is meant).
    Returns how many answers were stored."""
    done = 0
    while done < limit:
        task = assign.serve(store_path, annotator_id)
        if not isinstance(task, assign.Task):
            return done
        row = db.rows(store_path, "select a.layout, i.truth from assignments a join items i on i.id = a.item_id "
                                  "where a.id = ?", (task.assignment_id,))[0]
        truth = db.loads(row["truth"], {})
        if task.task == "select":
            right = truth.get("select") or ["1"]
            value = right[0] if good else ("none" if right != ["none"] else "1")
        else:
            original = "left" if json.loads(row["layout"])["images"][0] == "original" else "right"
            value = original if good else {"left": "right", "right": "left"}[original]
        assert assign.submit(store_path, annotator_id, task.assignment_id, value).recorded
        done += 1
    return done


def truthful(store_path, task: assign.Task) -> str:
    """A careful participant's answer: the image the renderer says shows the caption (1 when none is known), the
    original image's side at step 4."""
    row = db.rows(store_path, "select a.layout, i.truth from assignments a join items i on i.id = a.item_id "
                              "where a.id = ?", (task.assignment_id,))[0]
    return careful_answer(task.task, row["truth"], row["layout"])


def careful_answer(stage: str, truth: str | None, layout: str) -> str:
    """`truthful`'s answer from a task's stage and its stored truth and layout (JSON texts)."""
    if stage == "select":
        return (db.loads(truth, {}).get("select") or ["1"])[0]
    return "left" if json.loads(layout)["images"][0] == "original" else "right"


def answer(store_path, who: int, n: int) -> int:
    """Up to `n` answers from one participant; how many were given."""
    done = 0
    while done < n and (task := assign.next_task(store_path, who)) is not None:
        assert assign.submit(store_path, who, task.assignment_id, truthful(store_path, task)).recorded
        done += 1
    return done
