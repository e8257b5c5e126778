"""A person's companion: "A man is standing on a snowy hill" -> "A man with a dog is standing on a snowy hill".

SugarCrepe's add_obj negatives often give a person something of their own ("The man in a red hat and a pair of
sunglasses", "a man with a top hat, red tie, and a cane"). Where nobody may join the person as a second subject
(they act on one thing: "A surfer rides the face of a wave" cannot become "A surfer and a dog ride ..."), a
"with a X" phrase right after them still adds an object: one of `COMPANIONS`, which a photo of most scenes may show
or lack, and which the caption counts are too few to vouch for, so where each may go is curated here. The phrase
goes before a finite verb ("A man with a dog is sleeping"), before a participle that says what the person does
("A little boy with a dog making a mess with his dinner"; not one of dress, which the dog could be read to wear),
or at the caption's end ("A black and white photo of a man with a dog"). None where the person already has a
"with" (a list of what they have is `lists`'), is said to be alone ("a man skiing down a hill by himself", "A lone
man"), is one of several joined by "and", plays a ball game ("A catcher with a dog is ready to catch the ball"),
or is in the air. Several people, a crowd and a baby take only a dog, and so does a person in the water.
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.addition_attributes import BALL_GAMES
from backend.perturb.addition_partners import GAME_ROLES, LOOK_VERBS, WATERS
from backend.perturb.addition_references import can_be_verb
from backend.perturb.addition_subject import ALONE, subject_noun
from backend.perturb.nouns import animacy
from backend.perturb.parse_reading import COLLECTIVE_NOUNS, caption_lemmas, noun_lemma

# Things a person may have with them in almost any scene, which a typical photo of the caption does not show. The
# caption counts are too few to vouch for them (the shipped counts name a dog with a boy in none of 51 captions),
# so they go wherever a person does but for a ball game and, but for a dog, the water. No umbrella: it needs rain
# or sun ("A person with an umbrella jumps in the air and catches a Frisbee", "a young girl with an umbrella is
# getting her temperature taken" were read as absurd).
COMPANIONS = ("dog", "phone", "camera", "bag")
# What several people may have one of between them: "People with an umbrella" reads as one shared umbrella.
SHARED_COMPANIONS = ("dog",)
# Finite verbs: after one, the verb is plainly the person's.
FINITE_TAGS = frozenset({"VBZ", "VBD", "VBP", "MD"})
REFLEXIVES = frozenset({"himself", "herself", "themselves", "itself"})
# A baby has nothing of its own along but a dog ("The baby with a camera is holding his tooth brush").
INFANTS = frozenset({"baby", "infant", "toddler"})
# Words of a person in the air, where a companion would fly too ("A kite surfer with a dog gets high in the air").
AIRBORNE = frozenset({"air", "airborne", "midair"})
# Several people named by one word ("A couple", "The large crowd"), who share one companion as several people do.
GATHERINGS = COLLECTIVE_NOUNS | {"audience", "class", "crew"}
# What takes pictures, and the words of taking them.
CAMERAS = frozenset({"camera", "phone"})
PICTURES = frozenset({"picture", "photo", "photograph", "selfie", "portrait", "shot", "video", "snapshot"})
PICTURE_VERBS = frozenset({"photograph", "film", "record", "videotape", "selfie"})
# Words of a person in the water, where no phone, camera or bag goes along.
WET = WATERS | frozenset("surf surfer surfboard wave swim swimmer kayak canoe raft".split())


def companion_site(doc: Doc) -> Token | None:
    """The person noun a "with a X" phrase may follow: the caption's subject (through a group's "of": "A group of
    people"), followed by a finite verb (one WordNet knows as a verb: not "An old doctors office"), by a participle
    of what they do (`_acting_participle`), or ending the caption. None where the person already has a "with"
    phrase, is alone (`ALONE`, or "by himself"), is joined to another noun, plays a ball game, or is in the air."""
    found = subject_noun(doc)
    if found is None or animacy(found[1]) != "person":
        return None
    noun = found[1]
    barred = ALONE | REFLEXIVES | BALL_GAMES | AIRBORNE
    if any(t.lower_ in barred for t in doc) or noun_lemma(noun) in GAME_ROLES or any(
            c.lower_ == "with" for c in noun.children):
        return None
    after = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
    ends = after is None or (after.is_punct and after.i == len(doc) - 1)
    finite = after is not None and after.tag_ in FINITE_TAGS and after.pos_ in ("AUX", "VERB") and can_be_verb(after)
    return noun if ends or finite or _acting_participle(noun, after) else None


def _acting_participle(noun: Token, after: Token | None) -> bool:
    """A participle of the person's right after them that says what they do ("A man holding a surfboard"), not
    what they wear ("A lady wearing a pink shoe": after "with a dog", the dog could be the one dressed)."""
    return (after is not None and after.tag_ == "VBG" and after.dep_ == "acl" and after.head.i == noun.i
            and after.lemma_.lower() not in LOOK_VERBS)


def companion_words(noun: Token) -> tuple[str, ...]:
    """The `COMPANIONS` the person may have: one of them alone, only a dog between several (a couple, a crowd) or
    beside a baby ("The baby with a camera is holding his tooth brush"), only a dog in the water ("A surfer with a
    phone rides the face of a wave"), and no camera or phone where someone takes a picture."""
    lemma, lemmas = noun_lemma(noun), caption_lemmas(noun.doc)
    alone = noun.tag_ == "NN" and lemma not in INFANTS | GATHERINGS
    words: tuple[str, ...] = COMPANIONS if alone else SHARED_COMPANIONS
    if lemmas & WET:
        words = tuple(word for word in words if word in SHARED_COMPANIONS)
    if _takes_pictures(noun.doc):
        words = tuple(word for word in words if word not in CAMERAS)
    return words


def _takes_pictures(doc: Doc) -> bool:
    """Someone in the caption takes a picture or films: a camera or phone is there already ("A man sitting cross
    legged in front of a mirror taking a self portrait")."""
    return any(token.lemma_.lower() in PICTURE_VERBS or (token.lemma_.lower() == "take" and any(
        child.dep_ == "dobj" and child.lemma_.lower() in PICTURES for child in token.children)) for token in doc)
