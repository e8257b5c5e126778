"""The relation replacements of issue 21's sixth replace_rel round: what each new rule makes, and what it must
never make. The "makes" captions are even-id SugarCrepe captions (the tuning set) or short ones of the same shape;
the "never" cases are the invalid outputs met while tuning and those judged invalid in the held-out sample
(tests/data/perturb-judged-rel6-new.csv)."""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

MAKES = [
    # a particle after the held thing (aimed_acts._separated_slot)
    ("relation", "a man holding his cell phone up in a crowd", "a man putting his cell phone down in a crowd"),
    ("relation", "A woman holds her umbrella up in the rain.", "A woman puts her umbrella down in the rain."),
    # a swing at a ball caught instead, in the base form after "to" too (aimed_acts._swing_slot)
    ("relation", "A tennis player taking a swing at a ball", "A tennis player catching a ball"),
    ("relation", "A female tennis player prepares to swing at a tennis ball.",
     "A female tennis player prepares to catch a tennis ball."),
    ("relation", "A little kid is swinging at a water balloon.", "A little kid is catching a water balloon."),
    # a kiss on a head patted instead (aimed_acts._kiss_slot)
    ("relation", "A man kisses the top of a woman's head.", "A man pats the top of a woman's head."),
    ("relation", "The man kisses the girl on the head as she laughs.",
     "The man pats the girl on the head as she laughs."),
    # a bite of food cut as a slice (aimed_acts._bite_slot), teeth flossed (aimed_acts._brush_slot)
    ("relation", "A girl takes a bite of her pepperoni pizza.", "A girl cuts a slice of her pepperoni pizza."),
    ("relation", "A very small cute kid brushing his teeth.", "A very small cute kid flossing his teeth."),
    # verb phrases (verb_phrases.SWAPS)
    ("relation", "A man working on his laptop in the dark.", "A man putting away his laptop in the dark."),
    ("relation", "A man in a black jacket is flipping through a large book.",
     "A man in a black jacket is closing a large book."),
    ("relation", "A picture of a person doing a skateboarding trick.",
     "A picture of a person watching a skateboarding trick."),
    ("relation", "People waiting for a train at the station.", "People getting off a train at the station."),
    # an act about to be done, in its base form (verb_phrases.readied)
    ("relation", "A young boy gets ready to fly a kite.", "A young boy gets ready to carry a kite."),
    ("relation", "A man is about to swing at the ball.", "A man is about to catch the ball."),
    ("relation", "A boy trying to pick up a ball.", "A boy trying to put down a ball."),
    # things in order scattered (arrangement.arrangement_slots)
    ("relation", "Several refrigerators are lined up by a wall.", "Several refrigerators are scattered by a wall."),
    ("relation", "Tall boxes are stacked on a brown sidewalk.", "Tall boxes are scattered on a brown sidewalk."),
]


@pytest.mark.parametrize(("subtype", "caption", "expected"), MAKES)
def test_new_replacements_are_made(subtype, caption, expected):
    assert normalized(expected) in made(caption, ["replace"], subtype=subtype)


NEVER = [
    # met while tuning: a held thing's goal or source the new act does not have
    ("relation", "Man and woman holding a knife up to a small cake.",
     "Man and woman putting a knife down to a small cake."),
    ("relation", "A boy picks the ball up off the ground.", "A boy puts the ball down off the ground."),
    # met while tuning: an order named after the participle
    ("relation", "Plates stacked on top of each other.", "Plates scattered on top of each other."),
    ("relation", "Many motorcycles are lined up in a row.", "Many motorcycles are scattered in a row."),
    ("relation", "People lined up to board a bus.", "People scattered to board a bus."),
    # a toothbrush named: flossing with it is absurd
    ("relation", "A girl with a green shirt brushing her teeth with a blue toothbrush.",
     "A girl with a green shirt flossing her teeth with a blue toothbrush."),
    # a wait with a purpose or for a train on its way
    ("relation", "People waiting for the bus to arrive.", "People getting off the bus to arrive."),
    ("relation", "The backsides of people as they wait for a train coming in to the station.",
     "The backsides of people as they get off a train coming in to the station."),
    # a base form of purpose is no act about to be done
    ("relation", "A man using a phone to take a picture.", "A man using a phone to pose for a picture."),
    # judged absurd in the held-out sample: a mishap is nothing one tries to do
    ("relation", "Four surfers are trying to catch a wave as they stand.",
     "Four surfers are trying to wipe out on a wave as they stand."),
    ("relation", "a man with a tennis racket gets ready to swing his racket",
     "a man with a tennis racket gets ready to drop his racket"),
    # a kiss not on a head
    ("relation", "A man kissing a woman on the cheek.", "A man patting a woman on the cheek."),
    # judged in the held-out sample (perturb-judged-rel6-new.csv), removed after judging: a participle before its
    # noun (err), a toothbrush named before the brushing (doubt)
    ("relation", "Baseball memorabilia is displayed in glass stacked casings.",
     "Baseball memorabilia is displayed in glass scattered casings."),
    ("relation", "A small child that is holding a toothbrush and brushing their teeth.",
     "A small child that is holding a toothbrush and flossing their teeth."),
]


@pytest.mark.parametrize(("subtype", "caption", "output"), NEVER)
def test_invalid_replacements_are_never_made(subtype, caption, output):
    assert normalized(output) not in made(caption, ["replace"], subtype=subtype)
