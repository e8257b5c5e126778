"""A person's companion: "A man is standing on a snowy hill" -> "A man with a dog is standing on a snowy hill".

SugarCrepe's add_obj negatives often give a person something of their own ("The man in a red hat and a pair of
sunglasses", "a man with a top hat, red tie, and a cane"). Where nobody may join the person as a second subject
(they act on one thing: "A surfer rides the face of a wave" cannot become "A surfer and a dog ride ..."), a
"with a X" phrase right after them still adds an object: one of `COMPANIONS`, which a photo of most scenes may show
or lack. `addition` picks which by the caption counts. The phrase goes only before a finite verb, which then still
says what the person does ("A man with a dog is sleeping"; before a participle the participle could be the dog's:
"A woman with a dog talking on the phone"), or at the caption's end ("A black and white photo of a man with a
dog"). None where the person already has a "with" (a list of what they have is `lists`'), is said to be alone
("a man skiing down a hill by himself", "A lone man"), is one of several joined by "and", or plays a ball game
("A catcher with a dog is ready to catch the ball"). Several people take only a dog (`SHARED_COMPANIONS`).
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.addition_attributes import BALL_GAMES
from backend.perturb.addition_partners import GAME_ROLES
from backend.perturb.addition_references import can_be_verb
from backend.perturb.addition_subject import ALONE, subject_noun
from backend.perturb.nouns import animacy
from backend.perturb.parse_reading import noun_lemma

# Things a person may have with them in almost any scene, which a typical photo of the caption does not show:
# `addition` keeps those the counts place in the caption's scene. No umbrella: it needs rain or sun ("A person with
# an umbrella jumps in the air and catches a Frisbee", "a young girl with an umbrella is getting her temperature
# taken" were read as absurd).
COMPANIONS = ("dog", "phone", "camera", "bag")
# What several people may have one of between them: "People with an umbrella" reads as one shared umbrella.
SHARED_COMPANIONS = ("dog",)
# Finite verbs: after one, the verb is plainly the person's.
FINITE_TAGS = frozenset({"VBZ", "VBD", "VBP", "MD"})
REFLEXIVES = frozenset({"himself", "herself", "themselves", "itself"})


def companion_site(doc: Doc) -> Token | None:
    """The person noun a "with a X" phrase may follow: the caption's subject (through a group's "of": "A group of
    people"), followed by a finite verb (one WordNet knows as a verb: not "An old doctors office") or ending the
    caption. None where the person already has a "with" phrase, is alone (`ALONE`, or "by himself"), is joined to
    another noun, or plays a ball game."""
    found = subject_noun(doc)
    if found is None or animacy(found[1]) != "person":
        return None
    noun = found[1]
    if any(t.lower_ in ALONE | REFLEXIVES | BALL_GAMES for t in doc) or noun_lemma(noun) in GAME_ROLES or any(
            c.lower_ == "with" for c in noun.children):
        return None
    after = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
    ends = after is None or (after.is_punct and after.i == len(doc) - 1)
    finite = after is not None and after.tag_ in FINITE_TAGS and after.pos_ in ("AUX", "VERB") and can_be_verb(after)
    return noun if ends or finite else None


def companion_words(noun: Token) -> tuple[str, ...]:
    """The `COMPANIONS` the person may have: one of them alone, only a dog between several."""
    return COMPANIONS if noun.tag_ == "NN" else SHARED_COMPANIONS
