"""Training data plumbing: augmentation reproducible per (seed, step, item), DataLoader workers, neighbour mining."""
import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from backend.toyworld import training as toy_training
from backend.toyworld.model import create_toy_model
from backend.train import data as train_data
from backend.train.config import TrainConfig
from backend.train.loader import StepBatches, image_chunks, step_loader
from backend.train.loop import train
from backend.train.transforms import TrainTransform, crop_box, crop_rng, train_transform

MEAN_STD = ([0.5] * 3, [0.25] * 3)


def test_crops_keep_90_to_100_percent_of_the_image_and_replay_exactly():
    boxes = [crop_box(120, 160, crop_rng(seed=3, step=step, index=7)) for step in range(40)]
    assert boxes == [crop_box(120, 160, crop_rng(seed=3, step=step, index=7)) for step in range(40)]
    assert len(set(boxes)) > 20  # mostly a new crop every step (draws that do not fit fall back to the centre)
    for top, left, h, w in boxes:
        assert 0 <= top <= 120 - h and 0 <= left <= 160 - w
        assert 0.88 <= h * w / (120 * 160) <= 1.0  # scale (0.9, 1.0), up to rounding
        assert 3 / 4 - 0.02 <= w / h <= 4 / 3 + 0.02
    assert crop_box(120, 160, crop_rng(3, 0, 8)) != crop_box(120, 160, crop_rng(3, 0, 7))


def test_an_image_too_elongated_for_any_crop_gets_the_centre_crop():
    assert crop_box(10, 200, crop_rng(0, 0, 0)) == (0, 93, 10, 13)  # width clamped to 4/3 of the height


def test_the_transform_takes_files_and_in_memory_renders_alike():
    transform = TrainTransform(32, *MEAN_STD)
    picture = Image.new("RGB", (48, 40), (255, 0, 0))
    from_file = transform(picture, crop_rng(0, 1, 2))
    from_array = transform(torch.from_numpy(np.array(picture)).permute(2, 0, 1).contiguous(), crop_rng(0, 1, 2))
    assert from_file.shape == from_array.shape == (3, 32, 32)
    expected = torch.tensor([2.0, -2.0, -2.0]).view(3, 1, 1).expand(3, 32, 32)  # red, normalised
    assert torch.allclose(from_file, expected, atol=1e-5) and torch.allclose(from_array, expected, atol=1e-5)


def test_the_transform_follows_the_model_and_none_means_the_eval_preprocess():
    model = create_toy_model(0)[0]
    transform = train_transform(model, "open_clip")
    assert transform.size == [64, 64] and transform.mean == pytest.approx([0.897, 0.888, 0.883])
    assert train_transform(model, "none") is None


def _toy(augment):
    return toy_training.world_data("toyworld-finetune", 12, 0, preprocess=None, families=["negclip_swap"],
                                    mean_std=MEAN_STD, augment=augment)


def test_training_batches_are_augmented_per_step_and_evaluation_is_not():
    plain, augmented = _toy(None), _toy(TrainTransform(64, *MEAN_STD))
    eval_images = plain.images.tensors(range(12))
    assert torch.equal(augmented.images.tensors(range(12)), eval_images)  # eval ignores augmentation
    view = train_data.training_view(plain, seed=0, step=5)
    assert view.images is plain.images  # augment "none": training reads the eval preprocess
    first = train_data.make_batch(train_data.training_view(augmented, 0, 5), 5, 4, seed=0)
    again = train_data.make_batch(train_data.training_view(augmented, 0, 5), 5, 4, seed=0)
    unaugmented = train_data.make_batch(view, 5, 4, seed=0)
    assert first.captions == unaugmented.captions
    assert torch.equal(first.images, again.images) and not torch.equal(first.images, unaugmented.images)
    assert first.negative_images is not None and not torch.equal(first.negative_images, unaugmented.negative_images)


def test_nearest_neighbours_in_chunks_equal_the_full_matrix():
    embeddings = torch.nn.functional.normalize(torch.randn(50, 8, generator=torch.Generator().manual_seed(0)), dim=-1)
    similarity = embeddings @ embeddings.T
    similarity.fill_diagonal_(-float("inf"))
    expected = similarity.topk(3, dim=1).indices
    for chunk in (7, 50, None):
        assert torch.equal(train_data.nearest_neighbours(embeddings, k=3, chunk=chunk), expected)
    assert all(i not in row.tolist() for i, row in enumerate(expected))


WORDS = [("red", (220, 30, 30)), ("blue", (30, 30, 220)), ("green", (30, 200, 30)), ("yellow", (230, 220, 20))]


def _manifest(tmp_path):
    rows = ["image,caption,negatives"]
    for i, (colour, rgb) in enumerate(WORDS * 2):
        shape, other = ("square", "circle") if i % 2 else ("circle", "square")
        Image.new("RGB", (40 + 4 * i, 36), rgb).save(tmp_path / f"{i}.png")
        rows.append(f"{i}.png,a {colour} {shape},a {colour} {other}")
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "train.csv"


@pytest.mark.system
def test_manifest_batches_from_worker_processes_match_the_training_process(tmp_path):
    """Workers decode, crop and assemble; bit-identical weights to workers=0, resume across the loader included."""
    manifest = _manifest(tmp_path)
    common = dict(base_model="toyworld:random", data="manifest", manifest=str(manifest), loss="negclip", steps=4,
                  batch_size=4, eval_every=2, eval_benchmarks=[], warmup_steps=1, lr=1e-3, output_dir=str(tmp_path))
    in_process = TrainConfig.from_dict({**common, "name": "workers0", "workers": 0})
    train(in_process)
    with_workers = TrainConfig.from_dict({**common, "name": "workers2", "workers": 2})
    train(with_workers, stop_after=3)  # checkpoint at 2; the resumed loader starts at step 2
    train(with_workers)
    a, b = (load_file(c.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors")
            for c in (in_process, with_workers))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_step_dataset_builds_each_steps_micro_batches():
    data = _toy(TrainTransform(64, *MEAN_STD))
    steps = StepBatches(data, range(3, 6), batch_size=2, seed=0, grad_accum=2)
    item = steps[1]
    assert len(steps) == 3 and item.step == 4 and len(item.batches) == 2
    expected = train_data.make_batch(train_data.training_view(data, 0, 4), 4, 2, 0, micro=1, grad_accum=2)
    assert item.batches[1].captions == expected.captions and torch.equal(item.batches[1].images, expected.images)
    rng = torch.get_rng_state()
    assert [item.step for item in step_loader(steps, workers=0)] == [3, 4, 5]
    assert torch.equal(torch.get_rng_state(), rng)  # the global RNG a checkpoint saves is left alone


def test_only_banks_of_files_are_decoded_in_worker_processes():
    files = train_data.TrainData(train_data.ImageBank(None, paths=["a.png", "b.png"]), ["a red square"] * 2, [[], []])
    renders = _toy(None)
    assert step_loader(StepBatches(files, range(2), 1, 0), workers=2).num_workers == 2
    assert image_chunks(files.images, 1, workers=2).num_workers == 2
    assert step_loader(StepBatches(renders, range(2), 1, 0), workers=2).num_workers == 0  # nothing to decode
    assert image_chunks(renders.images, 1, workers=2).num_workers == 0
