"""The second round of binding swaps for SugarCrepe's swap_att and swap_obj (issue 21): foreground and background
trading places, people phrases of different number with their verbs made to agree, attribute swaps between two
objects of one kind that play different parts, predicative colours and materials, any adjectives between two
things of one kind. What each makes, and what it
must never make (outputs judged invalid or absurd while tuning on even ids or in the judged held-out sample,
tests/data/perturb-judged-swap-scene.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def binding(caption, subtype=None):
    """Every binding_swap negative, as normalized texts, optionally of one subtype."""
    return made(caption, ["binding_swap"], subtype=subtype)


MAKES = [
    ("Two cows in a meadow with a historic structure in the background.", "background_object",
     "A historic structure in a meadow with two cows in the background."),
    ("A group of people in a park with a tall clock tower in the background.", "background_object",
     "A tall clock tower in a park with a group of people in the background."),
    # people of different number trade whole phrases, and their verbs agree with the new subjects
    ("this lady is using controllers and those men are watching", "object",
     "those men are using controllers and this lady is watching"),
    ("People watch a man delivering a lecture on a screen.", "object",
     "A man watches people delivering a lecture on a screen."),
    # a sex word moves with its noun
    ("A male skier is posing for the camera while a young girl is in the background.", "object",
     "A young girl is posing for the camera while a male skier is in the background."),
    # one kind of object, in different parts of the scene
    ("a small elephant walks underneath a big elephant", "attribute",
     "a big elephant walks underneath a small elephant"),
    # a colour after "painted"
    ("The metro train is painted white with blue lettering.", "attribute",
     "The metro train is painted blue with white lettering."),
    # a material noun trades with a colour between two pieces of furniture or tableware
    ("A sandwich is sitting in a white plate on top of a wood table.", "attribute",
     "A sandwich is sitting in a wood plate on top of a white table."),
    # any adjective between two things of one kind
    ("A green chair is next to a long bench.", "kind_attribute", "A long chair is next to a green bench."),
    ("A skillet contains diced meat and mixed vegetables.", "kind_attribute",
     "A skillet contains mixed meat and diced vegetables."),
]


@pytest.mark.parametrize(("caption", "subtype", "expected"), MAKES)
def test_new_swaps_are_made(caption, subtype, expected):
    assert normalized(expected) in binding(caption, subtype)


NEVER = [
    # the subject stands on a thing, or in water: the far thing would land there
    ("A cat on a bed with a tree in the background.", "A tree on a bed with a cat in the background."),
    ("A boat in a lake with a house in the background.", "A house in a lake with a boat in the background."),
    # a landform does not come to the front
    ("A horse in a field with mountains in the background.", "Mountains in a field with a horse in the background."),
    # the subject does something the far thing cannot
    ("A man throwing a frisbee in a park with a building in the background.",
     "A building throwing a frisbee in a park with a man in the background."),
    # one kind of object in one part of the scene: the swap says the same
    ("A black goat next to a white goat.", "A white goat next to a black goat."),
    ("A black dog and a white dog.", "A white dog and a black dog."),
    # a material lands on a thing that is not made of it
    ("Two people outside of a stone building near a red fire hydrant.",
     "Two people outside of a red building near a stone fire hydrant."),
    # found tuning on even ids: a material on an appliance, a word of a name
    ("there is a black microwave that is on top of a wooden table",
     "there is a wooden microwave that is on top of a black table"),
    ("A dinner plate that has white steamed rice with stir fry vegetables and chicken.",
     "A dinner plate that has white fry rice with stir steamed vegetables and chicken."),
    ("pizza on a serving tray with empty plates next to it", "pizza on an empty tray with serving plates next to it"),
    # from the first judged held-out sample (seed 47): a listed far thing moved alone, the sides of "with" and
    # conjuncts, a man in a dress, openness off a field, size onto a view
    ("a tall clock tower with bushes and trees in the foreground",
     "bushes with a tall clock tower and trees in the foreground"),
    ("An umpire is talking with two players on different teams.",
     "Two players are talking with an umpire on different teams."),
    ("Cows are grazing in a wet pasture with birds.", "Birds are grazing in a wet pasture with cows."),
    ("A young man and a small boy are talking about a piece of pizza.",
     "A young boy and a small man are talking about a piece of pizza."),
    ("A woman in a white dress and a man in gray stand near a cake on a white table under a white canopy.",
     "A man in a white dress and a woman in gray stand near a cake on a white table under a white canopy."),
    ("A girl in a floral dress sitting next to a boy in a blue shirt eating food.",
     "A girl in a floral shirt sitting next to a boy in a blue dress eating food."),
    ("A man standing next to a beautiful woman in a short blue skirt facing the crowd.",
     "A woman standing next to a beautiful man in a short blue skirt facing the crowd."),
    ("An elephant walks alone past some big rocks boulders in an open field",
     "An elephant walks alone past some open rocks boulders in a big field"),
    ("A small wheeled airplane on an open runway.", "An open wheeled airplane on a small runway."),
    ("An old advertisement shows a large kitchen with white cabinets and appliances and yellow walls.",
     "An old advertisement shows a yellow kitchen with white cabinets and appliances and large walls."),
    ("A vintage closeup shows a chair with a toddler and a big toy bear.",
     "A big closeup shows a chair with a toddler and a vintage toy bear."),
    # from the final judged sample (seed 48): a noun read as an adjective
    ("a tub boat pulling a small barge through the water", "a small boat pulling a tub barge through the water"),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_invalid_swaps_are_never_made(caption, never):
    assert normalized(never) not in binding(caption)
