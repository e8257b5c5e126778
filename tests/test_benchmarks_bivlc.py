"""BiVLC and campaign:<name> on real-format data: a BiVLC-schema table written as parquet, with save_to_disk,
and as the cache an earlier online ``load_dataset`` leaves behind; a real exported annotation campaign. A tiny
open_clip model scores them; every number is recomputed item by item with the app's ``Encoder``."""
from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch
from datasets.packaged_modules.parquet.parquet import Parquet
from PIL import Image

from backend.annotate import campaigns, db, resolution, service
from backend.annotate.campaigns import CampaignConfig
from backend.benchmarks import available_benchmarks, get_benchmark, prepare, run_task
from backend.benchmarks.bivlc import HUB_ID, bivlc_metrics
from backend.benchmarks.campaign import export_digest
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.core.auth import cli_actor
from backend.core.store import Store
from backend.models.encoder import Encoder
from backend.models.loading import load_model
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import workspace_settings

FEATURES = datasets.Features({"image": datasets.Image(), "caption": datasets.Value("string"),
                              "negative_caption": datasets.Value("string"), "negative_image": datasets.Image(),
                              "type": datasets.Value("string"), "subtype": datasets.Value("string")})
KINDS = [("replace", "obj"), ("replace", "att"), ("swap", "obj"), ("add", "att"), ("replace", "obj"),
         ("swap", "att"), ("add", "obj"), ("swap", "obj")]
WORDS = ["dog", "cat", "red car", "blue cup", "two birds", "a tree", "old man", "a boat"]


def noise(seed: int) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 256, (40, 40, 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def bivlc_table() -> datasets.Dataset:
    n = len(KINDS)
    rows = {"image": [noise(i) for i in range(n)], "negative_image": [noise(100 + i) for i in range(n)],
            "caption": [f"a photo of {w}." for w in WORDS], "negative_caption": [f"a drawing of {w}." for w in WORDS],
            "type": [t for t, _ in KINDS], "subtype": [s for _, s in KINDS]}
    return datasets.Dataset.from_dict(rows, features=FEATURES)


@pytest.fixture(scope="module")
def loaded(tiny_checkpoints):
    return load_model(tiny_checkpoints.file_spec, device="cpu")


@pytest.fixture(autouse=True)
def datasets_cache(tmp_path, monkeypatch) -> Path:
    """A fresh datasets cache per test: what load_dataset finds offline is only what the test put there."""
    cache = tmp_path / "hf-datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    return cache


def hand_flags(encoder: Encoder, images, captions) -> dict[str, bool]:
    """One item on its own: docs/REFERENCE.md's seven flags from s(C, I), every comparison strict."""
    cos = encoder.score(list(images), list(captions)).cosine  # [image, caption]
    s = {(c, i): cos[i, c].item() for c in (0, 1) for i in (0, 1)}
    flags = {"ipos2t": s[0, 0] > s[1, 0], "ineg2t": s[1, 1] > s[0, 1], "tpos2i": s[0, 0] > s[0, 1],
             "tneg2i": s[1, 1] > s[1, 0]}
    flags["i2t"] = flags["ipos2t"] and flags["ineg2t"]
    flags["t2i"] = flags["tpos2i"] and flags["tneg2i"]
    flags["group"] = flags["i2t"] and flags["t2i"]
    return flags


def hand_metrics(encoder: Encoder, table: datasets.Dataset, rows: list[int]) -> dict[str, float]:
    per_item = [hand_flags(encoder, (table[r]["image"], table[r]["negative_image"]),
                           (table[r]["caption"], table[r]["negative_caption"])) for r in rows]
    groups = {"": rows}
    for r in rows:
        groups.setdefault(f"{table[r]['type']}/", []).append(r)
        groups.setdefault(f"{table[r]['type']}/{table[r]['subtype']}/", []).append(r)
    out = {}
    for prefix, members in groups.items():
        for flag in per_item[0]:
            values = [per_item[rows.index(r)][flag] for r in members]
            out[f"{prefix}{flag}"] = sum(values) / len(values)
    return out


def evaluate(name: str, root: Path, loaded, limit=None):
    return run_task(prepare(name, limit, root), StreamEncoder(loaded))


def test_local_parquet_copy_matches_item_by_item(tmp_path, loaded):
    table = bivlc_table()
    (tmp_path / "bivlc").mkdir()
    table.to_parquet(str(tmp_path / "bivlc" / "test-00000-of-00001.parquet"))
    result = evaluate("bivlc", tmp_path, loaded)
    expected = hand_metrics(Encoder(loaded), table, list(range(len(KINDS))))
    assert result.metrics == pytest.approx(expected) and set(result.metrics) == set(expected)
    assert len({round(v, 6) for k, v in result.metrics.items() if "/" not in k}) > 1, "a degenerate fixture"
    assert result.correct.tolist() == [hand_flags(Encoder(loaded), (table[r]["image"], table[r]["negative_image"]),
                                                  (table[r]["caption"], table[r]["negative_caption"]))["group"]
                                       for r in range(len(KINDS))]
    task = prepare("bivlc", None, tmp_path)
    assert task.items.ids == [str(r) for r in range(len(KINDS))]
    assert task.items.subtypes == [f"{t}/{s}" for t, s in KINDS]
    assert len(task.images) == 2 * len(KINDS) and len(task.texts) == 2 * len(KINDS)


def test_limit_takes_the_first_items_of_each_type(tmp_path, loaded):
    bivlc_table().save_to_disk(str(tmp_path / "bivlc"))
    task = prepare("bivlc", 1, tmp_path)
    assert task.items.ids == ["0", "2", "3"]  # the first replace, swap and add rows
    result = run_task(task, StreamEncoder(loaded))
    assert result.metrics == pytest.approx(hand_metrics(Encoder(loaded), datasets.load_from_disk(
        str(tmp_path / "bivlc")), [0, 2, 3]))


def lay_out_hub_cache(table: datasets.Dataset, cache: Path, build: Path) -> Path:
    """What ``load_dataset("imirandam/BiVLC")`` leaves in the datasets cache after an online run: the parquet
    builder's output under <namespace>___<name>/default/0.0.0/<commit>."""
    build.mkdir()
    table.to_parquet(str(build / "test-00000-of-00001.parquet"))
    builder = Parquet(cache_dir=str(build / "cache"), dataset_name="bi_vlc", config_name="default",
                      config_id="default", hash="a" * 40,
                      data_files={"test": [str(build / "test-00000-of-00001.parquet")]})
    builder.download_and_prepare()
    target = cache / "imirandam___bi_vlc" / "default" / "0.0.0" / ("a" * 40)
    shutil.copytree(builder.cache_dir, target)
    return target


def test_hub_path_loads_the_cached_hub_dataset_offline(tmp_path, loaded, datasets_cache):
    table = bivlc_table()
    lay_out_hub_cache(table, datasets_cache, tmp_path / "build")
    root = tmp_path / "benchmarks"  # no local copy: the real load_dataset(HUB_ID) path runs
    result = evaluate("bivlc", root, loaded)
    assert result.metrics == pytest.approx(hand_metrics(Encoder(loaded), table, list(range(len(KINDS)))))
    assert "local copy" in get_benchmark("bivlc").version and HUB_ID in get_benchmark("bivlc").version


def test_failed_hub_load_says_what_was_tried_and_what_to_do(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("bivlc", None, tmp_path)
    message = str(error.value)
    assert f"tried datasets.load_dataset('{HUB_ID}', split='test')" in message
    assert "ConnectionError" in message and "offline" in message.lower()
    assert f"save_to_disk('{tmp_path / 'bivlc'}')" in message and "HF_DATASETS_CACHE" in message
    (tmp_path / "bivlc").mkdir()
    (tmp_path / "bivlc" / "notes.txt").write_text("not a dataset")
    with pytest.raises(DataMissing, match="neither a dataset saved with save_to_disk nor parquet"):
        prepare("bivlc", 2, tmp_path)


def test_a_table_without_the_schema_is_refused(tmp_path):
    datasets.Dataset.from_dict({"image": ["x"], "caption": ["c"]}).save_to_disk(str(tmp_path / "bivlc"))
    with pytest.raises(DataMissing, match="no column negative_caption, negative_image, type, subtype"):
        prepare("bivlc", None, tmp_path)


def test_tie_rules_on_hand_made_scores():
    # s[n, caption, image]; item 0: every comparison strictly right; item 1: s00 == s10 (an Ipos2T tie) and
    # s11 == s10 (a Tneg2I tie), the other two strictly right; item 2: both images pick their caption, but
    # caption 0 prefers image 1 (Tpos2I wrong).
    scores = torch.tensor([[[0.9, 0.1], [0.2, 0.8]],
                           [[0.5, 0.1], [0.5, 0.5]],
                           [[0.6, 0.7], [0.1, 0.8]]])
    got = bivlc_metrics(scores, ["swap", "swap", "add"], ["obj", "att", "obj"])
    assert got["ipos2t"] == pytest.approx(2 / 3) and got["ineg2t"] == pytest.approx(1.0)
    assert got["tpos2i"] == pytest.approx(2 / 3) and got["tneg2i"] == pytest.approx(2 / 3)
    assert got["i2t"] == pytest.approx(2 / 3) and got["t2i"] == pytest.approx(1 / 3)
    assert got["group"] == pytest.approx(1 / 3)
    assert got["swap/group"] == 0.5 and got["add/group"] == 0.0 and got["swap/att/i2t"] == 0.0
    assert got["add/i2t"] == 1.0 and got["add/t2i"] == 0.0


def exported_campaign(tmp_path: Path) -> tuple[Path, str, list[int]]:
    """A toy campaign generated by the real job; an admin decides every item (image 1, then "original"), and
    the campaign is exported under <benchmarks>/campaigns/<name> by the real export."""
    settings = workspace_settings(tmp_path / "ws")
    Store(settings.db)
    name = "bivlc-mini"
    toy_campaign(settings.db, settings.data_dir, name, 4, CampaignConfig.from_dict({"gold_rate": 0}))
    campaign_id = campaigns.get(settings.db, name)["id"]
    items = [row["id"] for row in db.rows(settings.db, "select id from items where campaign_id = ? and gold = 0 "
                                                       "order by position", (campaign_id,))]
    for item in items:
        resolution.override(settings.db, item, "select", "1", "admin")
        resolution.override(settings.db, item, "ambiguity", "original", "admin")
    root = tmp_path / "benchmarks"
    service.export_campaign(cli_actor(), name, settings, out_dir=str(root / "campaigns" / name))
    return root, name, items


def test_exported_campaign_is_scored_like_bivlc(tmp_path, loaded, monkeypatch):
    root, name, items = exported_campaign(tmp_path)
    assert f"campaign:{name}" in available_benchmarks(root)
    result = evaluate(f"campaign:{name}", root, loaded)
    table = datasets.load_from_disk(str(root / "campaigns" / name / "dataset"))
    assert result.metrics == pytest.approx(hand_metrics(Encoder(loaded), table, list(range(len(table)))))
    task = prepare(f"campaign:{name}", None, root)
    assert task.items.ids == [str(i) for i in items] and len(items) == len(table) == 4
    monkeypatch.setenv("COMPLAB_BENCHMARKS_DIR", str(root))
    from backend.core.settings import get_settings
    get_settings.cache_clear()
    try:
        version = get_benchmark(f"campaign:{name}").version
    finally:
        get_settings.cache_clear()
    assert version == f"sha256:{export_digest(root / 'campaigns' / name / 'dataset')}"


def test_unknown_campaign_says_where_it_looked(tmp_path):
    with pytest.raises(DataMissing, match=r"no export of campaign 'nope' was found .*campaigns/nope/dataset"):
        prepare("campaign:nope", None, tmp_path)
    assert get_benchmark("campaign:nope").version == "not exported yet"
