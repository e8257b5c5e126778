"""Additions (SugarCrepe's add_obj and add_att): the caption gains an object or an attribute it did not state.

A good addition fits the scene, so a text-only model cannot reject it, yet a typical photo of the caption does
not show it and the caption does not imply it: "a man riding a horse" -> "... a horse with a dog", not "... with
a saddle". Both sides are read off co-occurrence counts over public caption text (`caption_stats`):

* object: a curated object word (the lexicon's object groups, no people, clothing, places or grounds) that some noun
  of the caption co-occurs with in at least `MIN_TOGETHER` captions (it fits), but that no noun of the caption
  predicts in `IMPLIED_SHARE` or more of its captions (a typical photo would show it: "sink" with "bathroom"), and
  that is no synonym, overlap or namesake of a caption noun. It is placed (`addition_sites`) as "with a X" after the
  object of a place preposition ("on a table with a lamp"; not on a WordNet compound's head: "home plate"; an
  outdoor place also takes one of its curated things there, `addition_rooms.PLACE_FURNISHINGS`: "in a garden with a
  fountain"), or as "next to a X" at the end of a caption that ends with a noun, where it must fit every
  well-counted noun of the scene (`_fits_scene`: no bed beside men on bikes) or be `kindred` to that noun and seen
  with another ("A small toy is sitting on a plate of pizza next to a salad"). Or, as most of SugarCrepe's add_obj
  negatives do, joined to the caption's subject with "and", the verb made plural, a relative clause's too ("A cat
  and a rabbit that are laying on a couch"): a person or a dog beside a named person ("a man and a woman standing";
  after a person's look phrase, which stays theirs: "A woman in a red dress and a girl",
  `addition_partners.look_end`; in front of them where the look is dress that cannot be passed: "A woman and a man
  in yellow shirt and black shorts playing tennis"), an animal the counts name with an animal beside it ("a sheep
  and a dog"), never where the subject acts on an object (but for one ridden thing each: "riding skateboards") or a
  pronoun points back to it (`addition_references`; who may join is `addition_partners`'), and in front of a subject
  whose phrase on the right would move ("A bus and a cargo van with a chip sign"), also through a depiction's "of"
  ("a close up of a bowl and a plate of food"; where the join goes is `addition_subject`'s). Where the counts are
  too few, `kindred` things stand in for them: a cow beside a sheep, a bus joined to "a car" as subject, third list
  member ("a tram, a bus and a car") or second object ("holding a phone and a camera"), at the sites `lists` reads
  (a list of two kinds of food takes a third, `kindred.FOOD_KINDS`: "meats, fruits and vegetables"); and a grown
  bear takes a cub (`kindred.YOUNG`). A room's fixtures are never added to it ("a kitchen with a stove" is still
  true of its photo). The room, table or street a caption is about takes one of its furnishings in the list of its
  things ("A hotel room with a small television, a plant and a work desk", `addition_rooms`);
* attribute: a colour, material or pattern word the counts show on such nouns but not the usual one, or a
  person's look a typical photo does not show, placed where it splits no compound (`addition_attributes`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from spacy.tokens import Doc, Token

from backend.perturb.addition_attributes import BALL_GAMES, attribute_additions
from backend.perturb.addition_companions import companion_site, companion_words
from backend.perturb.addition_partners import (
    FIXING_VERBS,
    PERSON_PREPOSITIONS,
    acting_verbs,
    dress_phrase,
    kind_lemma,
    look_end,
    on_snow,
    partner_words,
    young,
)
from backend.perturb.addition_references import (
    own_object_edits,
    points_back,
    relative_agreement,
    verb_agreement,
)
from backend.perturb.addition_rooms import (
    FURNISHINGS,
    place_furnishings,
    room_edits,
    room_kind,
    room_lemma,
    topic_room,
)
from backend.perturb.addition_sites import FRAME_NOUNS, counted_lemma, object_sites
from backend.perturb.addition_subject import front_of, subject_noun
from backend.perturb.caption_stats import CaptionStats, shipped
from backend.perturb.core import Edit, Request, Variant, build, spread, take_distinct
from backend.perturb.inflect import fit_case, indefinite_article, pluralize
from backend.perturb.kindred import (
    BATHROOM_ONLY,
    BATHROOM_WORDS,
    FOOD_KINDS,
    NEVER_ADDED,
    OTHER_NAMES,
    PLACE_FIXTURES,
    ROOM_FIXTURES,
    kindred,
    stray_animal,
)
from backend.perturb.lexicon import lexicon
from backend.perturb.lists import ListSite, list_sites, long_list_sites, one_noun_sites
from backend.perturb.misread_verbs import carried_edits, reread
from backend.perturb.nlp import find_phrases
from backend.perturb.nouns import animacy, is_object_noun, takes_article
from backend.perturb.parse_reading import caption_lemmas, in_fixed_phrase, noun_lemma

FAMILY = "addition"
MIN_TOGETHER = 2
MIN_NOUN_CAPTIONS = 3
IMPLIED_SHARE = 0.2
MIN_SHARE = 0.02
CANDIDATES_PER_SITE = 8
PARTNERS = 4
PARTNER_SHARE = 0.05
SCENE_NOUN_CAPTIONS = 20
# Object groups whose members are not added: people (a crowd may include one), things worn (on whom?),
# settings and grounds (a scene has one place), shapes and sports (not objects in a photo), signs (most street
# photos show one unnamed: "a fire hydrant on a city sidewalk with a sign" may still be true).
SKIPPED_GROUPS = frozenset({
    "person", "upper garment", "headwear", "neckwear", "footwear", "room", "outdoor place", "ground", "shape",
    "sport", "building part", "sign",
})
# Surfaces the caption's things stand on: a photo of "a banana on a plate" shows the table under it.
SURFACES = frozenset({"table", "desk", "shelf"})


def _object_words() -> list[str]:
    """Group words that may be added as "a X": not a mass noun (`nouns.takes_article`: "next to a rice")."""
    groups = lexicon().object_groups
    return [word for name, words in groups.items() if name not in SKIPPED_GROUPS for word in words
            if " " not in word and word not in SURFACES and takes_article(word)]


def _scene_nouns(doc: Doc) -> list[str]:
    """The caption's common nouns, with a lower-case word spaCy tagged as a name ("a white formica kitchen") and a
    bathroom written in two words read as one ("a bath room" has a toilet and a bathtub: `_implied`)."""
    nouns = [t for t in doc if t.is_alpha and (t.tag_ in ("NN", "NNS") or (t.tag_ == "NNP" and t.text.islower()))]
    return list(dict.fromkeys("bathroom" if room_lemma(t) == "bathroom" else counted_lemma(t) for t in nouns))


def _named(word: str, scene: list[str], present: frozenset[str]) -> bool:
    lex = lexicon()
    return word in present or any(not lex.may_replace(word, noun) for noun in scene)


def _fit(stats: CaptionStats, word: str, noun: str) -> float:
    """Share of `noun`'s captions that also name `word`, 0 below `MIN_TOGETHER` captions or `MIN_SHARE`."""
    share = stats.given(word, noun)
    return share if stats.together(word, noun) >= MIN_TOGETHER and share >= MIN_SHARE else 0.0


def added_objects(doc: Doc, site: str, stats: CaptionStats, words: list[str] | None = None,
                  anywhere: bool = False, kin: frozenset[str] = frozenset()) -> list[str]:
    """Object words that fit next to the `site` noun (named with it in `MIN_TOGETHER` captions and at least
    `MIN_SHARE` of the site noun's, or one of `kin`: `kindred` words, which the counts are too few to vouch
    for), that the caption does not name, and that no noun of it implies (`_implied`); best fit first. `words`
    limits the candidates; with `anywhere` they need only fit some noun of the caption (a dog or a person where
    people are: "a man and a dog" in a field). A bathroom's fixtures join only a bathroom (`kindred.BATHROOM_ONLY`)."""
    scene = _scene_nouns(doc)
    present = caption_lemmas(doc)
    fitting = []
    bathroom = bool(BATHROOM_WORDS.intersection(scene))
    for word in [w for w in (_object_words() if words is None else words)
                 if w not in NEVER_ADDED and (bathroom or w not in BATHROOM_ONLY)]:
        if (stats.nouns.get(word, 0) < MIN_NOUN_CAPTIONS and word not in kin) or _named(word, scene, present) or any(
                name in doc.text.lower() for name in OTHER_NAMES.get(word, ())):
            continue
        share = _fit(stats, word, site)
        scene_share = max((_fit(stats, word, noun) for noun in scene), default=0.0) if anywhere else 0.0
        if not (share or scene_share or word in kin):
            continue
        if not _implied(stats, word, scene):
            fitting.append((-share, -scene_share, word not in kin, word))
    return [word for *_, word in sorted(fitting)]


def _implied(stats: CaptionStats, word: str, scene: list[str]) -> bool:
    """A typical photo of the scene shows `word`: a noun of it names `word` in `IMPLIED_SHARE` of its captions
    ("sink" with "bathroom"), or is a room or a place that `word` is a fixture of (`ROOM_FIXTURES`,
    `PLACE_FIXTURES`)."""
    return any(word in ROOM_FIXTURES.get(noun, ()) or word in PLACE_FIXTURES.get(noun, ())
               or (noun in stats.nouns and stats.given(word, noun) >= IMPLIED_SHARE) for noun in scene)


def _fits_scene(stats: CaptionStats, word: str, scene: list[str]) -> bool:
    """`word` shares `MIN_TOGETHER` captions with every noun of the scene the counts know well
    (`SCENE_NOUN_CAPTIONS`), but for frames and groups: a thing put "next to" the whole scene must belong in it
    ("men on bikes pulled by a group of dogs next to a bed" was judged absurd: a bed fits dogs, not bikes)."""
    return all(stats.together(word, noun) >= MIN_TOGETHER for noun in scene
               if stats.nouns.get(noun, 0) >= SCENE_NOUN_CAPTIONS and noun not in FRAME_NOUNS)


def _seen_beside(stats: CaptionStats, word: str, scene: list[str], site: str) -> bool:
    """A `kindred` thing put "next to" the caption's last noun is seen with some other noun of the scene in
    `MIN_TOGETHER` captions: the site may be another sense of its word ("the ball crosses the plate next to a
    bowl": home plate)."""
    return any(stats.together(word, noun) >= MIN_TOGETHER for noun in scene if noun not in (site, *FRAME_NOUNS))


# A ball game's own things, which a caption of the game names by a common word: its ball, home plate, a base.
GAME_THINGS = frozenset({"ball", "plate", "base", "mound"})


def _site_kin(noun: Token) -> frozenset[str]:
    """`kindred` things that may go beside a lone noun; none beside a game's own thing ("getting ready to hit the
    ball next to a kite" at a tennis tournament was judged absurd; "after it crosses the plate and a bowl" is home
    plate)."""
    lemma = noun_lemma(noun)
    if lemma in GAME_THINGS and {t.lemma_.lower() for t in noun.doc} & BALL_GAMES:
        return frozenset()
    return kindred(lemma)


def _fits_beside(stats: CaptionStats, word: str, noun: Token, scene: list[str], kin: frozenset[str]) -> bool:
    """`word` may go "next to" the last noun: it fits the whole scene, or is kindred to the noun and seen with
    another noun of the scene; a being only beside a counted noun."""
    seen = _fits_scene(stats, word, scene) or (word in kin and _seen_beside(stats, word, scene, noun_lemma(noun)))
    return seen and _may_stand_beside(word, noun)


def _may_stand_beside(word: str, noun: Token) -> bool:
    """A being joins only a noun that names things one counts (plural, or with a determiner, number or owner):
    "petting goats next to a sheep", but no pig beside the meat of "a man is cooking chicken" (main made "cooking
    chicken and a pig")."""
    if not lexicon().is_animate(word):
        return True
    if on_snow(noun.doc):
        return False  # "A man snowboarding down a hill next to a dog": no dog on the slope (as none joins him)
    return noun.tag_ == "NNS" or any(c.dep_ in ("det", "nummod", "poss") for c in noun.children)


def _site_options(request: Request, stats: CaptionStats, noun: Token, connective: str) -> list[list[Edit]]:
    """Edits adding a thing after an object site: "with a X" after a place's noun, "next to a X" at the end.
    A "next to" thing fits the whole scene (`_fits_scene`), or is `kindred` to the site noun and seen with some
    other noun of the scene (`_seen_beside`: "a plate of pizza next to a salad"), and a being
    stands only beside a counted noun (`_may_stand_beside`)."""
    scene, groups, lemma = _scene_nouns(request.doc), lexicon().object_groups, counted_lemma(noun)
    animals = frozenset({*groups["animal"], *groups["bird species"]})
    kin = _site_kin(noun) if connective == "next to" else place_furnishings(noun)
    words = [w for w in added_objects(request.doc, lemma, stats, kin=kin) if not stray_animal(w, scene, animals)
             and (connective != "next to" or _fits_beside(stats, w, noun, scene, kin))][:CANDIDATES_PER_SITE]
    end = noun.idx + len(noun)
    return [[Edit("", f" {connective} {indefinite_article(word)} {word}", end, end)] for word in words]


def _object_additions(request: Request, stats: CaptionStats) -> Iterator[Variant]:
    options = [_site_options(request, stats, noun, connective) for noun, connective in object_sites(request.doc)]
    options.append(_subject_options(request, stats) or _companion_options(request, stats))
    options += [_list_options(request, site, stats)
                for site in [*list_sites(request.doc), *long_list_sites(request.doc)]]
    options += [_one_noun_options(request, noun, stats)
                for noun in one_noun_sites(request.doc, lambda token: animacy(token) == "person")]
    options.append(_room_options(request, stats))
    for edits in spread(options, request.rng):
        yield build(request, edits, FAMILY, "object")


def _subject_options(request: Request, stats: CaptionStats) -> list[list[Edit]]:
    """Edits joining an object of the subject's kind to it: "A sheep standing in a field" -> "A sheep and a cow
    standing in a field", the verb made plural where it must be. Where spaCy read the verb as a plural noun ("a
    zebra grazes on": `misread_verbs`), the first parse is wrong: the joins are found on the caption read again and
    carried back ("a zebra and a giraffe graze on"; "A zebra in a field grazes" had kept "grazes" singular), and
    only where that reading finds none on the first parse."""
    reading = reread(request.doc, request.caption)
    if reading is not None:
        again = dataclasses.replace(request, caption=reading.text, doc=reading.doc)
        carried = [edits for found in _joined_subject_options(again, stats)
                   if (edits := carried_edits(reading, found)) is not None]
        if carried:
            return carried
    return _joined_subject_options(request, stats)


def _joined_subject_options(request: Request, stats: CaptionStats) -> list[list[Edit]]:
    found = subject_noun(request.doc)
    if found is None or not is_object_noun(found[1]):
        return []
    subject, noun, front = found
    after = noun.idx + len(noun) if front else look_end(noun)
    past_look = after is None
    if past_look:  # "A woman and a man in white shirt and shorts playing tennis": the look stays next to him
        front = front_of(subject, noun)
    if front is not None:
        end = front.idx
    elif after is not None:
        end = after
    else:
        return []
    agreement, relative = verb_agreement(request.caption, subject), relative_agreement(request.caption, subject, noun)
    if agreement is None or relative is None or points_back(subject, noun, bool(front)):
        return []
    if past_look and not _joins_past_dress(subject, noun, agreement):
        return []
    agreement += relative
    owned = own_object_edits(acting_verbs(subject, noun))
    no_animal = past_look or on_snow(request.doc)  # no dog wearing her shoe, none skiing
    partners = [word for word in partner_words(subject, noun, owned is not None)
                if not (no_animal and word in lexicon().object_groups["animal"])]
    lemma, anywhere = kind_lemma(noun), animacy(noun) == "person"
    if lemma in lexicon().mass_nouns:
        return []  # "The broccoli and a lettuce is": a mass noun may be tagged plural, its verb left singular
    kin = kindred(lemma) | young(noun)
    words = [word for word in added_objects(request.doc, lemma, stats, partners, anywhere, kin)
             if partners and word not in lexicon().mass_nouns
             and (anywhere or stats.given(word, lemma) >= PARTNER_SHARE or word in kin)][:PARTNERS]
    return [[*_join_edits(word, end, front), *agreement, *(owned or [])] for word in words]


def _companion_options(request: Request, stats: CaptionStats) -> list[list[Edit]]:
    """Edits giving the subject person a companion where none may join them (`addition_companions`): one the
    caption neither names nor implies (`added_objects`, the companions standing in as `kindred` words, which the
    counts need not vouch for)."""
    noun = companion_site(request.doc)
    if noun is None:
        return []
    words = companion_words(noun)
    end = noun.idx + len(noun)
    added = added_objects(request.doc, noun_lemma(noun), stats, list(words), kin=frozenset(words))[:PARTNERS]
    return [[Edit("", f" with {indefinite_article(word)} {word}", end, end)] for word in added]


def _joins_past_dress(subject: Token, noun: Token, agreement: list[Edit]) -> bool:
    """A person joins in front of one whose look cannot be passed only where that look is dress (`dress_phrase`:
    not "in a hospital bed", which both would share), the person acts on no object but a game or a picture (two
    would share it: "A boy and a woman with a hat ... smoking a long cigarette" was judged absurd), is no player
    named by their game ("A child and a male baseball player wearing red and white are up to bat"), and the
    caption's verb is known: made plural, already plural, or a participle after the look ("A girl and a man in
    yellow shirt and black shorts playing a game of tennis"; not "A man wearing a tie poses", where spaCy read
    "poses" as the tie's noun)."""
    look = dress_phrase(noun)
    if look is None or any(c.dep_ == "compound" and c.lower_ in BALL_GAMES for c in noun.children):
        return False
    objects = [c for verb in acting_verbs(subject, noun) if verb.i != look.i for c in verb.children if c.dep_ == "dobj"]
    if any(c.lemma_.lower() not in FRAME_NOUNS for c in objects):
        return False
    return bool(agreement) or noun.tag_ == "NNS" or any(
        c.dep_ == "acl" and c.tag_ in ("VBG", "VBN") and c.i > look.right_edge.i for c in noun.children)


def _join_edits(word: str, end: int, front: Token | None) -> list[Edit]:
    """"and a X" at `end` (after the joined noun, or a person's look: `look_end`), or "A X and " before `front`,
    the first word's capital moved."""
    if front is None:
        return [Edit("", f" and {indefinite_article(word)} {word}", end, end)]
    start = bool(front.is_sent_start)
    added = fit_case(f"{indefinite_article(word)} {word} and ", front.text, at_sentence_start=start)
    first = fit_case(front.text, front.text, at_sentence_start=False, keeps_capital=front.pos_ == "PROPN")
    return [Edit(front.text, added + first, front.idx, front.idx + len(front))]


def _list_options(request: Request, site: ListSite, stats: CaptionStats) -> list[list[Edit]]:
    """Edits putting a third member in a two-member list ("a cat and a dog" -> "a cat, a rabbit and a dog"):
    a word `kindred` to every member that has kindred words, else, where the members share no set (a list mixes
    kinds: "potatoes, carrots and chicken" -> "potatoes, tomatoes, carrots and chicken"), to one of them that fits
    every member (`_fits_scene`: no bus beside a bicycle in "a room with chair, bicycle, television"), in the
    list's form (no being where a member is none:
    "chicken, rice, cow, and vegetable dish" read the chicken as the animal); no mass noun ("a broccoli"),
    no member beside "people", who may be anyone ("People, men and dishes"),
    and no member inside a listed compound or set phrase ("hot dog", "salt and pepper")."""
    lex, doc = lexicon(), request.doc
    multiword = find_phrases(doc, lex.multiword_nouns, by_lemma=True)
    if any(any(span.start <= m.i < span.end for span in multiword) or in_fixed_phrase(m, lex.fixed_phrases)
           or not is_object_noun(m) or noun_lemma(m) in NEVER_ADDED for m in site.members):
        return []
    members = [noun_lemma(m) for m in site.members]
    kin_sets = [kindred(member) for member in members if kindred(member)]
    kin = _food_kinds(members) if site.form != "article" else frozenset()
    if not kin_sets and not kin:
        return []
    kin = kin or frozenset.intersection(*kin_sets) or frozenset(
        word for kin_set in kin_sets for word in kin_set if _fits_scene(stats, word, members))
    things = not all(lex.is_animate(noun_lemma(m)) for m in site.members)
    words = [word for word in added_objects(doc, noun_lemma(site.members[-1]), stats, sorted(kin), kin=kin)
             if word not in lex.mass_nouns and not (things and lex.is_animate(word))][:PARTNERS]
    written = {"article": lambda word: f"{indefinite_article(word)} {word}", "plural": pluralize,
               "bare": lambda word: word}[site.form]
    return [[Edit("", f", {written(word)}", site.offset, site.offset)] for word in words]


def _food_kinds(members: list[str]) -> frozenset[str]:
    """The `FOOD_KINDS` a list of foods may take: two of its members are such kinds and the rest are foods of the
    lexicon ("rice, vegetables and fresh fruit" -> "rice, vegetables, eggs and fresh fruit")."""
    groups = lexicon().object_groups
    foods = {word for name in ("fruit", "vegetable", "meat", "starch") for word in groups[name]}
    kinds = [member for member in members if member in FOOD_KINDS]
    if len(kinds) < 2 or any(member not in FOOD_KINDS | foods for member in members):
        return frozenset()
    return FOOD_KINDS - set(members)


def _one_noun_options(request: Request, noun: Token, stats: CaptionStats) -> list[list[Edit]]:
    """Edits joining a `kindred` thing to a lone object ("next to a toilet" -> "next to a toilet and a sink"), but
    no being beside a mass noun (`_may_stand_beside`)."""
    lex, lemma = lexicon(), noun_lemma(noun)
    after = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    if animacy(noun) == "person" and after is not None and after.lower_ in PERSON_PREPOSITIONS:
        return []  # "next to a boy and a dog in a blue shirt": the boy's look would move to the dog
    fixer = noun.head.head
    if noun.head.dep_ == "prep" and fixer.pos_ == "VERB" and fixer.lemma_.lower() in FIXING_VERBS:
        return []  # "A large clock fixed to a building and a house": one clock fixed to both
    if not is_object_noun(noun) or in_fixed_phrase(noun, lex.fixed_phrases) or any(
            span.start <= noun.i < span.end for span in find_phrases(noun.doc, lex.multiword_nouns, by_lemma=True)):
        return []
    kin = _site_kin(noun)
    words = [word for word in added_objects(request.doc, lemma, stats, sorted(kin), kin=kin)
             if word not in lex.mass_nouns and _may_stand_beside(word, noun)][:PARTNERS]
    end = noun.idx + len(noun)
    return [[Edit("", f" and {indefinite_article(word)} {word}", end, end)] for word in words]


def _room_options(request: Request, stats: CaptionStats) -> list[list[Edit]]:
    """Edits adding a furnishing to the room the caption is about (`addition_rooms`), one the counts do not
    imply: "A corner of a kitchen with a big fridge and a toaster"."""
    room = topic_room(request.doc)
    kind = room_kind(room) if room is not None else None
    if room is None or kind is None:
        return []
    things = FURNISHINGS[kind]
    return room_edits(room, added_objects(request.doc, kind, stats, sorted(things), kin=things)[:PARTNERS])


def addition(request: Request) -> list[Variant]:
    stats = shipped()
    return [*take_distinct(request, _object_additions(request, stats)),
            *take_distinct(request, attribute_additions(request, stats))]
