"""A toy annotation campaign with real candidate images, for the annotation page's tests and benchmark.

The candidates come from the real `generate` job with the built-in world's
renderer (`backend.toyworld.candidates`): no download, no GPU, a few milliseconds an
image, and the oracle knows what each shows. Its plan gives some items one
exact slot and some none, so step 3 answers disagree, some items reach step 4
and others are dropped, as in a real campaign.
"""
from __future__ import annotations

import io
from pathlib import Path

from backend.annotate import campaigns
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
