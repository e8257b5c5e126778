"""Batched generation (one pipeline call, one CPU generator per image) and its regeneration, on the tiny SDXL
pipeline built offline, a real store and the real CLI. The kill-and-resume case is in tests/test_job_recovery.py."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from backend.annotate import campaigns, db
from backend.cli import main
from backend.generate import regenerate
from backend.generate.diffusion import GenerationError, generate, generate_batch, load_pipeline
from backend.generate.job import MAX_BATCH_SIZE, GenerateConfig
from backend.generate.presets import Preset
from tests.support import tiny_diffusion
from tests.support.generate_campaign import make_campaign, pixels, run

CAPTIONS = ["A red circle to the left of a blue square.", "A blue square above a green triangle.",
            "A small yellow star."]
DEVICES = [pytest.param("cpu"), pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="regeneration on a GPU needs one (this machine has none)"))]


@pytest.fixture(scope="module")
def tiny_sdxl(tmp_path_factory, hub_cache):
    folder = tiny_diffusion.save_tiny_sdxl(tmp_path_factory.mktemp("tiny-sdxl"))
    return folder, tiny_diffusion.lay_out_hub_cache(hub_cache, folder)


@pytest.fixture
def pipeline_calls(monkeypatch):
    """Every call of a diffusers pipeline in this test, as (prompts, generator seeds)."""
    from diffusers import StableDiffusionXLPipeline

    calls, original = [], StableDiffusionXLPipeline.__call__

    def recording(self, *args, **kwargs):
        calls.append((list(kwargs["prompt"]), [g.initial_seed() for g in kwargs["generator"]]))
        return original(self, *args, **kwargs)
    monkeypatch.setattr(StableDiffusionXLPipeline, "__call__", recording)
    return calls


@pytest.mark.parametrize("device", DEVICES)
def test_an_image_drawn_in_a_batch_of_three_regenerates_pixel_identical(tiny_sdxl, device, pipeline_calls):
    loaded = load_pipeline(Preset.custom(tiny_sdxl[1], steps=2, guidance=5.0), device=device)
    drawn = generate_batch(loaded, CAPTIONS, [31, 32, 33])
    prompts = [record["prompt"] for _, record in drawn]
    assert prompts == ["A red circle to the left of a blue square", "A blue square above a green triangle",
                       "A small yellow star"]
    assert [record["batch"] for _, record in drawn] == [
        {"index": index, "prompts": prompts, "seeds": [31, 32, 33]} for index in range(3)]
    assert pipeline_calls == [(prompts, [31, 32, 33])]  # one call, one generator per image, in order
    image, record = drawn[1]
    stored = {**record, "batch": json.dumps(record["batch"])}  # as the store gives it back
    again = regenerate(json.loads(json.dumps(stored)), device=device)
    assert np.array_equal(pixels(again), pixels(image))
    assert pipeline_calls[-1] == (prompts, [31, 32, 33])  # the whole batch again, in its order


def test_a_record_drawn_alone_regenerates_alone_with_or_without_its_batch_field(tiny_sdxl, pipeline_calls):
    loaded = load_pipeline(Preset.custom(tiny_sdxl[1], steps=2, guidance=5.0))
    ((image, record),) = generate(loaded, CAPTIONS[0], [41])
    assert record["batch"] is None  # a batch of one records none: its record is as before batching
    old = {name: value for name, value in record.items() if name != "batch"}  # a record made before batching
    for kept in (record, old):
        assert np.array_equal(pixels(regenerate(kept)), pixels(image))
    assert pipeline_calls[-2:] == [([record["prompt"]], [41])] * 2
    four = generate(loaded, CAPTIONS[0], [41, 42, 43, 44, 45], batch_size=2)  # calls of 2, 2 and 1
    assert [call[1] for call in pipeline_calls[-3:]] == [[41, 42], [43, 44], [45]]
    assert [r["batch"] and (r["batch"]["index"], len(r["batch"]["seeds"])) for _, r in four] == \
        [(0, 2), (1, 2), (0, 2), (1, 2), None]


def test_a_batch_that_does_not_hold_the_records_own_image_is_refused(tiny_sdxl):
    loaded = load_pipeline(Preset.custom(tiny_sdxl[1], steps=2, guidance=5.0))
    _, record = generate_batch(loaded, CAPTIONS[:2], [51, 52])[1]
    for batch in ({**record["batch"], "index": 0}, {**record["batch"], "seeds": [51, 53]},
                  {**record["batch"], "index": 2}):
        with pytest.raises(GenerationError, match="does not hold its own prompt and seed"):
            regenerate({**record, "batch": batch})
    with pytest.raises(ValueError, match="one caption per seed"):
        generate_batch(loaded, CAPTIONS, [1, 2])


def test_a_batched_job_records_each_images_batch_and_the_stored_image_regenerates(tmp_path, tiny_sdxl):
    path = make_campaign(tmp_path, 2, 1, "bivlc")  # 8 images drawn by diffusers (3 + 3 + 2), 4 gold by the renderer
    result = run(path, tmp_path, preset="custom", model=str(tiny_sdxl[0]), steps=2, batch_size=3)
    assert (result["images_generated"], result["images_missing_after"], result["batch_size"]) == (12, 0, 3)
    rows = db.rows(path, "select c.*, i.gold from candidates c join items i on i.id = c.item_id order by c.id")
    assert all(row["batch"] is None for row in rows if row["gold"])  # the renderer draws one at a time
    batches = [json.loads(row["batch"]) for row in rows if not row["gold"]]
    assert [(batch["index"], len(batch["seeds"])) for batch in batches] == \
        [(0, 3), (1, 3), (2, 3), (0, 3), (1, 3), (2, 3), (0, 2), (1, 2)]
    drawn = [row for row in rows if not row["gold"]]
    assert [batch["seeds"][batch["index"]] for batch in batches] == [row["seed"] for row in drawn]
    crossing = drawn[5]  # the second batch holds an item's last slots and the next item's first
    assert len(set(json.loads(crossing["batch"])["prompts"])) == 2
    stored = Image.open(tmp_path / "data" / "campaigns" / "c1" / crossing["path"])
    assert np.array_equal(pixels(regenerate(crossing)), pixels(stored))
    assert campaigns.image_requests(path, "c1", 4) == []


@pytest.mark.parametrize("size", [0, -2, MAX_BATCH_SIZE + 1, 2.5, "4", True, None])
def test_a_bad_batch_size_is_refused_with_what_it_must_be(size):
    with pytest.raises(ValueError, match=f"batch_size \\(images per pipeline call\\) must be a whole number from 1 "
                                         f"to {MAX_BATCH_SIZE}, not {size!r}"):
        GenerateConfig.from_dict({"campaign": "c1", "batch_size": size})


def test_a_batch_size_for_a_generator_that_draws_one_image_at_a_time_is_refused():
    with pytest.raises(ValueError, match="preset 'toyworld' draws one image at a time"):
        GenerateConfig.from_dict({"campaign": "c1", "preset": "toyworld", "batch_size": 4})
    assert GenerateConfig.from_dict({"campaign": "c1", "preset": "sdxl-turbo", "batch_size": 8}).batch_size == 8


def test_the_cli_refuses_a_bad_batch_size_and_starts_nothing(tmp_path, capsys):
    path = make_campaign(tmp_path, 2, 0, "bivlc")
    assert main(["campaign", "generate", "c1", "--preset", "sdxl-turbo", "--batch-size", "0", "--db", path]) == 2
    assert f"batch_size (images per pipeline call) must be a whole number from 1 to {MAX_BATCH_SIZE}, not 0" in \
        capsys.readouterr().err
    assert db.rows(path, "select count(*) as n from jobs")[0]["n"] == 0
