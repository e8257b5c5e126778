"""The failure browser's and the Probe's margin on hand-made items: the best rival's score minus the true caption's,
per image (>= 0: wrong, a tie included), with the texts' roles as the benchmark declares them."""
import pytest

from backend.benchmarks.results import image_margins, rivals, text_roles


def test_by_default_text_k_is_image_ks_and_the_rest_are_negatives():
    assert text_roles("toy-sugarcrepe", 2, 1) == ["true", "negative"]
    assert text_roles("toy-bivlc", 2, 2) == ["true", "true"]
    assert text_roles("toy-aro-order", 5, 1) == ["true", *["negative"] * 4]
    assert text_roles("no-such-benchmark", 3, 1) == ["true", "negative", "negative"]


def test_a_hard_positive_is_neither_true_caption_nor_rival():
    roles = text_roles("toy-hard-positives", 3, 1)
    assert roles == ["true", "negative", "positive"] and rivals(roles, 0) == [1]
    # s(c) = 0.30 beats s(c_n) = 0.25; the positive above both does not make the item wrong
    assert image_margins([[0.30], [0.25], [0.40]], roles) == [pytest.approx(-0.05)]


@pytest.mark.parametrize("scores, expected", [
    ([[0.52], [0.50]], [-0.02]),  # the true caption leads: right, negative margin
    ([[0.5191], [0.5222]], [0.0031]),  # the toy item 45: the negative leads, wrong
    ([[0.5], [0.5]], [0.0]),  # a tie is wrong (strict), margin 0
    ([[0.4], [0.3], [0.45], [0.2]], [0.05]),  # the best of several rivals counts
])
def test_one_image_margins(scores, expected):
    assert image_margins(scores, ["true", *["negative"] * (len(scores) - 1)]) == pytest.approx(expected)


def test_a_two_by_two_item_has_a_margin_per_image_against_the_other_images_caption():
    # scores[caption][image]: image 0 prefers caption 0 (0.6 vs 0.4), image 1 prefers caption 0 too (0.5 vs 0.3)
    assert image_margins([[0.6, 0.5], [0.4, 0.3]], ["true", "true"]) == pytest.approx([-0.2, 0.2])
