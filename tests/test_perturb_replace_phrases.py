"""Replacements beyond one lexicon word (backend/perturb counted, gendered, sports, attribute_phrases,
without, motion): SugarCrepe's replace subsets change counts, a person with the pronouns that point back,
"with" -> "without" and a vehicle's moving <-> parked phrase. Each test pins a rewrite that must appear
and a guard found by reading the outputs on even SugarCrepe ids (COCO captions written out here).
"""
import pytest

from backend.perturb import perturb

PRONOUNS = frozenset({"he", "him", "his", "she", "her", "hers"})


def replaced(caption, subtype):
    """Every replace-family text of one subtype, with a generous quota and no blind refinement."""
    return {v.text for v in perturb(caption, ["replace"], max_per_subtype=50, scorer=None) if v.subtype == subtype}


@pytest.mark.parametrize(("caption", "expected"), [
    ("Three men are skiing down a snow covered hill.", "Two men are skiing down a snow covered hill."),
    ("Three men are skiing down a snow covered hill.", "Four men are skiing down a snow covered hill."),
    ("a desk with 2 monitors and a laptop on it", "a desk with 3 monitors and a laptop on it"),
    ("A herd of elephants standing on top of a field.", "Two elephants standing on top of a field."),
    ("A large group of people standing next to a bus.", "Two people standing next to a bus."),
    ("Several zebras eat the green grass in the pasture.", "Two zebras eat the green grass in the pasture."),
    ("A young boy dressed in yellow holding a pizza.", "A young boy dressed in blue holding a pizza."),
    ("A woman cooking on an old fashioned stove.", "A woman cooking on a modern stove."),
])
def test_counts_and_attribute_phrases_are_replaced(caption, expected):
    assert expected in replaced(caption, "attribute")


@pytest.mark.parametrize(("caption", "unwanted"), [
    # A singular verb agrees with the group word: "Two zebras is" would be ungrammatical.
    ("A group of zebras is standing in a field.", "Two zebras is standing in a field."),
    # "There is a group of sheep" -> "There is two sheep".
    ("There is a group of sheep grazing on the grass.", "There is two sheep grazing on the grass."),
    # Words that restate the count would contradict the new one.
    ("Two dogs both lying on a couch.", "Three dogs both lying on a couch."),
    # Ages and measures are not counts; "one" would need a plural noun and verb.
    ("A two years old boy holding a bat.", "A three years old boy holding a bat."),
    ("One man riding a horse on a beach.", "Two man riding a horse on a beach."),
    # A range is not one count.
    ("Two or three dogs running in a park.", "Three or three dogs running in a park."),
])
def test_counts_keep_the_caption_grammatical_and_consistent(caption, unwanted):
    assert unwanted not in replaced(caption, "attribute")


@pytest.mark.parametrize(("caption", "expected"), [
    ("A man has a red water bottle up to his mouth.", "A woman has a red water bottle up to her mouth."),
    ("A little girl puts her hand in a pasta dish.", "A little boy puts his hand in a pasta dish."),
    ("A woman sitting on a bench with a dog next to her.", "A man sitting on a bench with a dog next to him."),
    ("Several basketball players in the middle of a game.", "Several soccer players in the middle of a game."),
    ("The action in an organized youth baseball game.", "The action in an organized youth football game."),
    ("The bathroom door is open with the light on.", "The bedroom door is open with the light on."),
    ("A batter, catcher and umpire during a baseball game.", "A pitcher, catcher and umpire during a baseball game."),
])
def test_person_with_pronouns_and_sport_are_replaced(caption, expected):
    assert expected in replaced(caption, "object")


@pytest.mark.parametrize("caption", [
    "A man hands a woman her coffee.",  # two people: whose "her"?
    "A bearded man holding his cat.",  # "a bearded woman"
    "A woman in a long dress holding her purse.",  # "a man in a long dress"
    "Two women talking about her dog.",  # a plural noun has no one referent
])
def test_gender_swaps_only_where_the_person_and_pronouns_are_clear(caption):
    changed = {text for text in replaced(caption, "object")
               if PRONOUNS & set(text.lower().replace(".", "").split())
               != PRONOUNS & set(caption.lower().replace(".", "").split())}
    assert not changed


@pytest.mark.parametrize(("caption", "sport"), [
    ("Baseball players in their uniforms on a baseball field.", "Baseball players"),  # one "baseball" would stay
    ("A tennis player swinging a racket on the court.", "A tennis player"),  # gear of one sport
])
def test_sport_is_not_replaced_where_it_would_clash(caption, sport):
    assert all(text.startswith(sport) for text in replaced(caption, "object") if "player" in text)


@pytest.mark.parametrize(("caption", "expected"), [
    ("A bathroom with blue walls and pink tile.", "A bathroom without blue walls and pink tile."),
    ("A very cozy looking living room with an oval table.", "A very cozy looking living room without an oval table."),
    ("A red bus is driving down the street.", "A red bus is parked on the street."),
    ("A delivery truck travels along the road by a hill.", "A delivery truck is parked on the road by a hill."),
    ("A large jetliner sitting on top of an airport runway.", "A large jetliner flying over an airport runway."),
    ("A bus is stopped on a dark road.", "A bus is driving down a dark road."),
])
def test_relation_phrases_are_replaced(caption, expected):
    assert expected in replaced(caption, "relation")


@pytest.mark.parametrize(("caption", "unwanted"), [
    # the object appears again: the negative contradicts itself
    ("a man with a tennis racket gets ready to swing his racket",
     "a man without a tennis racket gets ready to swing his racket"),
    # worn: an absurd photo
    ("A girl with a green shirt brushing her teeth.", "A girl without a green shirt brushing her teeth."),
    # someone's: mostly an instrument, misattached to the noun before it
    ("A man taking a picture in a side car mirror with his cell phone.",
     "A man taking a picture in a side car mirror without his cell phone."),
    # body parts, counts and "with" after a verb
    ("A girl with long hair sitting on a bench.", "A girl without long hair sitting on a bench."),
    ("A man with two dogs on a beach.", "A man without two dogs on a beach."),
    # judged doubt: "without lots of cheese" may be true of a pizza with some
    ("A pizza with lots of cheese on a flat brown surface.", "A pizza without lots of cheese on a flat brown surface."),
    ("A cake covered with frosting on a plate.", "A cake covered without frosting on a plate."),
    # people are not parked; ground vehicles do not drive down a field
    ("A man is walking down the street.", "A man is parked on the street."),
    ("A bus parked in a grassy field.", "A bus driving down a grassy field."),
])
def test_relation_phrases_are_left_where_absurd(caption, unwanted):
    assert unwanted not in replaced(caption, "relation")


def test_people_become_children_unless_adults_or_children_are_named():
    assert "Children standing around a waiting room with a flat screen TV." in replaced(
        "People standing around a waiting room with a flat screen TV.", "object")
    for caption in ("Several people walking on a sidewalk, with one man holding an umbrella.",
                    "A group of people riding motorcycles on a race track.",
                    "A family of people sitting at a table with their kids."):
        assert not any("children" in text.lower() for text in replaced(caption, "object"))


def test_judged_errors_of_the_held_out_sample_are_not_produced():
    """Judged err in tests/data/perturb-judged-natural-replace.csv: "pitcher" is a jug outside baseball, and
    "an orange slice" is the fruit, not a colour."""
    assert not any("umpire" in text or "batter" in text or "catcher" in text
                   for text in replaced("A white pitcher holding flowers in a window sill.", "object"))
    assert not any("orange slice" not in text for text in replaced(
        "A plate of blueberry coffee cake with butter and an orange slice on a table.", "attribute"))
