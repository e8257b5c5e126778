"""A campaign waiting for its candidate images and the `generate` job run on it in this process, for the
generation tests: toy items (and gold ones) on a real store, no candidate drawn yet (`make_campaign`), the job over
its data folder (`run`), and an image's pixels to compare (`pixels`)."""
from __future__ import annotations

import numpy as np
from PIL import Image

from backend.annotate import campaigns
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from backend.generate.job import GenerateConfig, run_job
from backend.jobs.reporter import Reporter
from backend.toyworld.campaign import toy_items


def pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB"))


def make_campaign(tmp_path, n_items: int, n_gold: int, generator: str) -> str:
    path = tmp_path / "lab.db"
    Store(path)  # migrations
    folder = campaigns.campaign_dir(tmp_path / "data", "c1")
    items = toy_items(n_items, 0, folder) + toy_items(n_gold, 1, folder, gold=True)
    campaigns.create(path, "c1", items, CampaignConfig.from_dict({"generator": generator}), source="test")
    return str(path)


def run(path: str, tmp_path, **values) -> dict:
    config = GenerateConfig.from_dict({"campaign": "c1", "data_dir": str(tmp_path / "data"), **values})
    return run_job(config, Reporter(Store(path)))
