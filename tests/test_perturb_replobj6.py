"""REPLACE's object refills added for SugarCrepe's replace_obj (issue 21, sixth round): new lexicon object groups
(signs, textiles, bottles, drinks, shops, meat, starches, more fruit and vegetables), whole compounds whose head is a
kind of a group word (compounds.py), no mass noun after "a" (nouns.takes_article). What each rule makes, and what
it must never make: outputs found while tuning on even ids and the err and impl rows of the judged draws
(tests/data/perturb-judged-replobj6*.csv).
"""
import pytest

from backend.perturb.core import normalized
from backend.perturb.nouns import takes_article
from tests.support.perturb_outputs import every_variant, made


def shown(caption, family="replace"):
    """Every object refill of `family` the Probe would show (labelled plausible)."""
    return made(caption, [family], subtype="object", shown=True)


MAKES = [
    # signs (a street sign is a sign whose modifier names its use)
    ("A street sign with six different locations on it.", "A billboard with six different locations on it."),
    ("street signs on the corner of Gladys and Detroit", "banners on the corner of Gladys and Detroit"),
    # fruit, vegetables, meat, starches
    ("Chicken and mushrooms served with broccoli garnished with parsley.",
     "Chicken and carrots served with broccoli garnished with parsley."),
    ("A kale and sweet pea home garden getting the last rays of sunlight.",
     "A cabbage and sweet pea home garden getting the last rays of sunlight."),
    ("Three sausages in buns are covered with various toppings.",
     "Three steaks in buns are covered with various toppings."),
    ("A table topped with apples, oranges and bananas.", "A table topped with apples, oranges and grapes."),
    # textiles, bottles, drinks, shops
    ("A room filled with furniture and very large rugs.", "A room filled with furniture and very large blankets."),
    ("A display in a store filled with lots of bottles of soda.",
     "A display in a store filled with lots of jugs of soda."),
    ("A cutting board with pizza and a glass of wine", "A cutting board with pizza and a glass of soda"),
    ("People are walking in front of some shops.", "People are walking in front of some restaurants."),
    # a compound whose head is a kind of a group word is refilled whole, in that word's fit class
    ("A metallic refrigerator freezer next to a wooden counter.", "A metallic oven next to a wooden counter."),
    ("Two fighter jets flying in formation.", "Two helicopters flying in formation."),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_new_refills_are_made(caption, expected):
    assert normalized(expected) in shown(caption)


NEVER = [
    # a mass noun where one thing is counted (even ids: "diced sausage" may be "diced bacon", "a sausage" not)
    ("There is a sausage on the plate.", "There is a bacon on the plate."),
    ("There is a sausage on the plate.", "There is a ham on the plate."),
    # a bare singular count noun for a mass noun (judged err, odd ids; noodles were dropped from the starches)
    ("a chicken meal with carrots broccoli and rice", "a chicken meal with carrots broccoli and noodle"),
    # a compound's "no" is the start of its message (judged err, odd ids)
    ("A residential street has an orange no parking sign near a sidewalk.",
     "A residential street has an orange no poster near a sidewalk."),
    # appliances a thing stands on or a child looks into (even ids; dishwasher and blender were dropped)
    ("A skillet on a stove with vegetables in it", "A skillet on a blender with vegetables in it"),
    ("a little girl looking inside the refrigerator.", "a little girl looking inside the dishwasher."),
    # a blueberry is blue (even ids), a child drinks no beer (even ids; milk was left out of the drinks)
    ("A big bin filled with some ripe yellow bananas.", "A big bin filled with some ripe yellow blueberries."),
    ("A little boy drinking milk from a bottle while laying in bed.",
     "A little boy drinking beer from a bottle while laying in bed."),
    # a shirt is no suit on a tennis court (even ids; suits were left out of the garments)
    ("A young man in a yellow shirt preparing to serve in an tennis match.",
     "A young man in a yellow suit preparing to serve in an tennis match."),
    # cakes for sale are in no hotel (even ids; hotels were left out of the shops)
    ("Rows of cylindrical cakes for sale in a bakery, seen behind glass.",
     "Rows of cylindrical cakes for sale in a hotel, seen behind glass."),
]


@pytest.mark.parametrize(("caption", "output"), NEVER)
def test_refill_is_never_made(caption, output):
    assert normalized(output) not in shown(caption)


CE_CLIP_NEVER = [
    # judged impl in the first draw: avocados and pumpkins were dropped from the produce groups
    ("The person holds a plate with two red apples near pedestrians holding umbrellas.",
     "The person holds a plate with two red avocados near pedestrians holding umbrellas."),
    ("A sandwich has cilantro, carrots, and other vegetables.",
     "A sandwich has cilantro, pumpkins, and other vegetables."),
]


@pytest.mark.parametrize(("caption", "output"), CE_CLIP_NEVER)
def test_ce_clip_refill_is_never_made(caption, output):
    assert normalized(output) not in shown(caption, family="ce_clip")


def test_no_mass_noun_takes_an_article_but_a_dish():
    assert takes_article("sausage") and takes_article("salad") and takes_article("beer")
    assert not takes_article("bacon") and not takes_article("rice") and not takes_article("wine")


def test_additions_name_no_mass_noun_sign_or_bathroom_towel():
    """"next to a rice" was made once starches joined the groups; "with a sign" on a street and "with a towel" in a
    bathroom were judged arguably true (a typical photo shows one)."""
    captions = ("A collage displays colorful deserts and fresh vegetables.", "A red fire hydrant on a city sidewalk.",
                "A sink and mirror in a very small bathroom.")
    added = {v.text for caption in captions for v in every_variant(caption, ["addition"])}
    assert not any(word in text for text in added for word in (" a rice", " a sign", " a towel"))
