"""People of another kind: children for "people", and a person of the other gender with the pronouns that
point back ("A man has a red water bottle up to his mouth" -> "A woman has a red water bottle up to her
mouth"): SugarCrepe's replace_obj does both, and the single-word object replacement cannot do the second,
since it would leave "his" behind.

Only where the caption names one gendered person and every gendered pronoun agrees with it (two people,
"a man hands her a cup", leave the pronouns' reference unclear), and where nothing else in the caption
ties the person to a gender ("bearded", "a dress", "the bride"): the new person would be absurd or the
caption still half about the old one.

"People" become "children" ("People standing around a waiting room" -> "Children standing ..."): a typical
photo of people shows adults. Not where the caption names children, a family or a school (the photo may
show them), nor where adults are named beside them or adults' things are ("one man holding an umbrella",
wine, motorcycles, ties).
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.parse_reading import GENDERED_PRONOUNS, NOUN_TAGS

# Each person noun and its counterpart, both ways; plural forms are their own entries.
COUNTERPARTS = {
    "man": "woman", "woman": "man", "men": "women", "women": "men", "boy": "girl", "girl": "boy",
    "boys": "girls", "girls": "boys", "lady": "man", "ladies": "men", "guy": "woman", "guys": "women",
    "father": "mother", "mother": "father", "dad": "mom", "mom": "dad", "son": "daughter", "daughter": "son",
    "brother": "sister", "sister": "brother", "husband": "wife", "wife": "husband",
}
FEMALE = frozenset({"woman", "women", "girl", "girls", "lady", "ladies", "mother", "mom", "daughter", "sister", "wife"})
# Other words that say a gender or fit one gender's typical photo: the swap would keep half of the old person
# or make an absurd one ("a bearded woman", "a man in a dress").
GENDER_BOUND = frozenset({
    "gentleman", "gentlemen", "bride", "groom", "male", "female", "mr", "mrs", "ms", "sir", "madam", "king",
    "queen", "prince", "princess", "uncle", "aunt", "nephew", "niece", "grandmother", "grandfather", "grandma",
    "grandpa", "boyfriend", "girlfriend", "actress", "waitress", "businessman", "businesswoman", "policeman",
    "policewoman", "bearded", "beard", "beards", "mustache", "moustache", "pregnant", "bald", "shirtless",
    "dress", "dresses", "skirt", "gown", "bikini", "bra", "heels", "purse", "lipstick", "makeup", "ponytail",
    "tuxedo", "necktie", "pigtails", "braids",
})
# What only women wear, and the words that name a man or a woman (a person, a pronoun, a gender): a caption
# naming only men takes none of these garments as a refill (`refill_fit`).
WOMENS_WEAR = frozenset({"dress", "dresses", "skirt", "skirts", "gown", "gowns", "bikini", "bikinis", "bra",
                         "heels", "purse", "lipstick", "makeup"})
FEMALE_WORDS = FEMALE | {"she", "her", "hers", "herself", "female", "females", "bride", "queen", "princess", "aunt",
                         "niece", "grandmother", "grandma", "girlfriend", "actress", "waitress", "businesswoman",
                         "policewoman"}
MALE_WORDS = frozenset(COUNTERPARTS) - FEMALE | {"he", "him", "his", "himself", "male", "males", "gentleman",
                                                "gentlemen", "groom", "king", "prince", "uncle", "nephew",
                                                "grandfather", "grandpa", "boyfriend", "businessman", "policeman"}
_TO_FEMALE = {"he": "she", "him": "her", "his": "her", "himself": "herself"}
_TO_MALE = {"she": "he", "hers": "his", "herself": "himself"}


def _pronoun_gender(token: Token) -> str:
    return "female" if token.lower_ in ("she", "her", "hers", "herself") else "male"


def new_pronoun(token: Token, to_female: bool) -> str:
    """"her" reads "his" where it owns something ("her mouth"), else "him" ("next to her")."""
    word = token.lower_
    if to_female:
        return _TO_FEMALE[word]
    if word == "her":
        return "his" if token.dep_ == "poss" or token.tag_ == "PRP$" else "him"
    return _TO_MALE[word]


def gender_swap(doc: Doc) -> list[tuple[Token, str]] | None:
    """The (token, new word) edits turning the caption's one gendered person into the other gender with its
    pronouns, or None where that is unclear or would be absurd."""
    people = [token for token in doc if token.lower_ in COUNTERPARTS]
    pronouns = [token for token in doc if token.lower_ in GENDERED_PRONOUNS]
    if len(people) != 1 or not pronouns or any(token.lower_ in GENDER_BOUND for token in doc):
        return None
    person = people[0]
    gender = "female" if person.lower_ in FEMALE else "male"
    plural = person.tag_ == "NNS"
    if person.tag_ not in NOUN_TAGS or person.dep_ == "compound" or plural:
        return None  # "a man's" is fine; "women ... her" has no single referent
    if any(_pronoun_gender(pronoun) != gender for pronoun in pronouns):
        return None
    to_female = gender == "male"
    return [(person, COUNTERPARTS[person.lower_]), *((p, new_pronoun(p, to_female)) for p in pronouns)]


YOUNG_OR_ADULT_WORDS = frozenset({
    "child", "children", "kid", "kids", "boy", "boys", "girl", "girls", "baby", "babies", "toddler", "family",
    "families", "school", "student", "students", "teen", "teens", "teenager", "teenagers", "youth", "young",
    "parent", "parents", "adult", "adults", "wine", "beer", "drive", "driving", "drives", "business", "office",
    "meeting", "conference", "bar", "old", "elderly", "older", "man", "men", "woman", "women", "lady", "ladies",
    "guy", "guys", "motorcycle", "motorcycles", "motorbike", "motorbikes", "tie", "suit", "suits",
})


def people_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"people" (a plain noun, not in a compound) with "children"."""
    if any(token.lower_ in YOUNG_OR_ADULT_WORDS for token in doc):
        return []
    return [(doc[token.i : token.i + 1], ["children"]) for token in doc
            if token.lower_ == "people" and token.tag_ == "NNS" and token.dep_ != "compound"]
