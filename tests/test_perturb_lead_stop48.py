"""Stop 48's lead changes: a capitalised thing is read as a noun, and a thing bare after "play" is the game.

spaCy reads "Frisbee" inside a sentence as a proper noun, and a proper noun takes no colour swap, refill or
addition: "A man in white shorts ... catch a green Frisbee" got no attribute swap, which the same caption in lower
case gets. The engine now reads such a word in lower case where the curated lists know it as a thing and it stands
alone, heading its own phrase (`nouns.is_capitalised_thing`, `engine._reading`), and the edits still apply to the
caption as typed. And "playing frisbee" names the game, "watching tv" the programmes: they took colours ("playing
red frisbee", "watching red television"), companions ("playing frisbee and a ball"), other things ("playing tennis
ball", "watching laptop") and other verbs ("painting television"); now only "frisbee" <-> "ball" and "playing" ->
"watching" (`nouns.activity_of`, `verb_fit.refill_fits_clause`).
"""
import pytest

from backend.perturb.core import normalized
from backend.perturb.engine import _reading
from backend.perturb.plausibility import is_plausible
from tests.support.perturb_outputs import every_variant, made


@pytest.mark.parametrize(("caption", "negative"), [
    ("A man in white shorts jumping in the air to catch a green Frisbee.",
     "A man in green shorts jumping in the air to catch a white Frisbee."),
    ("There is a green Frisbee in the air with red chairs in the background.",
     "There is a red Frisbee in the air with green chairs in the background."),
])
def test_a_capitalised_thing_trades_its_colour(caption, negative):
    assert normalized(negative) in made(caption, ["binding_swap"], subtype="attribute", shown=True)


def test_the_caption_keeps_the_capital_it_was_typed_with():
    texts = {variant.text for variant in every_variant("Two men stand in the woods as one of them throws a Frisbee.",
                                                       ["addition", "replace"])}
    assert "Two men stand in the woods as one of them throws a red Frisbee." in texts
    assert "Two men stand in the woods as one of them throws a ball." in texts


@pytest.mark.parametrize("caption", [
    "A Polar Bear walks toward water, while a large bird lands on the opposite bank.",  # a capitalised neighbour
    "An Apple user and his faithful cat surf the web.",  # a brand before a noun
    "A Windows laptop with a corded mouse on top of a counter.",
    "Street signs on the corner of Furnace St and Crapo St.",  # no thing the lists know
    "A red Dodge truck is parked near another Dodge.",  # no thing the lists know, alone or before a noun
])
def test_names_and_brands_are_read_as_typed(caption):
    assert _reading(caption).text == caption


@pytest.mark.parametrize(("caption", "read"), [
    ("Some Zebras and cattle are standing together.", "Some zebras and cattle are standing together."),
    ("A Frisbee lies on the grass.", "A frisbee lies on the grass."),
])
def test_a_lone_capitalised_thing_is_read_in_lower_case(caption, read):
    assert _reading(caption).text == read


@pytest.mark.parametrize(("caption", "refused"), [
    ("A family are playing frisbee on the beach.", "A family are playing red frisbee on the beach."),
    ("A family are playing frisbee on the beach.", "A family are playing frisbee and a ball on the beach."),
    ("A family are playing frisbee on the beach.", "A family are playing tennis ball on the beach."),
    ("Two dogs playing ball on the beach.", "Two dogs playing green ball on the beach."),
    ("Two dogs playing ball on the beach.", "Two dogs playing ball and a kite on the beach."),
    ("A man, two kids and a dog are playing Frisbee.", "A man, two kids and a dog are playing black Frisbee."),
    ("A man relaxing at home, watching television with his dog.",
     "A man relaxing at home, watching red television with his dog."),
    ("A man relaxing at home, watching television with his dog.",
     "A man relaxing at home, painting television with his dog."),
    ("A little cat is sitting on the table and watching tv.", "A little cat is sitting on the table and watching laptop."),
    ("Two kids sitting on a couch watching TV.", "Two kids sitting on a couch photographing TV."),
])
def test_an_activity_takes_no_colour_companion_or_other_thing(caption, refused):
    assert normalized(refused) not in made(caption)


@pytest.mark.parametrize(("caption", "negative"), [
    ("Two dogs playing ball on the beach.", "Two dogs playing frisbee on the beach."),
    ("A man, two kids and a dog are playing Frisbee.", "A man, two kids and a dog are playing ball."),
    # with an article or a colour it is the thing, and takes what a thing takes
    ("A dog playing with a red ball on the beach.", "A dog playing with a green ball on the beach."),
    ("A dog playing with a red ball on the beach.", "A dog playing with a red frisbee on the beach."),
    ("A boy playing frisbee in the park.", "A boy watching frisbee in the park."),
    ("Two kids sitting on a couch watching TV.", "Two kids sitting on a couch looking away from TV."),
    ("A woman watching the tv in a living room.", "A woman photographing the tv in a living room."),
])
def test_an_activity_takes_its_own_refills_and_a_thing_stays_a_thing(caption, negative):
    assert normalized(negative) in made(caption, ["replace"], shown=True)


@pytest.mark.parametrize(("caption", "refused"), [
    # what one talks on is a phone, and "with a X" after it is whom one talks with
    ("A girl is standing by a storefront while talking on her phone.",
     "A girl is standing by a storefront while talking on her keyboard."),
    ("A girl is standing by a storefront while talking on her phone.",
     "A girl is standing by a storefront while talking on her phone with a car."),
    # the mirror a reflection is seen in
    ("A man taking a picture of himself in a mirror.", "A man taking a picture of himself in a lamp."),
    ("A man taking a picture of himself in a mirror.", "A man taking a picture of himself in a mirror with a toilet."),
    ("A man taking a picture of himself in the rear view mirror.",
     "A man taking a picture of himself in the rear view mirror next to a chair."),
])
def test_a_phone_talked_on_and_a_mirror_seen_in_take_no_other_thing(caption, refused):
    assert normalized(refused) not in made(caption)


@pytest.mark.parametrize(("caption", "negative"), [
    ("A woman talking on the phone while walking.", "A woman talking on the red phone while walking."),
    ("A man taking a selfie in a mirror.", "A man taking a selfie in a black mirror."),
    ("A man standing in front of a mirror in a bathroom.", "A man standing in front of a lamp in a bathroom."),
])
def test_the_phone_and_the_mirror_keep_their_colours_and_a_mirror_stood_at_is_a_thing(caption, negative):
    assert normalized(negative) in made(caption, ["replace", "addition"], shown=True)


@pytest.mark.parametrize(("caption", "negative", "plausible"), [
    # no one flies a being, or swings a ball (CE-CLIP's and NegCLIP's noun swaps make both)
    ("A kid flying a kite on the beach.", "A kite flying a kid on the beach.", False),
    ("A baseball player swinging a bat at a ball.", "A baseball player swinging a ball at a bat.", False),
    ("A man flying a kite.", "A man flying a plane.", True),
    ("A bird flying over the water.", "A dog flying over the water.", True),
    ("A man swinging a tennis racket.", "A man swinging a baseball bat.", True),
    # a place does not fly
    ("A large jetliner flying over a city.", "A large city flying over a jetliner.", False),
    ("A kite flying over the beach.", "A kite flying over the city.", True),
])
def test_flying_a_being_and_swinging_a_ball_are_labelled(caption, negative, plausible):
    assert is_plausible(negative, caption) is plausible


@pytest.mark.parametrize(("caption", "refused"), [
    # a drink is drunk and a food eaten (`verb_fit`)
    ("A giraffe eating leaves from a tall tree.", "A giraffe drinking leaves from a tall tree."),
    ("A man is drinking water from a red bottle.", "A man is eating water from a red bottle."),
    ("A grey colored cat that is drinking from a glass of water.",
     "A grey colored cat that is sleeping from a glass of water."),
    # what eats grass or hay is a grazer (`refill_fit._eats_plants`)
    ("A giraffe at a zoo eating some grass.", "A lion at a zoo eating some grass."),
    # giraffes and elephants have coats of their own colours (`visual_classes.NATURAL_COLOURS`)
    ("Two young black bears playing at the zoo", "Two young black giraffes playing at the zoo"),
    ("A group of people riding a large gray elephant.", "A group of people riding a large black elephant."),
    # greenery a thing is made of, or a meadow, keeps greenery's colours
    ("A beach area with grass umbrellas and boats in the distance.",
     "A beach area with blue grass umbrellas and boats in the distance."),
    ("Sheep graze in a lushly green mountain meadow", "Sheep graze in a lushly blue mountain meadow"),
])
def test_what_is_eaten_drunk_and_coloured_fits(caption, refused):
    assert normalized(refused) not in made(caption)


@pytest.mark.parametrize(("caption", "negative"), [
    ("A giraffe at a zoo eating some grass.", "A goat at a zoo eating some grass."),
    ("A horse drinking from a trough.", "A horse eating from a trough."),
    # an animal's name before a thing gives it no colours: "an elephant hat" may be blue, "a snow suit" red
    ("There is a cat wearing an elephant hat", "There is a cat wearing a blue elephant hat"),
    ("A person in a black snow suit on a pair of skis in the snow.",
     "A person in a red snow suit on a pair of skis in the snow."),
])
def test_what_fits_is_still_made(caption, negative):
    assert normalized(negative) in made(caption, ["replace", "addition"], shown=True)


@pytest.mark.parametrize(("caption", "negative", "plausible"), [
    # CE-CLIP's noun swaps: a thing that cuts, reading what cannot be read (`plausibility_use`)
    ("A woman cutting a cake with a knife.", "A cake cutting a woman with a knife.", False),
    ("A man sitting on a bench reading a book.", "A book sitting on a bench reading a man.", False),
    ("A man sitting on a bench reading a book.", "A man sitting on a book reading a bench.", False),
    ("A woman cutting a cake with a knife.", "A knife cutting a cake.", True),
    ("A man mowing the lawn.", "A lawn mower cutting the grass.", True),
    ("A woman reading a newspaper.", "A woman reading a menu.", True),
    ("A sign reading stop on a pole.", "A sign reading bear crossing on a pole.", True),
])
def test_cutting_and_reading_things_are_labelled(caption, negative, plausible):
    assert is_plausible(negative, caption) is plausible
