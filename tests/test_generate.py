"""Candidate generation on real components: a tiny SDXL pipeline built offline, the toy renderer, a real store."""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import torch
from PIL import Image

from backend.annotate import campaigns, db, quality
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from backend.generate import regenerate, storage
from backend.generate.diffusion import GenerationError, generate, load_pipeline
from backend.generate.job import GenerateConfig, shard
from backend.generate.presets import PRESETS, Preset, prompt_for
from backend.generate.seeds import image_seed, item_seed
from backend.jobs.kinds import get_kind
from backend.toyworld import candidates as toy
from backend.toyworld.benchmarks import BIVLC_TYPES, pair_for_type
from backend.toyworld.campaign import toy_items
from backend.toyworld.grammar import realise
from backend.toyworld.oracle import holds
from backend.toyworld.render import render
from tests.support import tiny_diffusion
from tests.support.generate_campaign import make_campaign, pixels, run

CAPTION = "A red circle to the left of a blue square."


def torch_equal(a, b) -> bool:
    """Equal values, `b` read as `a`'s device and dtype (on a GPU the pipeline's weights are half precision)."""
    return bool(torch.equal(a.cpu(), b.cpu().to(a.dtype)))


@pytest.fixture(scope="module")
def tiny_sdxl(tmp_path_factory, hub_cache):
    """The tiny pipeline as a local folder and as the cached hub repo `complab-tests/tiny-sdxl`."""
    folder = tiny_diffusion.save_tiny_sdxl(tmp_path_factory.mktemp("tiny-sdxl"))
    return folder, tiny_diffusion.lay_out_hub_cache(hub_cache, folder)


@pytest.fixture(scope="module")
def loaded(tiny_sdxl):
    return load_pipeline(Preset.custom(tiny_sdxl[1], steps=2, guidance=5.0))


def test_bivlc_preset_follows_the_protocol_and_builds_its_prompt():
    bivlc = PRESETS["bivlc"]
    assert (bivlc.model_id, bivlc.unet_id) == ("stabilityai/stable-diffusion-xl-base-1.0",
                                               "mhdang/dpo-sdxl-text2image-v1")
    assert (bivlc.guidance, bivlc.steps, bivlc.images_per_caption) == (5.0, 50, 4)
    assert (bivlc.width, bivlc.output_size) == (1024, 512)
    assert prompt_for("A dog on a bed. ", bivlc) == "A dog on a bed, high resolution, professional, 4k, highly detailed"
    assert prompt_for("A dog on a bed", bivlc) == "A dog on a bed, high resolution, professional, 4k, highly detailed"
    assert prompt_for("A dog on a bed.", PRESETS["sdxl-turbo"]) == "A dog on a bed"
    assert (PRESETS["sd-turbo"].steps, PRESETS["sd-turbo"].guidance) == (1, 0.0)
    assert all(p.licence and (p.licence_url or p.generator == "toyworld") for p in PRESETS.values())
    with pytest.raises(ValueError, match="empty caption"):
        prompt_for(" . ", bivlc)


def test_every_image_has_its_own_generator_and_regenerates_alone(loaded):
    seeds = [11, 12, 13, 14]
    four = generate(loaded, CAPTION, seeds)
    assert [record["seed"] for _, record in four] == seeds
    alone = generate(loaded, CAPTION, [13])[0][0]
    assert np.array_equal(pixels(alone), pixels(four[2][0]))  # image 3 does not depend on its neighbours
    reordered = generate(loaded, CAPTION, seeds[::-1])
    assert all(np.array_equal(pixels(a), pixels(b)) for (a, _), (b, _) in zip(four, reordered[::-1]))
    assert not np.array_equal(pixels(four[0][0]), pixels(four[1][0]))  # another seed, another image
    record = four[2][1]
    assert record == {
        "generator": "diffusers", "model": tiny_diffusion.HUB_ID, "unet": None,
        "revision": tiny_diffusion.HUB_COMMIT, "prompt": "A red circle to the left of a blue square",
        "negative_prompt": None, "seed": 13, "steps": 2, "guidance": 5.0,
        "dtype": str(loaded.dtype).removeprefix("torch."), "width": 64,
        "height": 64, "batch": None}
    assert np.array_equal(pixels(regenerate(json.loads(json.dumps(record)))), pixels(four[2][0]))


def test_a_preset_unet_is_swapped_in(tiny_sdxl, tmp_path, loaded):
    from diffusers import UNet2DConditionModel  # here, not at the top: every worker collects this module

    unet_repo = tiny_diffusion.save_tiny_unet(tmp_path / "dpo", seed=1)
    swapped = load_pipeline(Preset.custom(str(tiny_sdxl[0]), steps=2, guidance=5.0, unet_id=str(unet_repo)))
    own = swapped.pipeline.unet.state_dict()
    saved = UNet2DConditionModel.from_pretrained(unet_repo, subfolder="unet").state_dict()
    assert all(torch_equal(own[k], saved[k]) for k in saved)
    assert not all(torch_equal(own[k], loaded.pipeline.unet.state_dict()[k]) for k in saved)
    image, record = generate(swapped, CAPTION, [5])[0]
    assert (record["unet"], record["revision"]) == (str(unet_repo), "local")
    assert np.array_equal(pixels(regenerate(record)), pixels(image))


def test_a_model_that_cannot_be_loaded_offline_says_what_to_do():
    with pytest.raises(GenerationError) as caught:
        load_pipeline(Preset.custom("complab-tests/no-such-model"))
    message = str(caught.value)
    assert isinstance(caught.value, ValueError)
    for needle in ("complab-tests/no-such-model", "revision main", "HF_HUB_OFFLINE", "HF_TOKEN", "toyworld",
                   "network"):
        assert needle in message


def test_storage_is_content_addressed_idempotent_and_has_a_small_display_copy(tmp_path):
    rng = np.random.default_rng(0)
    image = Image.fromarray(rng.integers(0, 256, (700, 1024, 3), dtype=np.uint8))
    digest, path, display = storage.store_image(tmp_path, image)
    assert path == f"images/{digest[:2]}/{digest}.png"
    assert display == f"display/{digest}{storage.display_format()[1]}"
    assert hashlib.sha256((tmp_path / path).read_bytes()).hexdigest() == digest
    assert np.array_equal(pixels(Image.open(tmp_path / path)), pixels(image))  # lossless
    with Image.open(tmp_path / display) as shown:
        assert max(shown.size) == 512 and shown.size[0] > shown.size[1]
    stamps = [(tmp_path / p).stat().st_mtime_ns for p in (path, display)]
    assert storage.store_image(tmp_path, image.copy()) == (digest, path, display)
    assert [(tmp_path / p).stat().st_mtime_ns for p in (path, display)] == stamps  # nothing rewritten
    (tmp_path / path).write_bytes(b"truncated")  # a damaged original is replaced
    storage.store_image(tmp_path, image)
    assert hashlib.sha256((tmp_path / path).read_bytes()).hexdigest() == digest
    assert not list(tmp_path.rglob("*.part"))
    # what a kill during a write leaves (seen in tests/test_job_recovery.py), and a write in flight right now
    killed, in_flight = tmp_path / "images" / f".{digest}.png.x1.part", tmp_path / "display" / ".other.webp.x2.part"
    killed.write_bytes(b"half an ima")
    os.utime(killed, (1000.0, 1000.0))
    in_flight.write_bytes(b"being writ")
    assert storage.remove_partial(tmp_path, before=2000.0) == 1
    assert not killed.exists() and in_flight.exists()


def toy_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """BiVLC-style toy items, captions normalised as a campaign stores them."""
    rng = np.random.default_rng(seed)
    pairs = []
    for index in range(n):
        _, caption, negative = pair_for_type(BIVLC_TYPES[index % len(BIVLC_TYPES)], rng)
        pairs.append((campaigns.normalise_caption(realise(caption)), campaigns.normalise_caption(realise(negative))))
    return pairs


def test_toy_candidates_truth_is_the_oracles_and_flawed_ones_never_show_the_caption():
    defects = set()
    for item, (positive, negative) in enumerate(toy_pairs(50)):
        seeds = [image_seed(0, item, slot) for slot in range(4)]
        for (image, record), seed in zip(toy.candidates(positive, negative, item_seed(0, item), seeds), seeds):
            scene = toy.draw_scene(positive, negative, seed, record["defect"])
            assert np.array_equal(pixels(image), render(scene, 256))
            assert record["shows_caption"] is holds(negative, scene)
            assert record["shows_caption"] is (record["defect"] is None)
            if record["defect"] is None:
                assert not holds(positive, scene)  # BiVLC's negative image: the original caption is false
            assert (record["prompt"], record["negative_prompt"], record["seed"]) == (negative, positive, seed)
            assert np.array_equal(pixels(regenerate(record)), pixels(image))
            defects.add(record["defect"])
    assert defects == {None, *toy.DEFECTS}


def test_about_p_none_of_toy_items_have_no_exact_candidate():
    pairs = toy_pairs(20)
    plans = [toy.plan_item(pairs[item % 20][1], item_seed(7, item), 4, p_none=0.25) for item in range(400)]
    none = sum(all(defect is not None for defect in plan) for plan in plans)
    assert 70 <= none <= 130  # 100 expected, sd 8.7
    assert all(sum(defect is None for defect in plan) <= 1 for plan in plans)
    assert all(defect in toy.applicable_defects(pairs[i % 20][1]) for i, plan in enumerate(plans)
               for defect in plan if defect)
    assert plans == [toy.plan_item(pairs[item % 20][1], item_seed(7, item), 4) for item in range(400)]


def test_seeds_depend_on_base_item_and_slot_only():
    seeds = {image_seed(base, item, slot) for base in range(3) for item in range(50) for slot in range(4)}
    assert len(seeds) == 600 and all(0 <= s < 2**63 for s in seeds)
    assert image_seed(0, 5, 2) == image_seed(0, 5, 2)


def test_toy_job_fills_the_campaign_resumably(tmp_path):
    path = make_campaign(tmp_path, 6, 2, "toyworld")
    first = run(path, tmp_path, limit=3)
    assert (first["images_generated"], first["images_skipped"], first["images_missing_after"]) == (12, 0, 20)
    second = run(path, tmp_path)
    assert (second["images_generated"], second["images_skipped"], second["images_missing_after"]) == (20, 12, 0)
    third = run(path, tmp_path)
    assert (third["images_generated"], third["images_skipped"]) == (0, 32)
    rows = db.rows(path, "select i.id, i.gold, i.stage, i.truth, c.slot, c.seed, c.path, c.display_path, "
                         "c.shows_caption, c.generator from items i join candidates c on c.item_id = i.id "
                         "order by i.id, c.slot")
    assert len(rows) == 32 and {row["stage"] for row in rows} == {"generated"}
    root = tmp_path / "data" / "campaigns" / "c1"
    gold_seed = quality.stored_secret_seed(path, campaigns.get(path, "c1")["id"], "gold-images")
    for row in rows:  # the same seeds as one uninterrupted run; gold's from the campaign's secret
        assert row["seed"] == image_seed(gold_seed if row["gold"] else 0, row["id"], row["slot"])
        assert (root / row["path"]).is_file() and (root / row["display_path"]).is_file()
        right = [str(r["slot"] + 1) for r in rows if r["id"] == row["id"] and r["shows_caption"]] or ["none"]
        assert json.loads(row["truth"])["select"] == right


def test_diffusers_job_draws_gold_items_with_the_renderer_and_shards(tmp_path, tiny_sdxl, monkeypatch):
    path = make_campaign(tmp_path, 2, 1, "bivlc")
    values = {"preset": "custom", "model": str(tiny_sdxl[0]), "steps": 2}
    item_ids = [r.item_id for r in campaigns.image_requests(path, "c1", 4)]
    for rank in (1, 0):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        result = run(path, tmp_path, **values)
        assert result["images_generated"] == 4 * sum(item % 2 == rank for item in item_ids)
    assert result["images_missing_after"] == 0
    rows = db.rows(path, "select i.gold, c.generator, c.model, c.steps, c.seed, c.prompt, c.width, c.path "
                         "from candidates c join items i on i.id = c.item_id")
    assert {(row["gold"], row["generator"]) for row in rows} == {(1, "toyworld"), (0, "diffusers")}
    drawn = [row for row in rows if row["generator"] == "diffusers"]
    assert {(row["model"], row["steps"], row["width"]) for row in drawn} == {(str(tiny_sdxl[0]), 2, 64)}
    record = {**db.rows(path, "select * from candidates where generator = 'diffusers' limit 1")[0]}
    stored = Image.open(tmp_path / "data" / "campaigns" / "c1" / record["path"])
    assert np.array_equal(pixels(regenerate(record)), pixels(stored))


def test_config_is_validated_and_names_the_campaign_folder(tmp_path):
    kind = get_kind("generate")
    config = kind.load_config({"campaign": "c1", "data_dir": str(tmp_path), "preset": "sd-turbo", "steps": 2})
    assert kind.folder(config) == tmp_path / "campaigns" / "c1"
    assert GenerateConfig.from_dict(config.to_dict()) == config
    assert config.preset_for("bivlc").steps == 2 and config.preset_for("bivlc").model_id == "stabilityai/sd-turbo"
    assert GenerateConfig.from_dict({"campaign": "c1"}).preset_for("toyworld").generator == "toyworld"
    with pytest.raises(ValueError) as caught:
        GenerateConfig.from_dict({"campaign": "../x", "preset": "custom", "steps": 0, "guidance": "high",
                                  "dtype": "fp8", "limit": -1, "p_none": 2})
    for needle in ("campaign name", "needs model", "steps", "guidance", "dtype", "limit", "p_none"):
        assert needle in str(caught.value)
    with pytest.raises(ValueError, match="Unknown generate config keys: colour"):
        GenerateConfig.from_dict({"campaign": "c1", "colour": "red"})
    with pytest.raises(ValueError, match="no steps or guidance"):
        GenerateConfig.from_dict({"campaign": "c1", "preset": "toyworld", "steps": 3})


def test_sharding_splits_items_by_id():
    requests = [campaigns.ImageRequest(item, "", "", [0], False) for item in range(10)]
    parts = [shard(requests, rank, 3) for rank in range(3)]
    assert sorted(r.item_id for part in parts for r in part) == list(range(10))
    assert all(r.item_id % 3 == rank for rank, part in enumerate(parts) for r in part)


def test_a_toy_item_outside_the_grammar_is_refused_clearly():
    with pytest.raises(ValueError, match="built-in world's grammar"):
        toy.plan_item("A dog on a bed.", 0, 4)


@pytest.mark.system
def test_a_launched_generate_job_runs_through_the_job_system_and_owns_its_campaign_folder(tmp_path):
    from backend import jobs
    from backend.core.auth import Actor
    from tests.support.appserver import workspace_settings
    from tests.support.waiting import wait_for

    settings = workspace_settings(tmp_path / "ws")
    store = Store(settings.db)
    folder = campaigns.campaign_dir(settings.data_dir, "c1")
    campaigns.create(settings.db, "c1", toy_items(3, 0, folder), CampaignConfig.from_dict(
        {"generator": "toyworld"}), source="test")
    admin = Actor("alice", "admin", "password")
    job_id = jobs.submit(admin, "generate", {"campaign": "c1"}, store=store, settings=settings)
    job = store.get_job(job_id)
    assert job["args"]["data_dir"] == str(settings.data_dir) and job["run_dir"] == str(folder.resolve())
    busy = store.create_job("generate", {}, name="other")
    store.update_job(busy, status="running", run_dir=str(folder.resolve()))
    with pytest.raises(jobs.JobError, match="still writing to"):
        jobs.submit(admin, "generate", {"campaign": "c1"}, store=store, settings=settings)
    store.update_job(busy, status="cancelled")
    job = wait_for(lambda: (row := store.get_job(job_id))["status"] in jobs.FINAL and row, 120, "the job")
    assert job["status"] == "done", job.get("error")
    assert job["result"]["images_generated"] == 12 and job["result"]["images_missing_after"] == 0
    assert job["progress"] == 1.0 and job["message"].startswith("12/12 images")
    assert {row["stage"] for row in db.rows(settings.db, "select stage from items")} == {"generated"}
