"""bench/perturb_sample.py --new-since: a sample of what an engine change added, from two saved engine passes.

The saved passes are written by the test itself, as perturb_coverage.py --outputs writes them.
"""
import pytest

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


def test_a_saved_pass_is_read_only_for_the_engine_and_seed_that_made_it_and_never_overwritten(tmp_path, monkeypatch):
    calls = []

    def fake_perturb(caption, families, seed):
        calls.append((caption, seed))
        return [_variant(f"{caption} seed {seed}")]

    monkeypatch.setattr(coverage, "perturb", fake_perturb)
    monkeypatch.setattr(coverage, "warm_up", lambda: None)
    saved = tmp_path / "pass.json"
    first = coverage.run_engine(["A cat."], 0, saved)
    assert coverage.run_engine(["A cat."], 0, saved) == first and len(calls) == 1  # read back, not run again
    kept = saved.read_bytes()

    for seed, captions in ((1, ["A cat."]), (0, ["A cat.", "A dog."])):  # another seed; captions it does not hold
        with pytest.raises(SystemExit, match="left as it is: give --outputs a new path"):
            coverage.run_engine(captions, seed, saved)
    monkeypatch.setattr(coverage, "engine_fingerprint", lambda seed: "an engine changed since")
    with pytest.raises(SystemExit, match=str(saved)):
        coverage.run_engine(["A cat."], 0, saved)  # another engine
    assert saved.read_bytes() == kept and len(calls) == 1  # someone's baseline is untouched

    again = coverage.run_engine(["A cat."], 1, tmp_path / "new.json")  # a new path runs the pass
    assert len(calls) == 2 and [v.text for v in again["A cat."]] == ["A cat. seed 1"]
