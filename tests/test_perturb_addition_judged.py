"""Regression tests from the judged samples of issue 21's addition work (seeds 28 and 29, odd ids).

Each output judged err (or an easily barred impl or doubt) in `tests/data/perturb-judged-natural-addition-7.csv`
or `tests/data/perturb-judged-addition-new-since-2.csv` is no longer made.
"""
import pytest

from tests.support.perturb_outputs import every_variant


def _outputs(caption: str) -> list[str]:
    return [v.text for v in every_variant(caption, ["addition"])]


@pytest.mark.parametrize(("caption", "judged"), [
    # err: a look put on a possessive ("a red-haired children's party": the article is the party's)
    ("People and dishes from cake at a children's party.", "red-haired children's"),
    # err: "people" may name the men already ("People, men and dishes")
    ("People and dishes from cake at a children's party.", "People, men"),
    # impl: a colour beside the one the caption paints it
    ("An old toilet painted red with a wooden lid.", "old yellow toilet"),
    # impl: a verb that takes one object at a time
    ("A male tennis player stands on court and prepares to hit the ball.", "the ball and a kite"),
    ("A pregnant woman laying in bed reading a book.", "a book and a clock"),
    # doubt: the camera someone looks into is the photographer's, outside the photo
    ("A giraffe stares into the camera while standing on green grass in front of a shade tree.", "red camera"),
    ("A professionally dressed man poses for the camera.", "white camera"),
])
def test_a_judged_output_is_not_made_again(caption, judged):
    assert not [text for text in _outputs(caption) if judged in text]


def test_no_colour_on_a_painted_thing_whatever_the_parse():
    assert not [text for text in _outputs("An old toilet painted red with a wooden lid.") if "toilet painted" in text
                and text.split(" toilet")[0].split()[-1] != "old"]
