"""The third round of object swaps for SugarCrepe's swap_obj (issue 21): compounds that move whole, groups of
people that swap as phrases, "with" nouns that stand or act apart, things of one kind of different number, and
no swap where one thing holds the other. What each makes, and what it must never make (outputs judged invalid or
absurd while tuning on even ids or in the judged held-out samples, tests/data/perturb-judged-swapobj3-*.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def objects(caption):
    """Every binding_swap "object" negative, as normalized texts."""
    return made(caption, ["binding_swap"], subtype="object")


MAKES = [
    # the "with" noun does something else, or stands somewhere of its own
    ("A woman holding a game controller with a man looking on.",
     "A man holding a game controller with a woman looking on."),
    ("A cat sitting on a couch with a dog on the floor.", "A dog sitting on a couch with a cat on the floor."),
    # the "with" is the room's, and the bed has pillows of its own
    ("A bed with stacked pillows is in a bedroom with a chair.",
     "A chair with stacked pillows is in a bedroom with a bed."),
    # a group of people swaps whole
    ("A group of people watching a woman cutting a cake.", "A woman watching a group of people cutting a cake."),
    # compounds move whole
    ("A small toilet sitting next to a bathroom sink.", "A small bathroom sink sitting next to a toilet."),
    # two vehicles of different number, one behind the other: now a role swap (test_perturb_swap_objects4.py)
    # jugs, pots and bottles are tableware
    ("A wooden handle in a pot with soup or stew next to an empty bowl.",
     "A wooden handle in a bowl with soup or stew next to an empty pot."),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_new_object_swaps_are_made(caption, expected):
    assert normalized(expected) in objects(caption)


NEVER = [
    # judged still true at stop 33 (perturb-judged-binding-swap5-natural.csv): sinks are white too
    ("A white toilet sitting next to a bathroom sink.", "A white bathroom sink sitting next to a toilet."),
    # one holds, carries or covers the other: reversed, it is absurd
    ("A wooden spoon in a soup pot on the stove.", "A wooden soup pot in a spoon on the stove."),
    ("A bottle in a ice bucket sits on a floor next to a luggage rack.",
     "An ice bucket in a bottle sits on a floor next to a luggage rack."),
    ("A piece of dutch chocolate cake with a fork  on a plate.",
     "A piece of dutch chocolate cake with a plate  on a fork."),
    ("A very young boy is using a keyboard on a laptop computer.",
     "A very young boy is using a laptop computer on a keyboard."),
    ("A low flying airplane over a parked silver van.", "A low flying silver van over a parked airplane."),
    # food inside or on food
    ("A table topped with a cake covered in berries next to a plate of sandwiches.",
     "A table topped with berries covered in a cake next to a plate of sandwiches."),
    ("Three sausages in buns are covered with various toppings.",
     "Buns in three sausages are covered with various toppings."),
    ("Sliced bananas sit on top of a pastry dish on a plate.",
     "Sliced bananas sit on top of a plate on a pastry dish."),
    # around: a table does not sit around chairs
    ("some red chairs are sitting around a small table", "a small table is sitting around some red chairs"),
    # next to: the swap says the same
    ("Two buses parked in a parking lot next to cars.", "Cars parked in a parking lot next to two buses."),
    ("One bicycle is parked next to many motorcycles.", "Many motorcycles are parked next to one bicycle."),
    # an animal no curated list names does not swap phrases (and "two zebra is" does not agree)
    ("An antilope is eating grass in between two zebra.", "Two zebra is eating grass in between an antilope."),
    # doings only one of two animals does
    ("Three cows standing at a watering hole with birds flying overhead.",
     "Birds standing at a watering hole with three cows flying overhead."),
    # a child and an adult, or conjuncts, across a "with"
    ("A man and woman sit on benches with a small child.", "A child and woman sit on benches with a small man."),
    ("A small child is in the kitchen with an adult and dog.", "A small adult is in the kitchen with a child and dog."),
    # "sharing" stays true, and Africa is no place of the pigs' own
    ("Zebras share a grassland with wild pigs in Africa.", "Pigs share a grassland with wild zebras in Africa."),
    # a side is no place of the fork's own; the salad bowl stays whole
    ("A large salad bowl with a fork on the side on a flowered table..",
     "A large salad fork with a bowl on the side on a flowered table.."),
    # held-out captions, read before the judged sample was drawn: a compound split, a racket and its ball,
    # a "with" list, many people on one thing
    ("A laptop computer sitting on a desk next to a smart phone.",
     "A phone sitting on a desk next to a smart laptop computer."),
    ("Chicago style deep dish pizza with tomato sauce and sausage.",
     "Chicago style deep sausage with tomato sauce and dish pizza."),
    ("a man swinging a tennis racket and hitting a ball on a tennis court.",
     "a man swinging a ball and hitting a tennis racket on a tennis court."),
    ("A man holding a tennis racket getting ready to hit a tennis ball.",
     "A man holding a tennis ball getting ready to hit a tennis racket."),
    ("A blue tennis racket has a yellow tennis ball on it.", "A blue tennis ball has a yellow tennis racket on it."),
    ("A woman on a cell phone with a group of people.", "A group of people on a cell phone with a woman."),
    ("A man on a skateboard riding by food vendors.", "Food vendors on a skateboard riding by a man."),
    # errs and absurd outputs of the judged held-out sample (tests/data/perturb-judged-swapobj3-natural.csv):
    # neighbours in a list, a thing and its "with"
    ("A plate of cooked noodles, a fork, and a knife is displayed.",
     "A plate of cooked noodles, a knife, and a fork is displayed."),
    ("A couple of men in front of a television with a remote.",
     "A couple of men in front of a remote with a television."),
    # a tub is a bathtub, not tableware
    ("A cup sits on the edge of a white tub in a bathroom.", "A tub sits on the edge of a white cup in a bathroom."),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_invalid_object_swaps_are_never_made(caption, never):
    assert normalized(never) not in objects(caption)
