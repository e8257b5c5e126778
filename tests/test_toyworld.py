"""Tests of the toy world: renderer, grammar/oracle, generators, benchmarks, tokenizer, model."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import backend.toyworld as tw
from backend.toyworld import benchmarks as toy_benchmarks
from backend.toyworld.render import box_side, shape_mask
from backend.toyworld.scene import RELATION_MARGIN


def obj(shape, colour, size, x, y):
    return tw.SceneObject(shape, colour, size, x, y)


def scene(*objects):
    return tw.Scene(tuple(objects), (250, 245, 240))


# ---------------------------------------------------------------- renderer

def test_render_is_deterministic_per_seed():
    def images(seed):
        rng = np.random.default_rng(seed)
        return tw.render_batch([tw.sample_scene(rng) for _ in range(50)])
    assert np.array_equal(images(3), images(3))
    assert not np.array_equal(images(3), images(4))


@pytest.mark.parametrize("resolution", [32, 64, 128])
def test_objects_drawn_where_the_scene_graph_says(resolution):
    rng = np.random.default_rng(0)
    scenes = [tw.sample_scene(rng) for _ in range(100)]
    images = tw.render_batch(scenes, resolution)
    assert images.shape == (100, resolution, resolution, 3) and images.dtype == np.uint8
    for image, s in zip(images, scenes):
        for o in s.objects:
            centre = image[int(o.y * resolution), int(o.x * resolution)]
            assert tuple(centre) == tw.COLOURS[o.colour]
        assert min(s.background) >= 200  # light tint, never an object colour
        assert tuple(s.background) not in tw.COLOURS.values()


@pytest.mark.parametrize("resolution", [31, 64])
def test_single_and_batch_rendering_agree(resolution):
    rng = np.random.default_rng(2)
    scenes = [tw.sample_scene(rng) for _ in range(100)]
    assert np.array_equal(np.stack([tw.render(s, resolution) for s in scenes]),
                          tw.render_batch(scenes, resolution))


def test_single_object_pixels_match_its_mask():
    for shape in tw.SHAPES:
        for size in tw.SIZES:
            s = scene(obj(shape, "blue", size, 0.5, 0.5))
            image = tw.render(s)
            drawn = np.all(image == tw.COLOURS["blue"], axis=-1)
            assert drawn.sum() == shape_mask(shape, box_side(size, 64)).sum()
            rows, cols = np.nonzero(drawn)
            assert abs((rows.min() + rows.max() + 1) / 2 - 32) <= 1
            assert abs((cols.min() + cols.max() + 1) / 2 - 32) <= 1


def test_shape_masks_are_distinct():
    masks = [shape_mask(s, 20) for s in tw.SHAPES]
    assert all(not np.array_equal(a, b) for i, a in enumerate(masks) for b in masks[i + 1:])


def test_sampled_relations_are_unambiguous():
    rng = np.random.default_rng(1)
    for _ in range(300):
        objects = tw.sample_scene(rng, n_objects=3).objects
        for a in objects:
            for b in objects:
                if a is not b:
                    for d in (abs(a.x - b.x), abs(a.y - b.y)):
                        assert d < RELATION_MARGIN / 2 or d > 1.5 * RELATION_MARGIN


# ---------------------------------------------------------------- grammar and oracle

HAND = scene(obj("circle", "red", "big", 0.17, 0.5),
             obj("square", "blue", "small", 0.83, 0.5),
             obj("triangle", "green", "small", 0.5, 0.17))


@pytest.mark.parametrize("text,truth", [
    ("a red circle", True), ("a big circle", True), ("a large red circle", True),
    ("a small red circle", False), ("a little red circle", False), ("a circle", True),
    ("a red shape", True), ("a yellow shape", False), ("an orange shape", False),
    ("A red circle.", True),
    ("a red circle to the left of a blue square", True), ("a red circle left of a blue square", True),
    ("a blue square to the right of a red circle", True), ("a red circle right of a blue square", False),
    ("a blue square left of a red circle", False),
    ("a green triangle above a red circle", True), ("a green triangle over a blue square", True),
    ("a red circle below a green triangle", True), ("a red circle under a green triangle", True),
    ("a red circle above a blue square", False),  # same row: neither above nor below
    ("a red circle and a blue square", True), ("a blue square and a red circle", True),
    ("a red circle and a red circle", False), ("a circle and a shape", True),
    ("a circle and a circle", False), ("a circle left of a circle", False),
    ("a red circle on the left", True), ("a blue square on the left", False),
    ("a blue square on the right", True), ("a green triangle at the top", True),
    ("a green triangle at the bottom", False), ("a shape at the bottom", False),
])
def test_oracle_on_hand_made_scene(text, truth):
    assert tw.holds(text, HAND) is truth


def test_scene_relations_are_the_graph_edges():
    assert sorted(tw.scene_relations(HAND)) == sorted([
        (0, "left", 1), (1, "right", 0), (0, "left", 2), (2, "right", 0), (2, "left", 1), (1, "right", 2),
        (2, "above", 0), (0, "below", 2), (2, "above", 1), (1, "below", 2)])


def test_oracle_and_needs_distinct_objects_and_relation_needs_margin():
    two = scene(obj("circle", "red", "big", 0.2, 0.2), obj("circle", "red", "small", 0.8, 0.8))
    assert tw.holds("a red circle and a red circle", two)
    assert tw.holds("a big circle above a small circle", two)
    close = scene(obj("circle", "red", "small", 0.45, 0.5), obj("square", "blue", "small", 0.55, 0.5))
    assert not tw.holds("a circle left of a square", close)
    assert not tw.holds("a square right of a circle", close)


@pytest.mark.parametrize("text", ["", "a red", "a zebra", "red circle", "a red circle near a square",
                                  "a red circle and", "a circle on the top", "a circle a circle"])
def test_unparseable_caption_raises_value_error(text):
    with pytest.raises(ValueError):
        tw.holds(text, HAND)
    with pytest.raises(tw.CaptionParseError):
        tw.parse(text)


def test_parse_realise_round_trip():
    data = tw.pretraining_pairs(300, seed=5)
    for text in data.captions:
        assert tw.realise(tw.parse(text)) == text


# ---------------------------------------------------------------- generators: exact labels

@pytest.fixture(scope="module")
def finetune():
    return tw.finetuning_set(300, seed=11)


def test_pretraining_captions_are_true_and_sparse():
    data = tw.pretraining_pairs(400, seed=7)
    assert data.images.shape == (400, 64, 64, 3)
    assert all(tw.holds(c, s) for c, s in zip(data.captions, data.scenes))
    colours_named = sum(np_.colour is not None for c in data.captions for np_ in tw.parse(c).noun_phrases)
    phrases = sum(len(tw.parse(c).noun_phrases) for c in data.captions)
    assert colours_named < 0.4 * phrases
    assert {tw.parse(c).kind for c in data.captions} == set(tw.KINDS)


def test_finetune_labels_are_exact(finetune):
    assert len(finetune.captions) == 300
    seen_negatives, seen_positives = set(), set()
    for i, (caption, s) in enumerate(zip(finetune.captions, finetune.scenes)):
        assert tw.holds(caption, s)
        assert all(np_.colour is not None for np_ in tw.parse(caption).noun_phrases)
        for kind, negative in finetune.negatives[i].items():
            assert not tw.holds(negative, s), (kind, caption, negative)
            seen_negatives.add(kind)
        for kind, positive in finetune.positives[i].items():
            assert tw.holds(positive, s) and positive != caption, (kind, caption, positive)
            seen_positives.add(kind)
        neg_scene = finetune.negative_scenes[i]
        assert tw.holds(finetune.negative_image_captions[i], neg_scene)
        assert not tw.holds(caption, neg_scene)
    assert seen_negatives == set(tw.NEGATIVE_KINDS)
    assert seen_positives == set(tw.POSITIVE_KINDS)
    assert np.array_equal(finetune.negative_images[:20], tw.render_batch(finetune.negative_scenes[:20]))


def test_swap_att_negatives_have_two_different_shapes(finetune):
    swaps = [n["swap_att"] for n in finetune.negatives if "swap_att" in n]
    assert swaps
    for text in swaps:
        first, second = tw.parse(text).noun_phrases
        assert first.shape and second.shape and first.shape != second.shape


def test_hard_negative_and_positive_text_api():
    rng = np.random.default_rng(0)
    assert tw.hard_negative("a red circle left of a blue square", HAND, "flip_rel", rng) in (
        "a red circle right of a blue square", "a red circle to the right of a blue square")
    assert tw.hard_positive("a red circle left of a blue square", HAND, "converse", rng) in (
        "a blue square right of a red circle", "a blue square to the right of a red circle")
    assert tw.hard_negative("a red circle", HAND, "swap_rel", rng) is None  # not applicable


def test_zero_shot_sets():
    for attribute, classes in (("shape", tw.SHAPES), ("colour", tuple(tw.COLOURS))):
        z = tw.zero_shot_set(attribute, 10, seed=0)
        assert np.bincount(z.labels).tolist() == [10] * len(classes)
        assert len(z.prompts) == len(classes) and z.images.shape[0] == 10 * len(classes)
    assert tw.zero_shot_prompt("colour", "orange") == "a photo of an orange shape"


# ---------------------------------------------------------------- benchmarks

@pytest.fixture(scope="module")
def benches():
    return toy_benchmarks.build_all()


def test_benchmarks_are_deterministic_and_pinned(benches):
    assert tw.BENCHMARK_VERSION == "toyworld-bench-1"
    assert set(benches) == set(tw.BENCHMARK_SPECS)
    # every text and image byte (every field of every item) is pinned: a build that depended on anything but its
    # seeds (global RNG state, the order tests run in) or changed without a new version fails here
    assert toy_benchmarks.content_sha256(benches) == toy_benchmarks.BENCHMARK_SHA256
    size = {name: spec.size for name, spec in tw.BENCHMARK_SPECS.items()}
    for name, keys in (("sugarcrepe", tw.SUGARCREPE_TYPES), ("hard_positives", ("replace", "swap")),
                       ("bivlc", tw.BIVLC_TYPES)):
        assert {k: len(v) for k, v in benches[name].items()} == dict.fromkeys(keys, size[name])
    assert len(benches["aro_order"]) == size["aro_order"]
    assert len(benches["retrieval"].captions) == size["retrieval"] == benches["retrieval"].images.shape[0]
    assert benches["zeroshot_shape"].images.shape == (size["zeroshot_shape"] * 4, 64, 64, 3)
    assert benches["zeroshot_colour"].images.shape == (size["zeroshot_colour"] * 6, 64, 64, 3)


def test_sugarcrepe_pairs_are_oracle_exact(benches):
    for type_, items in benches["sugarcrepe"].items():
        for item in items:
            assert tw.holds(item.positive, item.scene) and not tw.holds(item.negative, item.scene)
            assert item.image.shape == (64, 64, 3)
        if type_ == "swap_att":
            for item in items:
                a, b = tw.parse(item.positive).noun_phrases
                assert a.shape != b.shape


def test_hard_positive_sets(benches):
    for items in benches["hard_positives"].values():
        for item in items:
            assert tw.holds(item.caption, item.scene) and tw.holds(item.positive, item.scene)
            assert not tw.holds(item.negative, item.scene)
            assert len({item.caption, item.positive, item.negative}) == 3


def test_bivlc_negative_images_are_exact(benches):
    for items in benches["bivlc"].values():
        for item in items:
            assert tw.holds(item.caption0, item.scene0) and not tw.holds(item.caption1, item.scene0)
            assert tw.holds(item.caption1, item.scene1) and not tw.holds(item.caption0, item.scene1)
        assert np.array_equal(items[0].image1, tw.render(items[0].scene1))


def test_aro_order_perturbations_differ_and_keep_the_words(benches):
    for item in benches["aro_order"]:
        assert len(item.perturbations) == 4
        for p in item.perturbations:
            assert p != item.caption and sorted(p.split()) == sorted(item.caption.split())


def test_retrieval_captions_match_only_their_image(benches):
    r = benches["retrieval"]
    parsed = [tw.parse(c) for c in r.captions[:150]]
    for j, s in enumerate(r.scenes[:150]):
        assert [i for i, c in enumerate(parsed) if tw.evaluate(c, s)] == [j]


# ---------------------------------------------------------------- tokenizer and model

def test_tokenizer_round_trip_and_eot_is_max(benches):
    tok = tw.ToyTokenizer()
    texts = [item.positive for items in benches["sugarcrepe"].values() for item in items]
    texts += benches["zeroshot_colour"].prompts + list(benches["aro_order"][0].perturbations)
    ids = tok(texts)
    assert ids.shape == (len(texts), 16) and ids.dtype == torch.long
    assert (ids[:, 0] == tok.sot_id).all()
    assert tok.eot_id == tok.vocab_size - 1 == int(ids.max())
    assert (ids.argmax(dim=-1) == (ids == tok.eot_id).int().argmax(dim=-1)).all()
    assert not tok.unknown_words and (ids != tok.unk_id).all()
    assert [tok.decode(row) for row in ids] == texts
    assert 30 <= tok.vocab_size <= 40


@pytest.fixture
def fresh_unknown_word_warnings(monkeypatch):
    """The tokenizer's once-per-process record, emptied as in a fresh process (and restored after)."""
    from backend.toyworld import tokenizer
    monkeypatch.setattr(tokenizer, "_WARNED_WORDS", set())


def test_tokenizer_unknown_words_and_truncation(fresh_unknown_word_warnings):
    tok = tw.ToyTokenizer(context_length=6)
    with pytest.warns(UserWarning, match="zebra"):
        ids = tok("a zebra")
    assert ids[0, :4].tolist() == [tok.sot_id, tok.word_to_id["a"], tok.unk_id, tok.eot_id]
    assert tok.unknown_words["zebra"] == 1
    long = tok(["a big red circle to the left of a small blue square"])
    assert long.shape == (1, 6) and long[0, -1] == tok.eot_id


def test_tokenizer_warns_once_per_unknown_word_per_process(fresh_unknown_word_warnings):
    first, second = tw.ToyTokenizer(), tw.ToyTokenizer()  # e.g. two toy models loaded side by side
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # record every warning issued, not only those Python would display
        first(["a red zebra", "a zebra"])
        first("a zebra")  # same word, second call
        second("a blue zebra")  # same word, another tokenizer
        second("a zebra and a giraffe")  # a new word
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages
    assert "'zebra'" in messages[0] and "'giraffe'" in messages[1]
    assert all("mapped to <unk>" in m and "grammar" in m for m in messages)  # says what happened and why
    assert {w.filename for w in caught} == {__file__}  # points at the caller, not the tokenizer
    assert first.unknown_words == {"zebra": 3}  # counts stay per tokenizer: the probe's notes read them
    assert second.unknown_words == {"zebra": 2, "giraffe": 1}


def test_toy_model_forward_pass():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(123)
        model, preprocess, tok = tw.create_toy_model(seed=0)
        after = torch.rand(1)
        again, _, _ = tw.create_toy_model(seed=0)
        other, _, _ = tw.create_toy_model(seed=1)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(1))  # the caller's RNG stream is untouched
    config = __import__("backend.toyworld.model", fromlist=["model_config"]).model_config()
    assert config["text_cfg"]["vocab_size"] == tok.vocab_size
    n_params = sum(p.numel() for p in model.parameters())
    assert 150_000 <= n_params <= 350_000
    weights = [model.state_dict(), again.state_dict(), other.state_dict()]
    assert all(torch.equal(a, b) for a, b in zip(weights[0].values(), weights[1].values()))
    assert not all(torch.equal(a, b) for a, b in zip(weights[0].values(), weights[2].values()))
    rng = np.random.default_rng(0)
    pixels = [tw.render(tw.sample_scene(rng)) for _ in range(2)]
    images = torch.stack([preprocess(tw.to_pil(p)) for p in pixels])
    assert images.shape == (2, 3, 64, 64)
    expected = (torch.from_numpy(pixels[0]).permute(2, 0, 1) / 255 - torch.tensor(
        tw.model.IMAGE_MEAN)[:, None, None]) / torch.tensor(tw.model.IMAGE_STD)[:, None, None]
    assert torch.allclose(images[0], expected, atol=1e-5)  # no resizing at 64x64
    model.eval()
    with torch.no_grad():
        image_features, text_features, _ = model(images, tok(["a red circle", "a cross", "a blue square"]))
    assert image_features.shape == (2, 64) and text_features.shape == (3, 64)
    assert torch.isfinite(image_features).all() and torch.isfinite(text_features).all()
