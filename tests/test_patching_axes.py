"""A sweep's object-centric (x) axis: retrieval and the zero-shot sets are offered there, and a sweep runs on them."""
from __future__ import annotations

import io

import pytest

from backend.benchmarks import get_benchmark
from backend.benchmarks.zeroshot_suite import SUITE
from backend.jobs.reporter import Reporter
from backend.patching.config import SweepConfig, axis_choices
from backend.patching.sweep import run_job
from tests.support.object_centric_files import eurosat, write_root


def test_retrieval_and_every_zero_shot_set_are_offered_on_the_x_axis_only(tmp_path):
    axes = axis_choices(tmp_path)
    expected = {"coco-retrieval/i2t_R@1", "coco-retrieval/t2i_R@1", "flickr30k-retrieval/i2t_R@1",
                "flickr30k-retrieval/t2i_R@1", "cifar10/top1", "imagenet/top1", "toy-zeroshot-shape/top1",
                *(f"{entry.name}/top1" for entry in SUITE)}
    assert expected <= set(axes["object_centric"])
    assert not expected & set(axes["compositional"])
    assert {"sugarcrepe/overall", "toy-sugarcrepe/overall"} <= set(axes["compositional"])
    assert all(get_benchmark(metric.split("/")[0]).object_centric for metric in axes["object_centric"])


@pytest.mark.parametrize("object_centric", ["eurosat/mean_per_class_recall", "coco-retrieval/t2i_R@1"])
def test_a_sweep_traces_compositionality_against_a_zero_shot_set_or_retrieval(object_centric, tmp_path,
                                                                               tiny_checkpoints):
    eurosat(tmp_path / "eurosat")
    write_root(tmp_path)
    config = SweepConfig.from_dict({"pretrained": tiny_checkpoints.dir_spec, "finetuned": tiny_checkpoints.file_spec,
                                    "alphas": [0, 1], "compositional": "toy-sugarcrepe/overall",
                                    "object_centric": object_centric, "limit": 4, "device": "cpu",
                                    "data_root": str(tmp_path)})
    result = run_job(config, Reporter(out=io.StringIO()))
    assert [row["alpha"] for row in result["rows"]] == [0.0, 1.0]
    assert all(0 <= row[object_centric] <= 1 for row in result["rows"])
    assert result["recommended"]["object_centric"] in {row[object_centric] for row in result["rows"]}
