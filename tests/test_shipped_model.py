"""The built-in model shipped in models/toyclip-v1: it loads offline and its numbers are the documented ones.

Pinned from `python -m backend evaluate --model toyworld --benchmarks ...` (docs/TOYWORLD.md).
Evaluation is deterministic on CPU; the tolerance only absorbs BLAS rounding at exact ties.
"""
import numpy as np
import pytest

from backend.benchmarks import evaluate_many
from backend.models.loading import load_model
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe import run_probe
from backend.toyworld import render, sample_scene, to_pil

PINNED = {
    "toy-sugarcrepe/replace_att": 0.89,
    "toy-sugarcrepe/replace_obj": 0.91,
    "toy-sugarcrepe/replace_rel": 0.46,
    "toy-sugarcrepe/swap_att": 0.545,
    "toy-sugarcrepe/swap_rel": 0.485,
    "toy-hard-positives/swap/brittleness": 0.415,
    "toy-retrieval/i2t_R@1": 0.504,
    "toy-retrieval/t2i_R@1": 0.482,
}


@pytest.fixture(scope="module")
def shipped():
    return load_model("toyworld", device="cpu")


@pytest.fixture(scope="module")
def shipped_metrics(shipped):
    """One full evaluation (evaluation is deterministic), read by both tests of the numbers."""
    return evaluate_many(["toy-sugarcrepe", "toy-hard-positives", "toy-retrieval"], shipped)


def test_shipped_model_loads_offline_with_its_identity(shipped):
    assert shipped.identity == {"model": "toyworld", "activation": "gelu", "precision": "fp32"}
    assert type(shipped.tokenizer).__name__ == "ToyTokenizer"


def test_shipped_model_numbers_are_the_documented_ones(shipped_metrics):
    for name, value in PINNED.items():
        assert shipped_metrics[name] == pytest.approx(value, abs=0.006), name


def test_shipped_model_is_a_bag_of_words(shipped_metrics):
    """What the papers report for CLIP: objects and attributes yes, bindings and relations at chance."""
    assert shipped_metrics["toy-sugarcrepe/replace_obj"] > 0.8
    assert shipped_metrics["toy-sugarcrepe/swap_att"] < 0.6
    assert shipped_metrics["toy-sugarcrepe/swap_rel"] < 0.6


def test_probing_the_shipped_model_names_words_it_cannot_read():
    # the user's own caption carries the unknown word; no generated family is needed (nor spaCy and WordNet)
    image = to_pil(render(sample_scene(np.random.default_rng(0), n_objects=2)))
    result = run_probe(image, "a red circle left of a blue square", ["toyworld"], ModelRegistry(device="cpu"),
                       EmbeddingCache(), families=[], extra="-a red giraffe left of a blue square")
    notes = result.models[0]["notes"]
    assert any("giraffe" in note and "<unk>" in note for note in notes)
