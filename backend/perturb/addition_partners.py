"""Who or what may join an addition's subject: its partners ("a man and a woman", "a sheep and a cow", "a stuffed
animal and a doll"), and the subject's own verbs and looks that decide them.

A person takes another person, and a dog unless the dog could not share what the person does (`person_only`: an
object acted on or held anywhere in the person's clauses, or a person's own act such as laughing); an animal takes
animals; a thing takes only `kindred` things, read through `kind_lemma` (a listed compound's or a toy's stand-in:
"hot dogs" take a hamburger, not a cat). See `addition` for the join itself.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.addition_references import relative_clauses
from backend.perturb.kind_modifiers import BASEBALL_POSITIONS
from backend.perturb.kindred import BUILDINGS, KIND_COMPOUNDS, OWN_HOLDERS, TOY, TOY_MARKS, YOUNG, YOUNG_MARKS, kindred
from backend.perturb.lexicon import lexicon
from backend.perturb.lists import one_object_verb
from backend.perturb.nlp import find_phrases
from backend.perturb.nouns import animacy
from backend.perturb.parse_reading import caption_lemmas, noun_lemma

# "bear" shares captions with birds and cats through teddy bears: its counts do not say a bear fits.
UNSURE_PARTNERS = ("bear",)

# Phrases on a person's right that a second person may share: "a man in a white shirt", "on a surfboard".
PERSON_PREPOSITIONS = frozenset({"in", "on", "at", "with"})
# A person's look: a thing joined right after the person would take it ("The young girl and a woman wearing red
# and black", "A woman and a girl in a red dress" were judged errs), so a thing joins after a look phrase
# (`look_end`), and not at all beside a participle of dress.
LOOK_PREPOSITIONS = frozenset({"in", "with"})
# Verbs a look phrase must be followed by for a thing to join after it: elsewhere the phrase runs on ("a man with a
# helmet on riding", "A young girl in a white top poses and a boy with ...") or the join reads as a list with
# what ends it ("A child with a backpack underneath an umbrella and a woman").
FOLLOWING_VERB_TAGS = frozenset({"VBG", "VBN", "VBZ", "VBP", "VBD", "MD"})
LOOK_VERBS = frozenset({"wear", "dress"})
# Words for a person outside the lexicon's person group, with the group words they may name ("a lady and a
# woman" would be one person twice): another person of the group joins them ("a lady and a man").
PERSON_KIN = {"lady": frozenset({"woman"}), "guy": frozenset({"man"}), "child": frozenset({"boy", "girl"}),
              "kid": frozenset({"boy", "girl"}), "baby": frozenset({"boy", "girl"})}
# People named by their place in a game under way: no dog stands at home plate with a batter.
GAME_ROLES = frozenset({*BASEBALL_POSITIONS, "referee", "goalie", "goalkeeper", "quarterback", "linebacker"})
# A person's own acts, which a dog joined to them would do too (`person_only`); skis and a snowboard too ("A girl
# and a dog ski in a lot of snow" was judged absurd; a dog may ride a surfboard or a skateboard, as photos show).
PERSON_ACTS = frozenset("laugh smile grin talk chat speak read write cook shop sing dance text type shave ski snowboard"
                        .split())
# Verbs of what a thing holds or carries: a thing joined to it would hold it too ("A vase and a lamp filled with
# yellow and white flowers" was judged absurd).
CONTENT_VERBS = frozenset("fill top cover stuff load pile decorate garnish".split())
# Verbs of flight: an animal joined to a flying one would fly too.
FLIGHT_VERBS = frozenset("fly soar glide hover".split())
# Birds, and the water a bird may sit on where no land animal joins it.
BIRDS = frozenset({"bird", "duck", "goose", "swan", "seagull", "pigeon"})
WATERS = frozenset("water lake pond river ocean sea bay puddle".split())
# Verbs of how a thing is fixed in place: a thing joined to it would be fixed there too ("A stop sign and a bench
# that are attached to a broken wooden pole", "Two hot dogs and a hamburger are sandwiched between two slices").
FIXING_VERBS = frozenset("hang attach mount nail post tape fasten install sandwich fix".split())
# Words placing a thing on or above another: a building joined to one would stand there too ("A house and a clock
# tower on top of a tall historic building", "A clock tower and a house rise above another skyscraper" were judged
# absurd).
ABOVE_WORDS = frozenset("top atop above over rise".split())
# Verbs of a thing's stance that only some shapes take: a thing joined to the subject would take it too ("A red
# bicycle and a car leaned against a ... building", "A diminutive fire hydrant and a bench rising though a
# suburban sidewalk" were judged absurd; a motorcycle leans on its stand, a lamppost rises).
LEANERS = frozenset("bicycle bike motorcycle scooter moped skateboard surfboard snowboard ski ladder umbrella sign "
                    "bat racket board".split())
UPRIGHT = frozenset("hydrant lamppost pole post sign tower building skyscraper chimney steeple column statue meter "
                    "mast tree".split())
STANCE_VERBS = {"lean": LEANERS, "rise": UPRIGHT, "jut": UPRIGHT, "protrude": UPRIGHT, "tower": UPRIGHT,
                "loom": UPRIGHT}
# Snow sports and who does them, beside whom no animal is put ("A girl and a dog ski", "A snowboarder and a dog are
# flying in the air over snow" were judged absurd).
SNOW_SPORTS = frozenset({"ski", "snowboard", "skier", "snowboarder"})


def compound_key(span: Span) -> str:
    """A listed compound as `kindred.KIND_COMPOUNDS` spells it: "hot dogs" -> "hot dog"."""
    return " ".join(token.lemma_.lower() for token in span)


def kind_lemma(noun: Token) -> str:
    """The word whose kindred things may join `noun`: its lemma, or the stand-in of the listed compound it ends
    (`kindred.KIND_COMPOUNDS`: "hot dogs" -> "hotdog"), or a toy's for a stuffed animal (`kindred.TOY_MARKS`)."""
    if any(c.lower_ in TOY_MARKS for c in noun.children if c.i < noun.i):
        return TOY
    spans = find_phrases(noun.doc, lexicon().multiword_nouns, by_lemma=True)
    keys = [compound_key(span) for span in spans if span.end - 1 == noun.i]
    return next((KIND_COMPOUNDS[key] for key in keys if key in KIND_COMPOUNDS), noun_lemma(noun))


def person_described(noun: Token) -> bool:
    """A person with a phrase on the right ("a man in a white shirt", "a man on a surfboard"): another person
    joined to them shares it plausibly ("a man and a woman in white shirts"), a dog does not."""
    return animacy(noun) == "person" and any(
        c.i > noun.i and c.dep_ == "prep" and c.lower_ in PERSON_PREPOSITIONS for c in noun.children)


def look_end(noun: Token) -> int | None:
    """Where a thing joins a person without taking their look: the person's end, or the end of their first
    phrase on the right when it is a look ("A woman in a red dress and a girl cutting a cake"); None where the
    look cannot be passed: a participle of dress ("wearing red and black"), a "with" phrase ("a man with a top hat
    and a woman" lists what he has), an "in" phrase with its own "and" or with no verb right after it."""
    right = sorted((c for c in noun.children if c.i > noun.i and not c.is_punct), key=lambda c: c.i)
    if animacy(noun) != "person" or not right:
        return noun.idx + len(noun)
    if any(c.dep_ == "acl" and c.lemma_.lower() in LOOK_VERBS for c in right):
        return None
    first = right[0]
    if first.dep_ != "prep" or first.lower_ not in LOOK_PREPOSITIONS:
        return noun.idx + len(noun)
    after = first.right_edge.i + 1
    if first.lower_ == "with" or any(t.dep_ in ("cc", "conj") for t in first.subtree) or after >= len(noun.doc) or (
            noun.doc[after].tag_ not in FOLLOWING_VERB_TAGS):
        return None  # "a man with a top hat and a woman": a list of what he has
    return first.right_edge.idx + len(first.right_edge)


def dress_phrase(noun: Token) -> Token | None:
    """The person's first phrase on the right when it says what they wear: a participle of dress ("wearing a
    tie", "dressed in black") or "in"/"with" a worn thing ("in yellow shirt and black shorts"); not a place ("in a
    hospital bed") nor a thing held ("with a spoon"), which a person joined in front would share."""
    right = sorted((c for c in noun.children if c.i > noun.i and not c.is_punct), key=lambda c: c.i)
    if animacy(noun) != "person" or not right:
        return None
    first = right[0]
    if first.dep_ == "acl" and first.lemma_.lower() in LOOK_VERBS:
        return first
    worn = any(c.dep_ == "pobj" and lexicon().is_worn(noun_lemma(c)) for c in first.children)
    return first if first.dep_ == "prep" and first.lower_ in LOOK_PREPOSITIONS and worn else None


def partner_words(subject: Token, noun: Token, own_objects: bool) -> list[str]:
    """Curated words of the joined noun's kind: a dog, or another person, beside a named person ("a man and a
    woman", "skiers and a snowboarder"; beside "people", which may include any person, a dog, or a child where
    they are counted: "two people and a child"; no dog where `person_only` says a dog could not share what the
    person does; where a person rides or throws one thing, only a person, and only with `own_objects`: one thing
    each), another animal beside an animal (none where it acts on an object: "two horses and a dog pull a plow";
    one named with it in `addition.PARTNER_SHARE` of its captions or `kindred` to it: no giraffe joins sheep
    because both graze in fields, no elephant joins a cat; a bird `kindred` to a bird: "A duck and a swan
    floating", and only such a bird where the animal flies, `FLIGHT_VERBS`, or a bird is on water, `WATERS`).
    Other things join only `kindred` things ("a bike and a scooter parked"; a compound's or a toy's by
    `kind_lemma`), and none where the thing holds something, is fixed in place (`FIXING_VERBS`), sits in its
    own holder (`kindred.OWN_HOLDERS`) or is a building on or above something (`ABOVE_WORDS`): by the counts
    alone, "a table and a couch topped with a cake", "two airplanes and a car flying"; where the thing leans or
    rises, only things of a shape to (`STANCE_VERBS`)."""
    groups, lemma = lexicon().object_groups, kind_lemma(noun)
    kind = animacy(noun)
    acting = acting_verbs(subject, noun)
    if any(one_object_verb(verb) for verb in acting) and not (own_objects and kind == "person"):
        return []  # "a person riding a skateboard": a second one would ride it too, unless it becomes one each
    acts = bool(acting)
    if kind == "person":
        counted = noun.tag_ == "NN" or any(c.dep_ == "nummod" for c in noun.children)
        named = lemma in groups["person"] or lemma in PERSON_KIN
        people = ([word for word in groups["person"] if word != lemma and word not in PERSON_KIN.get(lemma, ())]
                  if named else ["child"] if counted else [])
        people += sorted(kindred(lemma) - {*groups["person"], "child", "dog", "person", "people"})
        dog_acts = person_only(own_verbs(subject, noun)) or lemma in GAME_ROLES
        return people if dog_acts or person_described(noun) else ["dog", *people]
    if acts:
        return []
    if kind != "animal":
        beings = (*groups["animal"], *groups["person"])  # "a stuffed dog" is no being, nor a thing's kin
        holds = any(verb.lemma_.lower() in CONTENT_VERBS | FIXING_VERBS for verb in own_verbs(subject, noun)) or bool(
            OWN_HOLDERS.get(lemma, frozenset()) & caption_lemmas(noun.doc)) or (
            lemma in BUILDINGS and bool(ABOVE_WORDS & caption_lemmas(noun.doc)))
        if kind is not None or lemma in beings or holds:
            return []
        return sorted(_of_the_stance(subject, noun, kindred(lemma)))
    animals = [word for word in groups["animal"] if " " not in word and word not in (lemma, *UNSURE_PARTNERS)]
    birds = sorted(kindred(lemma) & set(groups["bird species"]))
    flies = any(verb.lemma_.lower() in FLIGHT_VERBS for verb in own_verbs(subject, noun))
    if flies or (lemma in BIRDS and caption_lemmas(noun.doc) & WATERS):
        return birds  # "A flock of birds flying over the ocean", "A white bird sitting on top of a lake": no squirrel
    return animals + sorted(young(noun)) + birds


def _of_the_stance(subject: Token, noun: Token, words: frozenset[str]) -> frozenset[str]:
    """Those of `words` that could share the subject's stance (`STANCE_VERBS`: leaning, rising); all of them
    where it has none of those verbs."""
    for verb in own_verbs(subject, noun):
        words &= STANCE_VERBS.get(verb.lemma_.lower(), words)
    return words


def person_only(verbs: list[Token]) -> bool:
    """Clauses a dog joined to the person could not share, read down the verbs' own clauses (a relative clause
    hides its act: "who are about to hit tennis ball"), not into a noun's ("next to a road filled with cars"):
    one acting on an object ("people sitting in chairs using electronics"), holding something ("standing in the
    dirt with a bat"), or a person's own act (`PERSON_ACTS`: "women and a dog that are laughing")."""
    tokens = [token for verb in verbs for token in verb.subtree]
    held = [t.head for t in tokens if t.dep_ == "dobj" or (t.dep_ == "prep" and t.lower_ == "with")]
    acts = [t for t in tokens if t.pos_ == "VERB" and t.lemma_.lower() in PERSON_ACTS]
    return any(_in_clauses(token, verbs) for token in [*held, *acts])


def _in_clauses(token: Token, verbs: list[Token]) -> bool:
    """`token` is one of `verbs` or hangs on one through no noun."""
    while token not in verbs:
        if token.pos_ in ("NOUN", "PROPN", "PRON") or token.head is token:
            return False
        token = token.head
    return True


def young(noun: Token) -> frozenset[str]:
    """The young (`YOUNG`) that may join a real, grown animal: "A bear and a cub sleep in a hammock", but not
    "A baby brown bear and a cub" (one cub twice) nor "a stuffed bear and a cub"."""
    cub = YOUNG.get(noun_lemma(noun))
    grown = animacy(noun) == "animal" and not any(t.lower_ in YOUNG_MARKS for t in noun.subtree if t.i < noun.i)
    return frozenset({cub}) if cub and grown else frozenset()


def acting_verbs(subject: Token, noun: Token) -> list[Token]:
    """The subject's verbs (`own_verbs`) that have a direct object: a dog joined to "a man swinging a bat" would
    swing it too."""
    return [verb for verb in own_verbs(subject, noun) if any(c.dep_ == "dobj" for c in verb.children)]


def own_verbs(subject: Token, noun: Token) -> list[Token]:
    """The subject's participles and relative clauses ("a man who is riding a horse"), the verb it is subject of,
    and their conjuncts."""
    verbs = [c for t in {subject, noun} for c in t.children if c.dep_ == "acl"]
    verbs += [verb for t in {subject, noun} for verb in relative_clauses(t)]
    verbs += [subject.head] if subject.dep_.startswith("nsubj") else []
    return verbs + [c for verb in verbs for c in verb.children if c.dep_ == "conj" and c.pos_ == "VERB"]


def on_snow(doc: Doc) -> bool:
    """Someone skis or snowboards in the caption (`SNOW_SPORTS`)."""
    return any(token.lemma_.lower() in SNOW_SPORTS for token in doc)
