"""The errs of the stop-36 natural samples (tests/data/perturb-judged-replace8-natural.csv,
perturb-judged-addition8-natural.csv) are never made again, and the rules that barred them leave alone what they
must: a holder full "of" things stays a holder (`refill_neighbours`), a perfect "has parked" takes no "driving
down" (`motion`), an added colour never splits "single engine" nor joins "brightly colored"
(`addition_attributes`); a ball game's home plate or base takes no kindred thing, and no dog joins a batter
(`addition`, `addition_partners`)."""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

NEVER = [
    ("Four teddy bears are lined up in a row on a shelf of books.", ["replace"],
     "Four teddy bears are lined up in a row on a couch of books."),
    ("A green car has parked on the curb in a parking lot", ["replace"],
     "A green car has driving down the curb in a parking lot"),
    ("A brightly colored single engine plane is high in the clear sky.", ["addition"],
     "A brightly colored single black engine plane is high in the clear sky."),
    # noticed this stop: a ball game's own things take no kindred, and no dog joins a player in the game
    ("A catcher is ready to catch the ball after it crosses the plate", ["addition"],
     "A catcher is ready to catch the ball after it crosses the plate and a bowl"),
    ("A batter stands at home plate", ["addition"], "A batter and a dog stand at home plate"),
]

STILL_MADE = [
    ("A bowl of fruit on a kitchen table.", ["replace"], "A tray of fruit on a kitchen table."),
    ("A red car parked on the street.", ["replace"], "A red car driving down the street."),
    ("A car is parked on the road.", ["replace"], "A car is driving down the road."),
    ("A single plane flying in the clear sky.", ["addition"], "A single black plane flying in the clear sky."),
    ("A sandwich sitting on a plate", ["addition"], "A sandwich sitting on a plate with a banana"),
    ("A man standing on a beach", ["addition"], "A man and a dog standing on a beach"),
]


@pytest.mark.parametrize(("caption", "families", "never"), NEVER)
def test_a_judged_err_is_never_made(caption, families, never):
    assert normalized(never) not in made(caption, families)


@pytest.mark.parametrize(("caption", "families", "output"), STILL_MADE)
def test_the_same_rules_still_make_these(caption, families, output):
    assert normalized(output) in made(caption, families)
