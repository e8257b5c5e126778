"""The additions' sixth coverage round (issue 21): what the new sites make (a mixed list's member, a kindred thing
"next to" the last noun, worn things one of each), and the outputs judged absurd or wrong while tuning
(tests/data/perturb-judged-addobj6-new.csv), which must never be made again.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def objects(caption):
    """Every addition/object negative, as normalized texts."""
    return made(caption, ["addition"], subtype="object")


MAKES = [
    # a list whose members share no kindred set takes a member kindred to one of them that fits every member
    # The counts over 20,977 captions (stop 49) rank other things first: no onion joins the list now.
    (" A plate containing potatoes, carrots and chicken. ", " A plate containing potatoes, carrots and chicken next to a sandwich. "),
    ("A baby holding a spoon looking at a cupcake and candle.",
     "A baby holding a spoon looking at a cupcake, vase and candle."),
    # a kindred thing seen with the scene goes "next to" the caption's last noun
    ("A small toy is sitting on a plate of pizza.", "A small toy is sitting on a plate of pizza next to a salad."),
    ("Two men and one woman in front of an elephant.", "Two men and one woman in front of an elephant next to a giraffe."),
    # worn things, one of each
    ("A man wearing sunglasses and a black hat.", "A man wearing sunglasses, a scarf and a black hat."),
    ("A man that has glasses and a hat.", "A man that has glasses, a scarf and a hat."),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_additions_are_made(caption, expected):
    assert normalized(expected) in objects(caption)


NEVER = [
    # a kite beside a game's ball (judged absurd on held-out ids: a tennis match, a baseball player, a soccer game)
    ("A man in a tennis tournament getting ready to hit the ball",
     "A man in a tennis tournament getting ready to hit the ball next to a kite"),
    ("A man in grey baseball uniform throwing a ball.", "A man in grey baseball uniform throwing a ball next to a kite."),
    ("Group of soccer players on field kicking ball.", "Group of soccer players on field kicking ball next to a kite."),
    # a mixed list's member must fit the other members: a bicycle's kindred bus or car is no thing in a room
    ("A room with chair, bicycle, television and a Christmas tree.",
     "A room with chair, bicycle, television, car and a Christmas tree."),
    ("A room with chair, bicycle, television and a Christmas tree.",
     "A room with chair, bicycle, television, bus and a Christmas tree."),
    # "chicken" with no article is the meat: no farm animal beside it (main made "cooking chicken and a pig")
    ("A man is cooking chicken", "A man is cooking chicken and a pig"),
    ("A man is cooking chicken", "A man is cooking chicken next to a horse"),
    (" A plate containing potatoes, carrots and chicken. ", " A plate containing potatoes, carrots and chicken next to a pig. "),
    # a kindred thing "next to" a noun of another sense: the ball crosses home plate
    ("A catcher is ready to catch the ball after it crosses the plate.",
     "A catcher is ready to catch the ball after it crosses the plate next to a bowl."),
    # no second hat, and no necklace with a suit (dropped from the worn set while tuning)
    ("A man wearing sunglasses and a black hat.", "A man wearing sunglasses, a cap and a black hat."),
    ("A portrait picture of a young man in a suit and tie.", "A portrait picture of a young man in a suit, necklace and tie."),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_invalid_additions_are_not_made(caption, never):
    assert normalized(never) not in objects(caption)
