"""REPLACE's object refills added for SugarCrepe's replace_obj (issue 21, fifth round): whole compounds
(backend/perturb/compounds.py), athletes of one setting (athletes.py), kinds of a group word
(nouns.sisters_of_kind), lakes and ponds. What each new rule makes, and what it must never make: outputs found
while tuning on even ids and the err rows of the judged draws (tests/data/perturb-judged-replobj5*.csv).
"""
import pytest

from backend.perturb import perturb
from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def shown(caption):
    """Every replace object refill the Probe would show (labelled plausible)."""
    return made(caption, ["replace"], subtype="object", shown=True)


MAKES = [
    # a compound naming a kind, brand or use of its head is refilled whole, in the head's fit class
    ("a city bus parked on the side of the road", "a car parked on the side of the road"),
    ("The freight train is painted orange and yellow.", "The tram is painted orange and yellow."),
    ("A Fedex truck drives in front of hills.", "A bus drives in front of hills."),
    ("An older pickup truck with decorative murals painted on.", "An older car with decorative murals painted on."),
    ("several sail boats in the water at night", "several jet skis in the water at night"),
    ("A dinner plate that has white steamed rice with stir fry vegetables and chicken.",
     "A bowl that has white steamed rice with stir fry vegetables and chicken."),
    # a kind of a group word takes that word's sisters
    ("A turboprop airplane that is in the hangar for repair.", "A helicopter that is in the hangar for repair."),
    ("A taxi parked on the street.", "A bus parked on the street."),
    # athletes of one setting
    ("A skateboarder is doing tricks on a ramp.", "A cyclist is doing tricks on a ramp."),
    ("A surfer is on the water and is waiting for a wave.", "A kayaker is on the water and is waiting for a wave."),
    ("A female skier stops and poses for a picture", "A female snowboarder stops and poses for a picture"),
    # lakes, ponds and rivers
    ("Three giraffe drinking from a pond with brush in back.", "Three giraffe drinking from a river with brush in back."),
    # a shoe is footwear
    ("A photo of a bright pink shoe on a blue and green background.",
     "A photo of a bright pink sandal on a blue and green background."),
    ("A large jetliner flying over a dry grass field.", "A large helicopter flying over a dry grass field."),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_new_refills_are_made(caption, expected):
    assert normalized(expected) in shown(caption)


NEVER = [
    # a number or a modifier of the compound's own left behind (even ids)
    ("A two layer cake sitting on top of a table.", "A two pizza sitting on top of a table."),
    ("A shiny, new, low riding semi trailer truck", "A shiny, new, low riding semi car"),
    ("The restored old time car is parked near a four engine airplane.",
     "The restored old time car is parked near a four helicopter."),
    ("Old style bus and trolley going down a modern street.", "Old car and trolley going down a modern street."),
    ("The bottom of a jumbo jet is flying through the air.",
     "The bottom of a jumbo helicopter is flying through the air."),
    # a compound refilled outside its head's fit class (even ids)
    ("Bride and grooms arms cutting the wedding cake with fruit on top.",
     "Bride and grooms arms cutting the soup with fruit on top."),
    ("A view of a work desk complete with computers and camera.",
     "A view of a chair complete with computers and camera."),
    ("Overview of a pot of vegetable soup with wooden spoon on a stainless steel stove top.",
     "Overview of a pot of pizza with wooden spoon on a stainless steel stove top."),
    # places the modifier grounds, landmarks, colours and misread lists stay whole (even ids)
    ("A gang of bikers driving down a  busy city street.", "A gang of bikers driving down a  busy beach."),
    ("A man standing behind two brown horses on a dirt field.",
     "A man standing behind two brown horses on a forest."),
    ("A woman sitting in front of the Eiffel tower near pigeons.",
     "A woman sitting in front of the barn near pigeons."),
    ("two children wearing sweaters shirts and ties", "two children wearing vests and ties"),
    ("A little league team wears orange shirts and black caps.", "A little league team wears jackets and black caps."),
    # a lawn is no field whose sisters fit (even ids)
    ("LOTS OF BROKEN TOILETS SITTING OUT ON A LAWN", "LOTS OF BROKEN TOILETS SITTING OUT ON A FOREST"),
    # judged err in the first draw (tests/data/perturb-judged-replobj5-first.csv): a bare singular compound
    ("A baseball player holding a bat next to home plate.", "A baseball player holding a bat next to bowl."),
    ("A baseball player crosses home plate as his teammate waits.",
     "A baseball player crosses bowl as his teammate waits."),
    ("The batter is tapping his bat on home plate.", "The batter is tapping his bat on tray."),
    ("A box of cheese pizza with green peppers in a box", "A box of sandwich with green peppers in a box"),
    # judged err in a second draw (not kept: the code changed after it): a word whose first WordNet sense is
    # another thing, a kind of person
    ("Luggage is sorted into groups, and sits outside the fence for pickup.",
     "Luggage is sorted into groups, and sits outside the fence for car."),
    ("A hand adding a cherry to some small tarts.", "A hand adding a cherry to some small girls."),
    ("A new husband and wife feeding each other wedding cake as a photographer takes pictures.",
     "A new husband and man feeding each other wedding cake as a photographer takes pictures."),
    # judged impl in those draws, gone with the same rules: a synonym or a position compound, a room
    ("People gathered taking pictures with a cell phone.", "People gathered taking pictures with a remote."),
    ("A man in a crowd taking pictures with a cell phone.", "A man in a crowd taking pictures with a remote."),
    ("A picture of a women sitting on a motorcycle with a side car with a desert background of hills.",
     "A picture of a women sitting on a motorcycle with a bus with a desert background of hills."),
    ("Guy takes a picture  of his dog in the backseat through his side mirror.",
     "Guy takes a picture  of his dog in the backseat through his lamp."),
    ("a shower toilet and sink in a basement bathroom", "a shower toilet and sink in a bedroom"),
    # kinds held to their word's fit class; a group's own word is no kind (even ids)
    ("a big sandwich on a small silver plate with a bowl of broth on the side",
     "a big sandwich on a small silver plate with a bowl of pizza on the side"),
    ("A duck floating in the water near a bunch of grass and rocks",
     "A cat floating in the water near a bunch of grass and rocks"),
    # a boot may be a shoe (even ids)
    ("An umbrella and rain boots sitting on a rug in a corner.", "An umbrella and shoes sitting on a rug in a corner."),
    # an athlete's gear or act left with the other athlete
    ("Skateboarder grinding his board on the side of a pavement course.",
     "Cyclist grinding his board on the side of a pavement course."),
    ("Two skiers skiing down a slope.", "Two snowboarders skiing down a slope."),
    ("The cross country skiers are enjoying their run.", "The cross country snowboarders are enjoying their run."),
]


@pytest.mark.parametrize(("caption", "output"), NEVER)
def test_refill_is_never_made(caption, output):
    assert normalized(output) not in shown(caption)


def test_a_water_bird_takes_a_water_bird_and_never_a_perching_one():
    """The lexicon's bird row made every species an overlap of every other, so a duck took no sister at all
    (SugarCrepe's own negative is "duck" -> "swan"); split, a pigeon or an owl floating in the water was made."""
    made = {v.text for v in perturb("A duck floating in the water near a bunch of grass and rocks",
                                    families=["replace"], seed=0) if v.subtype == "object"}
    assert "A swan floating in the water near a bunch of grass and rocks" in made
    assert not any(bird in text for text in made for bird in ("pigeon", "owl", "parrot", "goose"))
