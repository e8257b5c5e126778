"""bench/perturb_sample.py --new-since: a sample of what an engine change added, from two saved engine passes.

The saved passes are written by the test itself, as perturb_coverage.py --outputs writes them.
"""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str):
    """bench/ is not a package: the scripts are loaded from their paths (perturb_sample imports its peer)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


sample, coverage = _load("perturb_sample"), _load("perturb_coverage")


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
