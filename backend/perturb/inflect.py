"""Word-form helpers: plurals, verb forms, casing and indefinite articles.

A replacement word comes from the lexicon as a lemma ("cat", "hold"); it must
take the form of the word it replaces ("dogs" -> "cats", "eating" ->
"holding") or the perturbed caption reads as broken English, which a text
encoder can spot without looking at the image.
"""
from __future__ import annotations

import re

_IRREGULAR_PLURALS = {
    "man": "men", "woman": "women", "child": "children", "person": "people",
    "foot": "feet", "tooth": "teeth", "mouse": "mice", "goose": "geese",
    "ox": "oxen", "sheep": "sheep", "deer": "deer", "fish": "fish",
    "knife": "knives", "wife": "wives", "life": "lives", "leaf": "leaves",
    "loaf": "loaves", "shelf": "shelves", "wolf": "wolves", "half": "halves",
    "calf": "calves", "scarf": "scarves", "cactus": "cacti",
    "potato": "potatoes", "tomato": "tomatoes",
}

# base -> (past, past participle); -ing and -s forms follow the rules below.
_IRREGULAR_VERBS = {
    "be": ("was", "been"), "bite": ("bit", "bitten"), "blow": ("blew", "blown"),
    "break": ("broke", "broken"), "bring": ("brought", "brought"),
    "build": ("built", "built"), "buy": ("bought", "bought"),
    "catch": ("caught", "caught"), "come": ("came", "come"),
    "cut": ("cut", "cut"), "dig": ("dug", "dug"), "do": ("did", "done"),
    "draw": ("drew", "drawn"), "drink": ("drank", "drunk"),
    "drive": ("drove", "driven"), "eat": ("ate", "eaten"),
    "fall": ("fell", "fallen"), "feed": ("fed", "fed"), "fly": ("flew", "flown"),
    "get": ("got", "gotten"), "give": ("gave", "given"), "go": ("went", "gone"),
    "grow": ("grew", "grown"), "hang": ("hung", "hung"), "have": ("had", "had"),
    "hide": ("hid", "hidden"), "hit": ("hit", "hit"), "hold": ("held", "held"),
    "keep": ("kept", "kept"), "kneel": ("knelt", "knelt"), "lay": ("laid", "laid"),
    "lead": ("led", "led"), "leave": ("left", "left"), "lie": ("lay", "lain"),
    "light": ("lit", "lit"), "make": ("made", "made"), "put": ("put", "put"),
    "read": ("read", "read"), "ride": ("rode", "ridden"), "run": ("ran", "run"),
    "see": ("saw", "seen"), "sell": ("sold", "sold"), "shake": ("shook", "shaken"),
    "shoot": ("shot", "shot"), "sing": ("sang", "sung"), "sit": ("sat", "sat"),
    "sleep": ("slept", "slept"), "speak": ("spoke", "spoken"),
    "spin": ("spun", "spun"), "stand": ("stood", "stood"),
    "sweep": ("swept", "swept"), "swim": ("swam", "swum"),
    "swing": ("swung", "swung"), "take": ("took", "taken"),
    "tear": ("tore", "torn"), "throw": ("threw", "thrown"),
    "wear": ("wore", "worn"), "win": ("won", "won"), "write": ("wrote", "written"),
}

# Stress falls on the last syllable, so the final consonant doubles.
_DOUBLING_POLYSYLLABLES = {
    "admit", "begin", "commit", "control", "equip", "forget", "occur",
    "patrol", "prefer", "refer", "regret", "upset",
}

_VOWELS = "aeiou"


def pluralize(noun: str) -> str:
    """Plural of a (possibly multi-word) noun; only the last word inflects."""
    head, _, last = noun.rpartition(" ")
    lower = last.lower()
    if lower in _IRREGULAR_PLURALS:
        plural = _IRREGULAR_PLURALS[lower]
    elif re.search(r"(s|x|z|ch|sh)$", lower):
        plural = lower + "es"
    elif re.search(r"[^aeiou]y$", lower):
        plural = lower[:-1] + "ies"
    else:
        plural = lower + "s"
    return f"{head} {plural}" if head else plural


def _doubles_final_consonant(verb: str) -> bool:
    """True for "sit" -> "sitting", false for "visit" -> "visiting"."""
    if verb in _DOUBLING_POLYSYLLABLES:
        return True
    verb = verb.replace("qu", "q")  # the "u" of "qu" is no vowel: "squat" -> "squatting"
    one_syllable = len(re.findall(r"[aeiouy]+", verb)) == 1
    return one_syllable and re.search(r"[^aeiou][aeiou][^aeiouwxy]$", verb) is not None


def _present_participle(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and verb != "be":
        return verb[:-1] + "ing"
    if _doubles_final_consonant(verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _third_person(verb: str) -> str:
    if verb in ("be", "have"):
        return {"be": "is", "have": "has"}[verb]
    if re.search(r"(s|x|z|ch|sh|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _regular_past(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    if _doubles_final_consonant(verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def verb_form(lemma: str, tag: str) -> str:
    """Inflect `lemma` for a Penn tag (VBG, VBZ, VBD, VBN; anything else: base).

    Multi-word verbs ("pick up") inflect their first word only.
    """
    verb, space, rest = lemma.partition(" ")
    if tag == "VBG":
        form = _present_participle(verb)
    elif tag == "VBZ":
        form = _third_person(verb)
    elif tag in ("VBD", "VBN"):
        past, participle = _IRREGULAR_VERBS.get(verb, (_regular_past(verb),) * 2)
        form = past if tag == "VBD" else participle
    else:
        form = verb
    return form + space + rest


def fit_case(text: str, template: str, *, at_sentence_start: bool, keeps_capital: bool = False) -> str:
    """Give `text` the casing its new position calls for.

    `template` is the text that stood there before: a sentence-initial
    capital stays. A moved span loses the capital it only had for being
    sentence-initial, unless `keeps_capital` (proper nouns, "I", acronyms).
    """
    if at_sentence_start and template[:1].isupper():
        return text[:1].upper() + text[1:]
    if keeps_capital:
        return text
    return text[:1].lower() + text[1:]


_AN_EXCEPTIONS = re.compile(r"^(uni|use|usu|uti|eu|ewe|one|once|ubiq)", re.IGNORECASE)
_SILENT_H = re.compile(r"^(hour|honest|honou?r|heir)", re.IGNORECASE)


def indefinite_article(next_word: str) -> str:
    """"a" or "an" for the word that follows, by its first sound."""
    if _SILENT_H.match(next_word):
        return "an"
    if next_word[:1].lower() in _VOWELS and not _AN_EXCEPTIONS.match(next_word):
        return "an"
    return "a"
