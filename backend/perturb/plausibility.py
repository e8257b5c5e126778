"""Is a negative caption plausible, or absurd on its face?

A negative such as "a bench sitting on a man" is false of the photo, but a
text-only model rejects it without the image, so it inflates a
vision-language model's score; SugarCrepe removed such negatives, and the
rubric (docs/perturbation-rubric.md, label "impl") reports them apart. Three rules
read the spaCy parse:

  inanimate_agent    an inanimate thing does what only people and animals
                     do ("a plate grasping a sandwich", "a grassy field
                     grazing"). Posture and motion verbs (sit, stand, lie,
                     run, fly, drive, hold, carry) are not on the list: COCO
                     says "a laptop sitting on a desk", "a bus driving".
                     Doing a trick is ("A skateboard does a flip"), but for
                     a motor vehicle or an aircraft.
  on_top_of_living   a heavy or fixed thing or a large animal is on top of
                     a person or an animal, or a thing rides one ("a bench
                     sitting on a man", "a horse riding a man").
  wrong_object       what is drunk is no drink ("drinking a donut"), or a
                     thing holds up, carries or lifts a person or an
                     animal ("an umbrella holding up a woman").

A violation marks a variant only if the perturbation made it: one of its
tokens lies in an edited span, and the original caption breaks no rule with
the same predicate (if it says "a door swinging open", "swing" takes things
as subjects here, and "a gate swinging open" stays plausible; parser quirks
of the original are excused the same way). What a noun names comes from
`nouns.noun_class` (curated word lists, then WordNet lexicon files when the
NLTK corpus is installed), the one classifier the swap rules use too; a
noun neither knows is UNKNOWN and fires no rule. The selectional rules of
`selection` (what fits a place, a verb, a container) and `selection_ground`
(where a body can be: water, air, ground) run beside these three, with those of
`plausibility_use` (what things are used for), `plausibility_fit` (words that misfit the words kept around
them, read with the generation-time checks of `refill_neighbours` and `attribute_fit`), `plausibility_scene`
(things where they cannot be, beings doing what they cannot) and `plausibility_kinds` (beings and boats out of their
kind's places and acts). The result is deterministic and errs towards
"plausible".
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable, Iterator, Sequence

from spacy.tokens import Doc, Token

from backend.perturb.core import Variant
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import load_spacy, parse
from backend.perturb.nouns import BABIES, INANIMATE, LIVING, PERSON, is_name, noun_class, noun_key, referent
from backend.perturb.order import FAMILY as ORDER_FAMILY
from backend.perturb.parse_reading import verb_lemma
from backend.perturb.plausibility_fit import fit_violations
from backend.perturb.plausibility_kinds import kind_violations
from backend.perturb.plausibility_parse import (
    DRINK_VERBS,
    LARGE_ANIMALS,
    Span,
    Violation,
    agent_options,
    is_drink,
    is_linking,
    is_passive,
    is_under,
    kind_of,
    make_violation,
    placements,
)
from backend.perturb.plausibility_scene import scene_violations
from backend.perturb.plausibility_use import use_violations
from backend.perturb.selection import selection_violations
from backend.perturb.selection_ground import ground_violations

# Verbs (base forms) whose agent must be a person or an animal, or a figure
# that is drawn as one ("a teddy bear wearing a hat"). Left out because
# captions give them things as subjects: ride ("a bus riding down the
# street"; rule 2 covers riding someone), read ("a sign that reads"),
# paint and write (mostly passive: "a truck painted green"), run, fly, drive.
AGENT_VERBS = frozenset("""
    eat graze drink chew bite lick sniff feed smile laugh grin talk chat speak look watch stare gaze pose wave walk
    jog hike stroll wander roam ski snowboard surf skateboard swim play throw toss catch kick swing pet hug kiss
    cuddle grab grasp clutch type text cook bake sleep nap wear use brush shave comb herd dance sing yell shout cry
    frown photograph kneel squat repair prepare buy shop
""".split())
TRICK_VERBS = frozenset(["do", "perform"])
TRICKS = frozenset("trick flip stunt wheelie kickflip ollie jump".split())
_STUNT_VEHICLES = frozenset(["self-propelled_vehicle.n.01", "aircraft.n.01"])
# Things too heavy, large or fixed to lie on a person or an animal.
HEAVY_NOUNS = frozenset("""
    bench table desk couch sofa bed chair dresser cabinet refrigerator fridge oven stove dishwasher piano toilet
    bathtub car truck bus train boat ship airplane plane jet helicopter motorcycle tractor van building house tower
    bridge church barn fence wall field hill mountain beach street road sidewalk park lake river ocean sea forest
    city tree kitchen
""".split())
_HEAVY_SYNSETS = frozenset(["furniture.n.01", "motor_vehicle.n.01", "craft.n.02", "public_transport.n.01",
                            "building.n.01", "bridge.n.01", "tower.n.01", "stadium.n.01", "area.n.05",
                            "geological_formation.n.01", "body_of_water.n.01", "home_appliance.n.01",
                            "way.n.06"])
SUPPORT_PREPOSITIONS = frozenset(["on", "onto", "atop", "upon"])
_CARRIER_SYNSETS = frozenset(["conveyance.n.03", "wheeled_vehicle.n.01", "seat.n.03", "furniture.n.01",
                              "container.n.01"])
# Verbs of holding a weight up: a thing may hold a sandwich ("a plate holding food"), not a person.
LIFTING_VERBS = frozenset({"hold", "carry", "lift", "raise"})


@functools.lru_cache(maxsize=4096)
def _wordnet_heavy(key: str) -> bool:
    """The most frequent sense is furniture, a vehicle, a building, a landform
    or water. Not any place: WordNet files "top" and "edge" as locations."""
    return is_under(key, _HEAVY_SYNSETS)


def is_heavy(token: Token) -> bool:
    """A large animal, or a thing too heavy or fixed to lie on a living being."""
    token = referent(token)
    if token.pos_ not in ("NOUN", "PROPN") or is_name(token):
        return False
    key = noun_key(token)
    if key in LARGE_ANIMALS or key in HEAVY_NOUNS:
        return True
    return noun_class(token) == INANIMATE and _wordnet_heavy(key)


def _does_a_trick(verb: Token) -> bool:
    """Doing or performing a trick, a flip or a stunt: "A skateboard on a person does a flip" (the board only
    carries the rider)."""
    return verb_lemma(verb) in TRICK_VERBS and any(
        child.dep_ == "dobj" and child.lemma_.lower() in TRICKS for child in verb.children)


def _performs_tricks(agent: Token) -> bool:
    """A motor vehicle or an aircraft may do a stunt ("a plane doing a loop", "a motorcycle doing a wheelie")."""
    return is_under(noun_key(referent(agent)), _STUNT_VEHICLES)


def _inanimate_agents(doc: Doc) -> list[Violation]:
    """Rule 1: an inanimate thing does what only people and animals do."""
    found = []
    for verb in doc:
        lemma = verb_lemma(verb)
        trick = verb.pos_ == "VERB" and _does_a_trick(verb)
        if verb.pos_ != "VERB" or (lemma not in AGENT_VERBS and not trick) or is_linking(verb):
            continue
        for option in agent_options(verb):
            if all(kind_of(agent) == INANIMATE and not (trick and _performs_tricks(agent)) for agent in option):
                found.append(make_violation("inanimate_agent", lemma, [option[0]], verb))
    return found


def _support_pairs(doc: Doc) -> list[tuple[tuple[Token, ...], Token, str]]:
    """(what may be on top, what is under it, predicate) for "X on Y",
    "X sitting on top of Y" and "X riding Y". What "on" places is the noun
    it hangs on, or the agent of its verb or copula."""
    pairs = placements(doc, SUPPORT_PREPOSITIONS)
    for token in doc:
        if token.pos_ == "VERB" and verb_lemma(token) == "ride" and not is_passive(token):
            objects = [child for child in token.children if child.dep_ == "dobj"]
            pairs += [(above, below, "ride") for above in agent_options(token) for below in objects]
    return pairs


def _crushes(above: Token, predicate: str) -> bool:
    """Heavy things and large animals cannot lie on someone; no thing rides anyone."""
    return is_heavy(above) or (predicate == "ride" and kind_of(above) == INANIMATE)


def _on_top_of_living(doc: Doc) -> list[Violation]:
    """Rule 2: something heavy on top of a person or an animal, or a thing riding one."""
    found = []
    for option, below, predicate in _support_pairs(doc):
        if kind_of(below) in LIVING and all(_crushes(above, predicate) for above in option):
            found.append(make_violation("on_top_of_living", predicate, [option[0], below], None))
    return found


def _carries_people(agent: Token) -> bool:
    """A vehicle or a seat: "a bus carrying people", "a chair holding a baby"."""
    return is_under(noun_key(referent(agent)), _CARRIER_SYNSETS)


def _wrong_objects(doc: Doc) -> list[Violation]:
    """Rule 3: something drunk that is no drink ("drinking a donut"), or a living being held up, carried or
    lifted by a thing ("an umbrella holding up a woman")."""
    found = []
    for verb in doc:
        lemma = verb_lemma(verb)
        objects = [child for child in verb.children if child.dep_ == "dobj"]
        if verb.pos_ != "VERB" or not objects or is_passive(verb):
            continue
        if lemma in DRINK_VERBS and not any(is_drink(obj) for obj in objects):
            found.append(make_violation("wrong_object", lemma, [objects[0]], verb))
        elif lemma in LIFTING_VERBS and all(kind_of(obj) in LIVING for obj in objects):
            for option in agent_options(verb):
                if all(kind_of(agent) == INANIMATE and not _carries_people(agent) for agent in option) or all(
                        _infant_lifting_a_grown_person(agent, objects[0]) for agent in option):
                    found.append(make_violation("wrong_object", lemma, [option[0], objects[0]], verb))
    return found


def _infant_lifting_a_grown_person(agent: Token, held: Token) -> bool:
    """"A baby holding a man", "A toddler carrying a woman" (a role swap judged absurd): the held one a person who
    is no child."""
    held = referent(held)
    return (noun_key(referent(agent)) in BABIES and kind_of(held) == PERSON
            and noun_key(held) not in lexicon().head_classes["juvenile"])


def _doc_violations(doc: Doc) -> tuple[Violation, ...]:
    """The three rules here, the selectional ones (`selection`, `selection_ground`) and those of use, fit and
    scene and kind (`plausibility_use`, `plausibility_fit`, `plausibility_scene`, `plausibility_kinds`) over one
    parse."""
    return tuple(_inanimate_agents(doc) + _on_top_of_living(doc) + _wrong_objects(doc) + selection_violations(doc)
                 + ground_violations(doc) + use_violations(doc) + fit_violations(doc)
                 + scene_violations(doc) + kind_violations(doc))


class _Violations:
    """`violations(text)`: every rule `text` breaks, wherever in the text; remembered, since one caption's
    negatives are labelled again at each seed, probe and test. `of_all` labels many texts and parses those not
    yet remembered in batches: spaCy's `pipe` is about five times faster than one call per text, and a caption
    has dozens of negatives. Past `size` texts everything is forgotten at once (a dict's single operations are
    atomic, so two probes in threads may share it)."""

    def __init__(self, size: int) -> None:
        self._known: dict[str, tuple[Violation, ...]] = {}
        self._size = size

    def __call__(self, text: str) -> tuple[Violation, ...]:
        found = self._known.get(text)
        if found is None:
            found = self._remember(text, _doc_violations(parse(_as_parsed(text))))
        return found

    def of_all(self, texts: Sequence[str]) -> dict[str, tuple[Violation, ...]]:
        remembered = {text: self._known.get(text) for text in texts}
        found = {text: known for text, known in remembered.items() if known is not None}
        unknown = [text for text in remembered if text not in found]
        for text, doc in zip(unknown, load_spacy().pipe([_as_parsed(text) for text in unknown], batch_size=64)):
            found[text] = self._remember(text, _doc_violations(doc))
        return found

    def cache_clear(self) -> None:
        self._known.clear()

    def _remember(self, text: str, found: tuple[Violation, ...]) -> tuple[Violation, ...]:
        if len(self._known) >= self._size:
            self._known.clear()
        self._known[text] = found
        return found


def _as_parsed(text: str) -> str:
    """An all-capitals caption is parsed in lower case: spaCy reads capitals as proper nouns."""
    return text.lower() if text.isupper() else text


violations = _Violations(size=8192)


def implausibilities(text: str, original: str | None = None, changed: Sequence[Span] | None = None,
                     found: Sequence[Violation] | None = None) -> list[Violation]:
    """Violations of `text` that the perturbation made (see the module
    docstring): none on a predicate the `original` breaks too, and, when
    `changed` spans of `text` are given, none without a changed token.
    `found`: the text's violations, if already known."""
    excused = {(v.rule, v.predicate) for v in violations(original)} if original is not None else set()
    found = violations(text) if found is None else found
    return [violation for violation in found if (violation.rule, violation.predicate) not in excused
            and (changed is None or violation.touches(changed))]


def is_plausible(text: str, original: str | None = None, changed: Sequence[Span] | None = None) -> bool:
    """False when `text` is absurd on its face in a way `original` is not."""
    return not implausibilities(text, original, changed)


# Candidates labelled per parse batch by `plausible_among`: spaCy parses 8 texts in about half the time per text
# of one at a time (3.4 against 6.1 ms here), and a consumer that stops early wastes at most 7 parses.
LABEL_BATCH = 8


def plausible_among(caption: str, variants: Iterable[Variant]) -> Iterator[Variant]:
    """The `variants` of `caption` that `is_plausible` passes, in order, judged `LABEL_BATCH` at a time: a family
    that tries refills until enough pass reads them lazily, and one parse per candidate was a sixth of its time."""
    candidates = iter(variants)
    while batch := list(itertools.islice(candidates, LABEL_BATCH)):
        found = violations.of_all([variant.text for variant in batch])
        yield from (variant for variant in batch
                    if not implausibilities(variant.text, caption, changed_spans(variant), found[variant.text]))


def changed_spans(variant: Variant) -> list[Span]:
    """Character spans of `variant.text` that its edits wrote (edits hold
    offsets into the original caption, so later ones shift)."""
    spans, shift = [], 0
    for edit in sorted(variant.edits, key=lambda edit: edit.start):
        start = edit.start + shift
        spans.append((start, start + len(edit.after)))
        shift += len(edit.after) - (edit.end - edit.start)
    return spans


def mark_plausibility(caption: str, variants: Sequence[Variant]) -> list[Variant]:
    """`variants` with `plausible` set on every negative; positives are left as they are.

    Called once by `perturb`, after generation: families stay free to
    produce absurd negatives (benchmarks such as ARO have them), and the
    probe decides whether to count them. A variant without edits is
    judged as a whole. ARO's word-order shuffles are left plausible: they
    are word salad by design (the rubric judges them against ARO's
    definition, and none was judged absurd), and a parse of word salad
    finds "agents" at random ("a couch sits on a wii while playing couple").
    """
    found = violations.of_all([variant.text for variant in variants if is_labelled(variant)])
    return [dataclasses.replace(variant, plausible=not implausibilities(
                variant.text, caption, changed_spans(variant) or None, found[variant.text]))
            if is_labelled(variant) else variant for variant in variants]


def is_labelled(variant: Variant) -> bool:
    """A negative whose plausibility is read: any but an ARO shuffle (see `mark_plausibility`)."""
    return variant.kind == "negative" and variant.family != ORDER_FAMILY
