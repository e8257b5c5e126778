"""Which of REPLACE's attribute refills suit the noun they describe.

REPLACE's attribute negative swaps an adjective for a sister of its lexicon
group (a colour for a colour, a material for a material). Some sisters do not
suit the noun, and a text-only model rejects the negative without the image:
a hand-judged natural sample had "Red sheep ..." and "playing with a blue
cow", and on even ids the material swaps made "a paper bench", "a brick
plate", "a concrete plate" and "paper floors". So:

  * a real mammal takes only a coat colour (`COAT_COLOURS`); a thing with
    colours of its own (`visual_classes.NATURAL_COLOURS`: the sky, fruit,
    traffic lights) only one of those ("a cloudy green sky", "a blue apple",
    "pink granny smith apples" and "red and blue traffic lights" were made and
    judged absurd); food that is no sweet only the colours food comes in
    (`FOOD_COLOURS`: no "blue crust", no "purple peas"); a bird, another
    thing or a person's clothes may be any colour; a picture none
    (`PICTURES`: its "black and white" is its style);
  * stone, brick and concrete make walls, fences, buildings, ways, floors,
    benches and sculptures; paper and cardboard make containers and
    tableware; ceramic makes tableware, vessels, fixtures, tiles and
    figurines; leather makes seats, bags, clothes and shoes; wicker makes
    furniture and baskets; glass makes vessels, windows, doors, tables,
    shelves and lamps (left free, they made "a leather spoon", "a glass
    pier", "a wicker window" on even ids). Wood, metal and plastic are left
    free: a thing of almost any kind is made of them.

A class of nouns is WordNet's class of the noun's most frequent sense
(`is_under`), plus a short list where that sense is another thing ("plate"
is first a sheet of metal, "mug" a face).
"""
from __future__ import annotations

from spacy.tokens import Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import ANIMAL, DEPICTION_NOUNS, noun_key, referent
from backend.perturb.object_kinds import kind
from backend.perturb.plausibility_parse import is_under, kind_of
from backend.perturb.visual_classes import COLOURING_COMPOUNDS, NATURAL_COLOURS, visual_values

COAT_COLOURS = frozenset("white black brown gray tan beige".split())
# A picture's colours are its style: "a black and white photo" -> "a purple and white photo" was judged absurd
# (7 of ce_clip's 10 absurd negatives in a natural sample of 100).
PICTURES = DEPICTION_NOUNS - {"view", "painting", "drawing", "closeup"} | {"snapshot", "selfie", "pic"}
_BIRD = frozenset(["bird.n.01"])
# Food that is not a sweet comes in the colours food comes in: "a pizza with a blue crust", "a bowl of rice with
# purple peas" and "silver peas" were made (an even-id reading and a hand check of stop 38). Sweets are coloured at
# will ("a blue cupcake", "pink frosting"); a few foods come in one more colour of their own (`FOODS_ALSO`).
FOOD_COLOURS = frozenset("white black brown red green yellow orange tan beige".split())
FOODS_ALSO = {
    "purple": frozenset("grape cabbage onion eggplant plum berry potato cauliflower carrot olive fig".split()),
    "pink": frozenset("ham salmon shrimp meat grapefruit watermelon bacon steak beef pork lox".split()),
}
FOOD_PARTS = frozenset("crust rind peel yolk".split())
SWEETS = frozenset("""
    cake cupcake cookie donut doughnut candy frosting icing sprinkle sprinkles dessert pastry macaron lollipop cereal
    treat
""".split())
_SWEET_SYNSETS = frozenset(["dessert.n.01", "sweet.n.03", "cake.n.03", "frosting.n.01"])
_HEAVY = frozenset(["wall.n.01", "fence.n.01", "barrier.n.01", "bridge.n.01", "building.n.01", "way.n.06",
                    "floor.n.01", "flooring.n.01", "bench.n.01", "sculpture.n.01", "stairway.n.01", "step.n.04",
                    "fireplace.n.01", "tower.n.01"])
_VESSELS = frozenset(["container.n.01", "tableware.n.01"])
_CERAMIC = _VESSELS | frozenset(["plumbing_fixture.n.01", "tile.n.01", "figure.n.04"])
_LEATHER = frozenset(["seat.n.03", "bag.n.01", "clothing.n.01", "footwear.n.02", "footwear.n.01"])
# Each such material: the noun classes made of it, and the nouns whose first WordNet sense is another thing.
MATERIAL_FITS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    **dict.fromkeys(["stone", "brick", "concrete"],
                    (_HEAVY, frozenset("pier post pole column pillar path patio church countertop counter".split()))),
    **dict.fromkeys(["paper", "cardboard"], (_VESSELS, frozenset("plate cup sign kite lantern napkin hat".split()))),
    "ceramic": (_CERAMIC, frozenset("plate mug pitcher pot".split())),
    "leather": (_LEATHER, frozenset("belt glove wallet purse suitcase strap collar saddle seat case".split())),
    "wicker": (frozenset(["furniture.n.01", "basket.n.01"]), frozenset("chair table basket hamper".split())),
    "glass": (_VESSELS, frozenset("""
        window door table desk wall shelf lamp vase bottle jar building tower cabinet case screen ornament
    """.split())),
}


def attribute_fits(noun: Token, word: str, mammal: bool = False) -> bool:
    """Whether the attribute `word` may describe `noun` (see the module docstring), or with `mammal` a mammal
    that replaces it."""
    key = noun_key(referent(noun))
    if word in MATERIAL_FITS:
        classes, nouns = MATERIAL_FITS[word]
        return key in nouns or is_under(key, classes)
    if "color" not in lexicon().attribute_classes(word):
        return True
    if noun_key(noun) in PICTURES:  # not its referent: "a black and white photo of a man" is the photo's colour
        return False
    if own_colours := _own_colours(noun):
        return word in own_colours
    if _is_plain_food(noun):
        return word in FOOD_COLOURS or noun_key(noun) in FOODS_ALSO.get(word, ())
    if word in COAT_COLOURS:
        return True
    return not mammal and (kind_of(noun) != ANIMAL or is_under(key, _BIRD))


def _is_plain_food(noun: Token) -> bool:
    """Food that is not a sweet (`SWEETS`), or a part of one (`FOOD_PARTS`): the noun itself, not what it holds
    ("a blue plate of food" is the plate's colour)."""
    key = noun_key(noun)
    if key in FOOD_PARTS:
        return True
    return kind(noun) == "food" and key not in SWEETS and not is_under(key, _SWEET_SYNSETS)


def _own_colours(noun: Token) -> frozenset[str] | None:
    """The colours `noun` itself can have, where they are few (`NATURAL_COLOURS`): not its referent's ("a gold
    bowl of green apples" is the bowl's colour), and none where the noun only modifies another ("a blue water
    bottle", "a black, orange and yellow train"). The colours of a cultivar or of the greenery it is made of come
    first ("granny smith apples", "grass umbrellas", `COLOURING_COMPOUNDS`; an "elephant hat" is no elephant); a
    colour word is no part of its name (spaCy may parse "green granny smith apples" or "orange cones" with the
    colour as a compound word)."""
    if noun.dep_ in ("compound", "amod"):
        return None
    compounds = [child.lower_ for child in noun.children
                 if child.dep_ == "compound" and "colour" not in visual_values(child.lower_, None)]
    names = (" ".join(compounds[start:]) for start in range(len(compounds)))
    cultivars = (NATURAL_COLOURS[name] for name in names if name in COLOURING_COMPOUNDS)
    return (next(filter(None, cultivars), None) or NATURAL_COLOURS.get(noun_key(noun))
            or NATURAL_COLOURS.get(noun.lemma_.lower()))
