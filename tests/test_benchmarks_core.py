"""The streaming evaluator, stored results, the evaluate job and zero-shot prompt ensembles, on real files and a
tiny open_clip model: numbers are recomputed by hand from the model's own embeddings."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import Benchmark, ImageFile, evaluator, grid_task, prepare, register, run_task
from backend.benchmarks.job import EvaluateConfig, evaluate_models
from backend.benchmarks.results import disagreements, item_images, items, leaderboard, results, subtypes
from backend.benchmarks.stream import BenchmarkImageError, StreamEncoder
from backend.benchmarks.task import first_caption_wins
from backend.benchmarks.zeroshot import ensemble_task, top_k, zero_shot_metrics
from backend.core.store import Store
from backend.models.loading import load_model

COLOURS = {"red": (220, 30, 30), "blue": (30, 30, 220), "green": (30, 200, 30)}


def write_images(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, rgb in COLOURS.items():
        paths[name] = folder / f"{name}.png"
        Image.new("RGB", (48, 40), rgb).save(paths[name])
    return paths


def pair_task(paths: dict[str, Path]):
    """Six items over three distinct files: every image is used twice."""
    rows = [(name, f"a {name} square", f"a {other} square") for name in COLOURS for other in COLOURS if other != name]
    return grid_task([[ImageFile(str(paths[name]))] for name, _, _ in rows], [[pos, neg] for _, pos, neg in rows],
                     lambda s: {"accuracy": first_caption_wins(s).double().mean().item()},
                     ids=[f"{a}-{b}" for a, b, _ in rows], subtypes=[name for name, _, _ in rows],
                     correct=first_caption_wins)


@pytest.fixture(scope="module")
def tiny(tiny_checkpoints):
    return load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")


def by_hand(loaded, image_path: Path, texts: list[str]) -> torch.Tensor:
    with torch.no_grad():
        image = loaded.model.encode_image(loaded.preprocess(Image.open(image_path).convert("RGB"))[None])
        text = loaded.model.encode_text(loaded.tokenizer(texts))
    return (F.normalize(text, dim=-1) @ F.normalize(image, dim=-1).T)[:, 0]


@pytest.mark.system
def test_each_distinct_image_is_encoded_once_and_scores_match_a_hand_computation(tmp_path, tiny):
    paths = write_images(tmp_path / "images")
    task = pair_task(paths)
    assert len(task.images) == 3 and task.n_items == 6 and len(task.texts) == 3
    result = run_task(task, StreamEncoder(tiny, batch_size=2, workers=2))
    for n, (row_images, row_texts) in enumerate(zip(task.image_index.tolist(), task.text_index.tolist())):
        expected = by_hand(tiny, Path(task.images[row_images[0]].path), [task.texts[t] for t in row_texts])
        assert torch.allclose(result.scores[n, :, 0], expected, atol=1e-5)
    assert result.metrics["accuracy"] == pytest.approx(result.correct.double().mean().item())
    assert result.correct.tolist() == (result.scores[:, 0, 0] > result.scores[:, 1, 0]).tolist()


def test_a_crop_box_is_applied_before_encoding(tmp_path):
    image = Image.new("RGB", (100, 60), COLOURS["blue"])
    image.paste(Image.new("RGB", (20, 10), COLOURS["red"]), (30, 40))
    image.save(tmp_path / "scene.png")
    crop = ImageFile(str(tmp_path / "scene.png"), (30, 40, 20, 10)).load()
    assert crop.size == (20, 10) and set(crop.getdata()) == {COLOURS["red"]}


def test_an_unreadable_image_names_its_file(tmp_path, tiny):
    (tmp_path / "broken.png").write_bytes(b"not a png at all")
    with pytest.raises(BenchmarkImageError, match=r"broken\.png"):
        StreamEncoder(tiny).images([ImageFile(str(tmp_path / "broken.png"))])


def test_prompt_ensembles_average_embeddings_not_scores(tiny):
    images = [np.full((32, 32, 3), value, dtype=np.uint8) for value in (0, 90, 180, 250)]
    classnames, templates = ["cat", "dog", "car"], ["a photo of a {}.", "a drawing of a {}.", "itap of a {}."]
    labels = [0, 1, 2, 1]
    task = ensemble_task(images, labels, classnames, templates)
    result = run_task(task, StreamEncoder(tiny))
    encoder = StreamEncoder(tiny)
    image_emb = encoder.images(images)
    classes = torch.stack([F.normalize(encoder.texts([t.format(c) for t in templates]).mean(0), dim=0)
                           for c in classnames])
    assert result.metrics == zero_shot_metrics(image_emb @ classes.T, torch.tensor(labels))


def test_top_k_counts_a_tie_with_another_class_as_wrong():
    sim = torch.tensor([[0.5, 0.5, 0.1], [0.9, 0.2, 0.1], [0.1, 0.3, 0.2]])
    assert top_k(sim, torch.tensor([0, 0, 0]), ks=(1, 2)) == {"top1": pytest.approx(1 / 3),
                                                              "top2": pytest.approx(2 / 3)}


@pytest.fixture()
def pair_benchmark(tmp_path):
    """A file-backed benchmark registered for one test (its data folder is the test's root)."""
    root = tmp_path / "benchmarks"
    write_images(root / "squares")

    def build(limit, data_root):
        return pair_task({name: Path(data_root) / "squares" / f"{name}.png" for name in COLOURS})

    register(Benchmark("test-squares", "three squares, six pairs", "squares-v1", build, chance={"accuracy": 0.5}))
    yield root
    evaluator.BENCHMARKS.pop("test-squares")


def test_results_feed_the_leaderboard_failures_and_disagreements(tmp_path, tiny_checkpoints, pair_benchmark):
    store = Store(tmp_path / "lab.db")
    config = EvaluateConfig(models=[tiny_checkpoints.dir_spec, tiny_checkpoints.file_spec],
                            benchmarks=["test-squares", "toy-zeroshot-shape"], limit=None,
                            data_root=str(pair_benchmark), workers=0, device="cpu").validate()
    summaries = evaluate_models(config, store)
    squares = [s for s in summaries if s["benchmark"] == "test-squares"]
    assert [s["metrics"] for s in squares] == [r["metrics"] for r in reversed(results(store, ["test-squares"]))]
    board = leaderboard(store, ["test-squares"])
    assert board.columns == ["test-squares/accuracy"]
    assert [row["test-squares/accuracy"] for row in board.rows] == [s["metrics"]["accuracy"] for s in squares]
    assert "QUICKGELU" not in board.to_csv() and "(gelu, fp32)" in board.to_csv()
    first = squares[0]["result_id"]
    wrong = items(store, first)
    assert len(wrong) == round(6 * (1 - squares[0]["metrics"]["accuracy"]))
    counts = {name: (n, bad) for name, n, bad in subtypes(store, first)}
    assert sum(n for n, _ in counts.values()) == 6 and sum(bad for _, bad in counts.values()) == len(wrong)
    for row in wrong:
        assert row["scores"][0][0] <= row["scores"][1][0] and row["texts"][0].split()[1] == row["subtype"]
        picture = item_images(store, first, row["position"])[0]
        assert picture.getpixel((0, 0)) == COLOURS[row["subtype"]]
    # the file spec and the dir spec hold the same weights: they agree on every item
    assert disagreements(store, first, squares[1]["result_id"]) == []


def test_disagreements_need_the_same_item_set(tmp_path, tiny_checkpoints, pair_benchmark):
    store = Store(tmp_path / "lab.db")
    config = EvaluateConfig(models=[tiny_checkpoints.dir_spec], benchmarks=["test-squares", "toy-zeroshot-shape"],
                            limit=3, data_root=str(pair_benchmark), workers=0).validate()
    ids = [s.get("result_id") for s in evaluate_models(config, store)]
    with pytest.raises(ValueError, match="different item sets"):
        disagreements(store, ids[0], ids[1])


def test_a_bad_config_names_every_problem():
    with pytest.raises(ValueError) as error:
        EvaluateConfig.from_dict({"models": [], "benchmarks": ["no-such-set"], "limit": 0, "precision": "fp8"})
    message = str(error.value)
    for part in ("at least one model", "unknown benchmark 'no-such-set'", "limit must be", "precision must be"):
        assert part in message
    with pytest.raises(ValueError, match="Unknown evaluate config keys: modle"):
        EvaluateConfig.from_dict({"modle": ["x"]})


def test_the_cli_evaluates_stores_and_prints_json(tmp_path, tiny_checkpoints, capsys, monkeypatch):
    """In-process (`backend.cli.main`): tests/test_cli.py runs `python -m backend` itself as a process."""
    from backend.cli import main

    monkeypatch.setenv("COMPLAB_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["evaluate", "--model", tiny_checkpoints.dir_spec, "--benchmarks", "toy-zeroshot-shape",
                 "--limit", "8", "--json"]) == 0
    run = capsys.readouterr()
    output = json.loads(run.out)["results"][0]
    assert output["benchmark"] == "toy-zeroshot-shape" and output["activation"] == "gelu"
    assert "%" in run.err  # the progress bar
    assert main(["leaderboard"]) == 0
    board = capsys.readouterr().out
    assert f"{100 * output['metrics']['top1']:.2f}" in board and "Chance" in board
    assert main(["evaluate", "--model", "toyworld", "--benchmarks", "sugarcrepe-typo"]) == 2
    assert "unknown benchmark 'sugarcrepe-typo'" in capsys.readouterr().err


def test_prepare_is_per_data_folder(tmp_path, pair_benchmark):
    assert prepare("test-squares", None, pair_benchmark).images[0].path.startswith(str(pair_benchmark))
