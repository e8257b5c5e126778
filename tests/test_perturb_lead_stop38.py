"""Stop 38's lead fixes to the perturbation engine.

spaCy reads "A dog kneeling on the grass" as one noun, "kneeling" with "dog" its compound, so no verb had the dog
for its agent and the rule that only elephants and camels (of the animals) kneel never saw it: "A dog kneeling on
the grass next to a ball" was shown as a plausible relation negative of the common "A dog laying on ..." captions.
`selection._misread_participles` reads such a doer for the posture verbs of `selection.POSTURE_AGENTS`; no
SugarCrepe caption is flagged by it (three have the shape: a child kneeling, zebras' company and a hillside
grazing).
"""
import pytest

from backend.perturb import plausibility
from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


@pytest.mark.parametrize(("caption", "absurd"), [
    ("A dog laying on the grass next to a ball.", "A dog kneeling on the grass next to a ball."),
    ("A brown dog laying on a couch.", "A brown dog kneeling on a couch."),
])
def test_a_dog_kneeling_is_never_shown(caption, absurd):
    assert normalized(absurd) not in made(caption, shown=True)


@pytest.mark.parametrize("text", ["Dog kneeling near a bench.", "A cat kneeling on a bed.", "Cat grazing in a field."])
def test_an_animal_read_as_a_compound_of_its_participle_is_its_doer(text):
    assert [v.rule for v in plausibility.violations(text)] == ["wrong_subject"]


@pytest.mark.parametrize("caption", [
    "A child kneeling in front of an open refrigerator and looking in at an empty lower shelf.",
    "Two zebras and another animal grazing in the grass.",
    "A flock of sheep walking along a grassy hillside grazing.",
    "An elephant kneeling on the grass.",
    "A dog squatting on a couch.",
])
def test_real_and_fine_captions_of_that_shape_are_not_flagged(caption):
    assert plausibility.violations(caption) == ()
