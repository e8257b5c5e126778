"""The built-in world as ground truth for the perturbation engine: its oracle knows what every caption means.

Every family runs over captions of rendered scenes (complete and dense captions of two-object scenes, the
Probe's examples among them), drawing new words from the built-in model's vocabulary as the Probe does.
Every generated negative the world's grammar can read must be false of its scene and every positive true;
only ARO's order shuffles and NegCLIP's own swaps may fall outside the grammar (ungrammatical by design, and
a faithful copy of a noisy recipe); every output of the Probe's default families must be readable.
"""
import functools

import numpy as np
import pytest

from backend.perturb import FAMILIES, PROBE_DEFAULT_FAMILIES, perturb
from backend.probe.reliability import shared_vocabulary
from backend.toyworld.captions import complete_caption, dense_caption
from backend.toyworld.gallery import example_gallery
from backend.toyworld.grammar import CaptionParseError, realise
from backend.toyworld.oracle import holds
from backend.toyworld.scene import sample_scene
from backend.toyworld.tokenizer import ToyTokenizer

VOCABULARY = shared_vocabulary([ToyTokenizer()])
N_SCENES = 30


def _captioned_scenes():
    rng = np.random.default_rng(21)
    for _ in range(N_SCENES):
        scene = sample_scene(rng, n_objects=2)
        yield scene, realise(complete_caption(scene, rng))
        yield scene, realise(dense_caption(scene, rng))


CASES = list(_captioned_scenes())


@functools.cache
def variants_of(caption: str) -> tuple:
    """Every family's variants of a caption in the world's vocabulary (the engine's default: families=None)."""
    return tuple(perturb(caption, families=None, vocabulary=VOCABULARY))


def test_every_negative_is_false_and_every_positive_true_of_its_scene():
    wrong, unreadable, judged = [], [], 0
    for scene, caption in CASES:
        assert holds(caption, scene)
        for variant in variants_of(caption):
            try:
                truth = holds(variant.text, scene)
            except CaptionParseError:
                if variant.family in PROBE_DEFAULT_FAMILIES and variant.family != "aro_order":
                    unreadable.append((caption, variant.family, variant.subtype, variant.text))
                continue
            judged += 1
            if truth != (variant.kind == "positive"):
                wrong.append((caption, variant.family, variant.subtype, variant.kind, variant.text))
    assert not wrong, "\n".join(map(str, wrong))
    assert not unreadable, "\n".join(map(str, unreadable))
    assert judged > 10 * len(CASES)


def test_every_family_reaches_the_world():
    """Additions need words the world has not (materials, "with", "next to"): the vocabulary keeps them out.
    CE-CLIP's refills are the replacements REPLACE makes first (a text goes to the family that claims it)."""
    made = {variant.family for _, caption in CASES for variant in variants_of(caption)}
    assert made >= set(FAMILIES) - {"addition", "ce_clip"}


def test_new_words_come_from_the_vocabulary():
    for _, caption in CASES[:10]:
        for variant in variants_of(caption):
            assert set(variant.text.lower().split()) <= VOCABULARY, variant


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    return example_gallery(tmp_path_factory.mktemp("gallery"))


def test_the_probe_examples_show_binding_and_relation_swaps(gallery):
    for _, caption in gallery:
        subtypes = {v.subtype for v in perturb(caption, families=["binding_swap"], vocabulary=VOCABULARY)}
        assert "attribute" in subtypes, caption
        assert subtypes & {"relation_arguments", "object"}, caption
