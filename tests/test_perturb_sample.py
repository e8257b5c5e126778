"""bench/perturb_sample.py --new-since: a sample of what an engine change added, from two saved engine passes.

The saved passes are written by the test itself, as perturb_coverage.py --outputs writes them.
"""
from tests.support.bench_scripts import load

sample, coverage = load("perturb_sample"), load("perturb_coverage")


def _variant(text: str, subtype: str = "object"):
    from backend.perturb import Variant

    return Variant(text, "negative", "addition", subtype, ())


def test_only_texts_the_earlier_pass_did_not_make_are_kept(tmp_path):
    earlier = {"A cat.": [_variant("A cat with a dog.")], "A bus.": [_variant("A red bus.", "attribute")]}
    saved = tmp_path / "earlier.json"
    coverage.save_outputs(earlier, saved)
    now = {"A cat.": [_variant("A cat with a dog."), _variant("A cat and a rabbit.")],
           "A bus.": [_variant("A red bus.", "attribute")],
           "A cow.": [_variant("A cow and a sheep.")]}
    kept = sample.new_outputs(now, coverage.read_outputs(saved))
    assert {caption: [v.text for v in variants] for caption, variants in kept.items()} == {
        "A cat.": ["A cat and a rabbit."], "A bus.": [], "A cow.": ["A cow and a sheep."]}
