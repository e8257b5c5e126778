"""The relation and object replacements of issue 21's third replace round: what each new rule makes, and what it
must never make. The "never" cases were judged invalid or absurd while tuning on even-id SugarCrepe captions or in
the judged held-out samples (tests/data/perturb-judged-replace3-*.csv)."""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

MAKES = [
    # "young" marks no childhood: SugarCrepe's own negative (ages.py)
    ("object", "A group of young children sitting next to each other.",
     "A group of young adults sitting next to each other."),
    # a little girl for a little boy and back, which the word slots never reach (ages.py)
    ("object", "A little girl is standing between several orange cones.",
     "A little boy is standing between several orange cones."),
    ("object", "A little boy drinking milk from a bottle while laying in bed.",
     "A little girl drinking milk from a bottle while laying in bed."),
    # a person said of no age or gender becomes a child (ages.person_slots)
    ("object", "A person is holding up a half eaten pastry.", "A child is holding up a half eaten pastry."),
    # an invariant plural counted many is replaced by a plural; a grazer by a grazer (slots, refill_fit)
    ("object", "A group of sheep grazing in a grassy valley.", "A group of cows grazing in a grassy valley."),
    # a participle spaCy hung on a garment is done by its wearer (wearing.wearer)
    ("relation", "A little league baseball team in orange uniforms posing for a group picture.",
     "A little league baseball team in orange uniforms taking a group picture."),
    ("relation", "Two young girls in uniforms sitting on a bench.", "Two young girls in uniforms standing on a bench."),
    # bodies together set far apart (state_phrases.spread_slots)
    ("relation", "A group of zebras stand together by a rock wall.",
     "A group of zebras stand far apart by a rock wall."),
    ("relation", "Two young girls in uniforms sitting closely together.",
     "Two young girls in uniforms sitting far apart."),
    # acts a photo tells from another, replaced whole (verb_phrases.SWAPS)
    ("relation", "A man is flying a kite at the beach.", "A man is carrying a kite at the beach."),
    ("relation", "a woman holding onto a piece of pizza with her mouth",
     "a woman letting go of a piece of pizza with her mouth"),
    ("relation", "A girl swinging a tennis racket in a match.", "A girl dropping a tennis racket in a match."),
    ("relation", "A woman using her laptop on a couch.", "A woman putting away her laptop on a couch."),
    # a person on skis is one without them (lexicon.json: foot_gear); an npadvmod noun is the doer (wearing.actor)
    ("relation", "A man on skis is going down a slope.", "A man without skis is going down a slope."),
    ("relation", "Two barefoot women holding game controllers in each hand.",
     "Two barefoot women throwing game controllers in each hand."),
    # new surfaces and bounded places (lexicon.json)
    ("relation", "A orange calico cat on top of a vehicle.", "A orange calico cat under a vehicle."),
    ("relation", "Some bananas and strawberries on a large waffle",
     "Some bananas and strawberries next to a large waffle"),
    ("relation", "A hot dog in a bun is topped with mustard.", "A hot dog outside a bun is topped with mustard."),
    ("relation", "Someone is cooking vegetarian stir fry in a skillet.",
     "Someone is cooking vegetarian stir fry next to a skillet."),
]


@pytest.mark.parametrize(("subtype", "caption", "expected"), MAKES)
def test_new_replacements_are_made(subtype, caption, expected):
    assert normalized(expected) in made(caption, ["replace"], subtype=subtype)


NEVER = [
    # a gendered pronoun or a gender-bound word would be left behind
    ("object", "A little girl holding her doll.", "A little boy holding her doll."),
    ("object", "A little girl in a pink dress.", "A little boy in a pink dress."),
    # a little child is no adult
    ("object", "A little child holding a toothbrush.", "A man holding a toothbrush."),
    # a child with an adult's habit, or a person whose gender the caption gives
    ("object", "A person smoking a cigarette on a bench.", "A child smoking a cigarette on a bench."),
    ("object", "A person holding her umbrella.", "A child holding her umbrella."),
    # judged absurd in the held-out sample of the new rules (perturb-judged-replace3-new.csv): a kite carried
    # where it flies, a bat dropped while it hits
    ("relation", "A man flying a kite above a tall building in a cloudy blue sky.",
     "A man carrying a kite above a tall building in a cloudy blue sky."),
    ("relation", "The man is flying his kite in the sky.", "The man is carrying his kite in the sky."),
    ("relation", "Some people in a grass field flying a kite in the sky.",
     "Some people in a grass field carrying a kite in the sky."),
    ("relation", "a man swinging a tennis racket and hitting a ball on a tennis court.",
     "a man dropping a tennis racket and hitting a ball on a tennis court."),
    # judged err in the natural held-out sample: a verb with two objects takes no other verb of its group
    ("relation", "Someone feeding a goat a piece of carrot.", "Someone hugging a goat a piece of carrot."),
    # a grazing animal or one in a herd is no dog or bird
    ("object", "A group of sheep grazing in a grassy valley.", "A group of dogs grazing in a grassy valley."),
    ("object", "A herd of sheep walking across a lush green field.",
     "A herd of birds walking across a lush green field."),
    # only a ball is kicked or hit in place of being held (lexicon.json: the "striking" group)
    ("relation", "A man holding an umbrella on a sidewalk.", "A man kicking an umbrella on a sidewalk."),
    ("relation", "A young boy dressed in yellow holding a pizza in a box.",
     "A young boy dressed in yellow hitting a pizza in a box."),
    # a device used for a purpose is no device put away
    ("relation", "A man using a laptop to watch a movie.", "A man putting away a laptop to watch a movie."),
    # verbs that are themselves a coming together, or a pose for one picture
    ("relation", "Sheep huddled together in a pen.", "Sheep huddled far apart in a pen."),
    ("relation", "A family posing together for a picture.", "A family posing far apart for a picture."),
]


@pytest.mark.parametrize(("subtype", "caption", "output"), NEVER)
def test_invalid_replacements_are_never_made(subtype, caption, output):
    assert normalized(output) not in made(caption, ["replace"], subtype=subtype)
