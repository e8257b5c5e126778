"""CounterCurate's grouping sampler: a manifest's `group` column keeps a pair and its counterfactuals in one batch."""
import pytest
import torch
from PIL import Image

from backend.train import data as train_data
from backend.train.config import TrainConfig
from backend.train.loop import train

COLOURS = {"red": (220, 30, 30), "blue": (30, 30, 220), "green": (30, 200, 30), "yellow": (230, 220, 20)}


def _grouped_manifest(tmp_path, ragged=False):
    """Six groups of two: 'a red square left of a blue circle' and its swapped counterfactual."""
    rows = ["image,caption,group"]
    names = list(COLOURS)
    for g in range(6):
        first, second = names[g % 4], names[(g + 1) % 4]
        for k, (left, right) in enumerate(((first, second), (second, first))):
            if ragged and g == 5 and k == 1:
                continue
            image = Image.new("RGB", (32, 32), COLOURS[left])
            image.paste(COLOURS[right], (16, 0, 32, 32))
            image.save(tmp_path / f"{g}-{k}.png")
            rows.append(f"{g}-{k}.png,a {left} square left of a {right} square,pair{g}")
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "train.csv"


def test_every_batch_holds_whole_groups(tmp_path):
    data = train_data.manifest_data(_grouped_manifest(tmp_path), lambda image: torch.zeros(1), ["negclip_swap"], seed=0)
    assert [len(group) for group in data.groups] == [2] * 6
    group_of = {row: g for g, rows in enumerate(data.groups) for row in rows}
    for step in range(9):  # three epochs of three batches
        for rank in range(2):
            batch = train_data.make_batch(data, step, batch_size=2, seed=0, rank=rank, world_size=2)
            captions = batch.captions
            rows = [data.captions.index(c) for c in captions]
            assert group_of[rows[0]] == group_of[rows[1]]  # rank's micro-batch of 2 = one whole group


def test_groups_must_be_equal_and_fit_the_batch(tmp_path):
    with pytest.raises(ValueError, match="different sizes"):
        train_data.manifest_data(_grouped_manifest(tmp_path, ragged=True), lambda image: image, [], seed=0)
    data = train_data.manifest_data(_grouped_manifest(tmp_path), lambda image: image, [], seed=0)
    with pytest.raises(ValueError, match="not a multiple of the manifest's group size 2"):
        train_data.make_batch(data, 0, batch_size=3, seed=0)


def test_countercurate_trains_on_grouped_batches(tmp_path):
    config = TrainConfig.from_dict(dict(base_model="toyworld:random", data="manifest",
                                        manifest=str(_grouped_manifest(tmp_path)), loss="countercurate", steps=3,
                                        batch_size=4, eval_every=3, eval_benchmarks=[], warmup_steps=1, lr=1e-3,
                                        workers=0, output_dir=str(tmp_path / "runs")))
    result = train(config)
    assert result["last"].endswith("last")
