"""Perturbations are a function of (caption, families, seed) alone.

Python randomises string hashing per process (PYTHONHASHSEED), so anything
that iterates over a set or a dict of strings built from one, NLTK's
WordNet hyponym sets included, can reorder outputs from one run to the
next. This process and a child process with another hash seed must
therefore agree on every variant of every caption below, edits included.
This process forgets the answers earlier tests left in its caches first; it
keeps its spaCy pipeline, already used by them: the outputs must not depend
on that either (the app's process perturbs caption after caption).
"""
import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import backend.perturb
from backend.perturb import lexicon as lexicon_module
from backend.perturb import perturb
from tests.support.perturb_outputs import variants_of

ROOT = Path(__file__).resolve().parents[1]
PROBE = "hash seeds differ"  # hashed in both processes: the proof needs two different hash seeds
CHILD_HASH_SEED = "1" if os.environ.get("PYTHONHASHSEED") == "4242" else "4242"  # never this process's own

CAPTIONS = [
    "A man that is standing in the sand.",
    "A herd of sheep are blocking the road.",
    "This is a plate holding a double decker sandwich.",
    "a giraffe behind a fence eating grass from a feeder",
    "A young male sitting on a park bench typing on a laptop.",
    "The restored old time car is parked near a four engine airplane.",
    "A woman and a small child watch a train as it passes.",
    "Two brown horses pull a plow, steered by a man behind.",
    "A cat and dog napping together on the couch.",
    "A red car next to a gas station sign and parked blue and silver motorcycles.",
    "A kitchen with a table and four chairs.",
    "A black cat sitting inside a bathroom sink",
    "A small house in front of a tall tree.",
    "The cat is above the table.",
    "A stop sign that has some papers on it.",
    "Several slices of meat are on top of a pizza.",
    "A boy running while holding onto a kite string.",
    "A group of zebras walk along the sand.",
    "A white car parked on a street in the rain.",
    "Red flowers sitting in a vase with a red wall behind them.",
    "An old woman sitting on a bench next to a fence.",
    "A man wearing glasses eating a glazed donut out of doors.",
    "A dog or bear in a controlled area doing something with balls.",
    "Toilet with white splatter paint on a black seat in a restroom stall.",
    "A glass vase is beside a white candle.",
    "People using electronic devices all facing in the same direction.",
    "A young boy with a spoon looking at a birthday cupcake.",
    "a big plate with some potatoes and meat on it",
    "A person is near a row of luggage carts as one man pushes a cart.",
    "THERE IS A FIRE BURNING IN THE FIREPLACE IN A SITTING ROOM",
]

_CHILD = f"""
import json, sys
from tests.support.perturb_outputs import variants_of
print(json.dumps([hash({PROBE!r}), variants_of(json.loads(sys.stdin.read()))]))
"""


def clear_caches() -> None:
    """Forget every answer the perturbation package remembers (the caches of its functions that take
    arguments: parses, WordNet answers, `plausibility.violations`, ...), whatever earlier tests in this process
    did: one that switched WordNet off leaves its answers there. What was loaded once (spaCy's pipeline, the
    WordNet reader, the lexicon: the caches of functions without arguments) stays."""
    for info in pkgutil.iter_modules(backend.perturb.__path__, "backend.perturb."):
        for value in vars(importlib.import_module(info.name)).values():
            if (getattr(value, "__module__", "").startswith("backend.perturb") and hasattr(value, "cache_clear")
                    and not inspect.isclass(value) and inspect.signature(value).parameters):
                value.cache_clear()


@pytest.mark.system
def test_every_variant_is_the_same_under_different_hash_seeds():
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             env={**os.environ, "PYTHONHASHSEED": CHILD_HASH_SEED})
    clear_caches()
    here = variants_of(CAPTIONS)  # while the child starts
    out, err = child.communicate(json.dumps(CAPTIONS), timeout=600)
    assert child.returncode == 0, err
    child_hash, there = json.loads(out)
    assert child_hash != hash(PROBE), "the child had this process's hash seed"
    assert len(here) == len(CAPTIONS) and sum(map(len, here)) > 300
    for caption, a, b in zip(CAPTIONS, here, there):
        assert a == b, caption


def test_negatives_do_not_depend_on_wordnet_being_installed(monkeypatch):
    """WordNet no longer proposes replacement words; it only tells whether
    an unknown noun names a person or an animal. For captions whose nouns
    the lexicon knows, the negatives are the same with WordNet switched off."""
    captions = ["A cat sitting on a wooden bench.", "Two men holding umbrellas near a red bus.", "A dog on a couch."]
    families = ["replace", "ce_clip"]
    with_wordnet = [perturb(caption, families) for caption in captions]
    clear_caches()
    monkeypatch.setattr(lexicon_module, "wordnet", lambda: None)
    try:
        assert [perturb(caption, families) for caption in captions] == with_wordnet
    finally:
        clear_caches()  # no later test sees the answers given without WordNet
