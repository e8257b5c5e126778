"""The relation replacements of issue 21's seventh replace_rel round: what each new rule makes, and what it must
never make. The "makes" captions are even-id SugarCrepe captions (the tuning set) or short ones of the same shape;
the "never" cases are the invalid outputs met while tuning and those judged invalid in the held-out sample
(tests/data/perturb-judged-rel7-new.csv)."""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def replaced(caption: str, subtype: str) -> set[str]:
    """Every replace negative of one subtype, as normalized texts."""
    return made(caption, ["replace"], subtype=subtype)


MAKES = [
    # a thing held in the hands or arms put down (aimed_acts._held_in_hand_slot)
    ("relation", "A woman wearing a blue coat holds a furry animal in her arms",
     "A woman wearing a blue coat puts down a furry animal"),
    ("relation", "A man holding a tennis racket in his hand while on the tennis court",
     "A man putting down a tennis racket while on the tennis court"),
    # any thing held put down (aimed_acts._held_slot)
    ("relation", "An elderly woman seated at a table holding three pizzas.",
     "An elderly woman seated at a table putting down three pizzas."),
    ("relation", "A man holding a tennis racquet on a tennis court.",
     "A man putting down a tennis racquet on a tennis court."),
    # a picture taken of a thing, and eyes turned from it (aimed_acts._photo_slot)
    ("relation", "A man taking a picture of his reflection in a motorcycle mirror.",
     "A man looking away from his reflection in a motorcycle mirror."),
    # a toilet seat or lid up set down, a lid shut set open (state_phrases.cover_slots)
    ("relation", "The lid is up on the toilet bowl.", "The lid is down on the toilet bowl."),
    ("relation", "A white toilet with the seat up in a bathroom.", "A white toilet with the seat down in a bathroom."),
    ("relation", "A toilet lid is closed next to a bathtub.", "A toilet lid is open next to a bathtub."),
    # verb phrases (verb_phrases.SWAPS)
    ("relation", "A surfer is on the water and is waiting for a wave.",
     "A surfer is on the water and is riding a wave."),
    ("relation", "A set of twins who are taking a bath.", "A set of twins who are getting out of a bath."),
    ("relation", "Three skiers climb up a snow covered hill.", "Three skiers ski down a snow covered hill."),
    ("relation", "A herd of sheep are blocking the road.", "A herd of sheep are standing next to the road."),
    ("relation", "A person's hand holding up an active smartphone.",
     "A person's hand putting down an active smartphone."),
    # a walk at a pace run (verb_phrases._paced_slots)
    ("relation", "Two adult pheasants walking slowly across a street", "Two adult pheasants running across a street"),
    # the doer read past a place the participle hangs on, through "Group of", as "everyone" (verb_phrases.doer_of)
    ("relation", "A giraffe at a zoo eating some grass.", "A giraffe at a zoo lying in some grass."),
    ("relation", "Group of people play video games at bestbuy", "Group of people watch video games at bestbuy"),
    ("relation", "A group of men on a field playing baseball.", "A group of men on a field watching baseball."),
    ("relation", "Everyone in the group is using electronic devices.",
     "Everyone in the group is putting away electronic devices."),
    # a thing watched looked away from (aimed_acts._watch_slot); a ball hit caught instead (verb_phrases.SWAPS)
    ("relation", "A man relaxing at home, watching television with his dog.",
     "A man relaxing at home, looking away from television with his dog."),
    ("relation", "The man is getting ready to hit the ball in the baseball game.",
     "The man is getting ready to catch the ball in the baseball game."),
    ("relation", "A woman holds her small child in her lap.", "A woman puts down her small child."),
    # an animal watching looks away (verb_phrases._onlooker_slots)
    ("relation", "Cow eating grass while a bull watches nearby", "Cow eating grass while a bull looks away nearby"),
]


@pytest.mark.parametrize(("subtype", "caption", "expected"), MAKES)
def test_new_replacements_are_made(subtype, caption, expected):
    assert normalized(expected) in replaced(caption, subtype)


NEVER = [
    # met while tuning: "the other" hand left without the hand it contrasts with
    ("relation", "A woman holds a carrot in her right hand with a beverage in the other.",
     "A woman puts down a carrot with a beverage in the other."),
    ("relation", "A man holding a microphone in one hand while he holds a skateboard in the other.",
     "A man putting down a microphone while he holds a skateboard in the other."),
    # guards written with the rules: a goal after the hand, a particle of an act on the lid, a camera named
    ("relation", "A woman holding a phone in one hand up to her ear.", "A woman putting down a phone up to her ear."),
    ("relation", "A man lifts the lid up on a toilet.", "A man lifts the lid down on a toilet."),
    ("relation", "A woman taking a picture of food with a mobile device.",
     "A woman looking away from food with a mobile device."),
    ("relation", "A surfer waiting for a wave to come.", "A surfer riding a wave to come."),
    ("relation", "People watching fireworks to celebrate.", "People looking away from fireworks to celebrate."),
    # judged doubtful in the held-out sample (perturb-judged-rel7-new.csv), removed after judging: an act that needs
    # one to stand still, done on the move
    ("relation", "A man walking while holding a ball in his hand.", "A man walking while putting down a ball."),
    ("relation", "Group of small children running down the field playing soccer.",
     "Group of small children running down the field watching soccer."),
    # judged absurd in the held-out sample, removed after judging: a body part after the thing held, a second act
    # that uses it
    ("relation", "A young woman is holding a slice of pizza with her mouth.",
     "A young woman is putting down a slice of pizza with her mouth."),
    ("relation", "A small child that is holding a toothbrush and brushing their teeth.",
     "A small child that is putting down a toothbrush and brushing their teeth."),
    ("relation", "A person holding many papers and cutting one with scissors.",
     "A person putting down many papers and cutting one with scissors."),
    # met while tuning: an animal held by its lead, a hand named after the thing held
    ("relation", "A woman holds a brown horse while a woman watches.",
     "A woman puts down a brown horse while a woman watches."),
    ("relation", "A baby holds a toothbrush in its hand.", "A baby puts down a toothbrush in its hand."),
    ("relation", "A man holding an umbrella over his head.", "A man putting down an umbrella over his head."),
    # met while tuning: a bare verb after the thing watched
    ("relation", "A man smiles watching a rider approach with two horses.",
     "A man smiles looking away from a rider approach with two horses."),
]


@pytest.mark.parametrize(("subtype", "caption", "output"), NEVER)
def test_invalid_replacements_are_never_made(subtype, caption, output):
    assert normalized(output) not in replaced(caption, subtype)
