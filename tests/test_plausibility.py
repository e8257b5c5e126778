"""Plausibility of negatives: absurd captions are flagged, ordinary ones are not, and the probe can leave them out."""
import json

import pytest

from backend.cli import main
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.perturb import Edit, Variant, nouns, perturb, plausibility
from backend.perturb.nouns import first_sense_ancestors
from backend.perturb.plausibility import (
    LABEL_BATCH,
    changed_spans,
    implausibilities,
    is_plausible,
    mark_plausibility,
    plausible_among,
)
from backend.probe import run_probe
from tests.support.tiny import solid_image

ABSURD = [
    ("a bench sitting on a man", "on_top_of_living"),
    ("A grassy field grazing in a group of sheep", "inanimate_agent"),
    ("a plate grasping a sandwich", "inanimate_agent"),
    ("a horse riding a man", "on_top_of_living"),
    ("A skateboard riding a young man with red wheels.", "on_top_of_living"),
    ("a car on top of a cat", "on_top_of_living"),
    ("an umbrella wearing a woman", "inanimate_agent"),
    ("a pizza eaten by a bench", "inanimate_agent"),
    ("the frisbee is catching a dog", "inanimate_agent"),
    ("A tv monitor looking at a cat on a desk.", "inanimate_agent"),
    ("a hot dog eating a man", "inanimate_agent"),
    ("A BENCH SITTING ON A MAN", "on_top_of_living"),
]

ORDINARY = [
    "a man sitting on a bench",
    "A group of sheep grazing in a grassy field",
    "A laptop sitting on a desk",  # posture verbs take things as subjects in COCO
    "a bus driving down the street",
    "a plate holding a sandwich",
    "a kite flying over the beach",
    "a man riding a horse",
    "a pizza being eaten by a man",  # passive: the pizza is eaten
    "a pizza that a man is eating",
    "a teddy bear wearing a hat",  # figures wear things
    "A man in white shirt and black shorts playing tennis.",  # "playing" hangs on "shorts" in the parse
    "A giraffe at a zoo eating some grass.",
    "a sign that reads stop",
    "a sandwich to eat",
    "a picture that looks incredible",
    "hands holding a phone",
    "a cat on top of a car",
    "a man with a hat on his head",
    "a photo of a dog eating a bone",
    "Max the dog eating a bone",
]


@pytest.mark.parametrize("text, rule", ABSURD)
def test_absurd_captions_are_flagged(text, rule):
    found = implausibilities(text)
    assert rule in {violation.rule for violation in found}, found
    assert not is_plausible(text)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_captions_are_not_flagged(text):
    assert implausibilities(text) == [] and is_plausible(text)


def test_a_violation_names_its_words():
    (violation,) = implausibilities("a bench sitting on a man")
    assert violation.words == ("bench", "man") and violation.predicate == "on"
    assert "bench / man" in str(violation)


def test_a_predicate_the_original_already_breaks_is_excused():
    # "swinging" takes a thing as its subject here, so a gate may swing too
    assert not is_plausible("a gate swinging open")
    assert is_plausible("a gate swinging open", original="a door swinging open")
    # but another predicate is still judged
    assert not is_plausible("a gate eating grass", original="a door swinging open")


def test_only_changed_tokens_can_make_a_caption_absurd():
    text = "a plate grasping a sandwich next to a man"
    start = text.index("man")
    assert not is_plausible(text)
    assert is_plausible(text, changed=[(start, start + 3)])  # only "man" changed: the absurd part was there
    assert not is_plausible(text, changed=[(2, 7)])  # "plate" changed


def test_candidates_labelled_in_batches_pass_as_one_by_one_and_stop_with_their_consumer():
    caption = "a man grasping a sandwich next to a dog"
    refills = [("man", "plate"), ("dog", "cat"), ("sandwich", "burger"), ("man", "bench")] * 3
    candidates = []
    for i, (word, new) in enumerate(refills):
        start = caption.index(word)
        edit = Edit(word, new, start, start + len(word))
        candidates.append(Variant(caption[:start] + new + caption[edit.end:], "negative", "user", str(i), (edit,)))
    assert len(candidates) > LABEL_BATCH
    expected = [v for v in candidates if is_plausible(v.text, caption, changed_spans(v))]
    assert [v.subtype for v in plausible_among(caption, candidates)] == [v.subtype for v in expected]
    assert 0 < len(expected) < len(candidates)  # "a plate grasping" does not pass, "next to a cat" does

    drawn: list[Variant] = []

    def counted():
        for variant in candidates:
            drawn.append(variant)
            yield variant

    first = next(plausible_among(caption, counted()))
    assert first == expected[0] and len(drawn) == LABEL_BATCH  # one batch read, not every candidate


def test_changed_spans_point_at_the_edited_text():
    for variant in perturb("A brown dog is chasing a white cat across the green grass.", seed=3):
        spans = changed_spans(variant)
        edits = sorted(variant.edits, key=lambda edit: edit.start)
        assert [variant.text[start:end] for start, end in spans] == [edit.after for edit in edits]


def test_perturb_flags_the_swapped_relation_and_keeps_the_rest():
    # binding_swap no longer makes this role reversal (its animacy rule); NegCLIP's faithful swaps still do.
    assert "a bench sitting on a man" not in {v.text for v in perturb("a man sitting on a bench", ["binding_swap"])}
    variants = perturb("a man sitting on a bench", families=["negclip_swap", "ce_clip"])
    by_text = {variant.text: variant for variant in variants}
    assert by_text["a bench sitting on a man"].plausible is False
    assert all(variant.plausible for variant in perturb("a man sitting on a bench", families=["hard_positive"]))


def test_plausibility_is_deterministic_and_positives_stay_true():
    caption = "A man riding a horse on a beach."
    first = perturb(caption, seed=0)
    assert [(v.text, v.plausible) for v in first] == [(v.text, v.plausible) for v in perturb(caption, seed=0)]
    assert any(not v.plausible for v in first)
    assert all(v.plausible for v in first if v.kind == "positive")


def test_variant_defaults_to_plausible_and_marking_leaves_positives_alone():
    negative = Variant("a plate grasping a sandwich", "negative", "user", "x", ())
    positive = Variant("a plate grasping a sandwich", "positive", "user", "x", ())
    assert negative.plausible and positive.plausible
    marked = mark_plausibility("a man grasping a sandwich", [negative, positive])
    assert [v.plausible for v in marked] == [False, True]


def test_curated_lists_decide_without_wordnet(monkeypatch):
    monkeypatch.setattr(nouns, "wordnet", lambda: None)
    caches = [nouns._wordnet_class, plausibility._wordnet_heavy, plausibility.violations, first_sense_ancestors]
    for cache in caches:
        cache.cache_clear()
    try:
        assert not is_plausible("a bench sitting on a man")
        assert not is_plausible("a plate grasping a sandwich")
        assert is_plausible("a gizmo grasping a sandwich")  # unknown noun: no rule fires
    finally:
        for cache in caches:
            cache.cache_clear()


# Through the probe, with the tiny model --------------------------------------------------------------------------

CAPTION = "a man sitting on a bench"


@pytest.fixture(scope="module")
def probe_image(tmp_path_factory):
    path = tmp_path_factory.mktemp("plausible") / "scene.png"
    solid_image((90, 140, 60), size=64).save(path)
    return path


def _probe(checkpoints, image, **options):
    registry = ModelRegistry(max_models=1, device="cpu")
    return run_probe(str(image), CAPTION, [checkpoints.dir_spec], registry, EmbeddingCache(),
                     families=["negclip_swap", "replace", "hard_positive"], extra=["-a purple elephant"], **options)


def test_probe_rows_carry_plausible_and_metrics_can_skip_the_absurd(tiny_checkpoints, probe_image):
    every = _probe(tiny_checkpoints, probe_image)
    only = _probe(tiny_checkpoints, probe_image, plausible_only=True)
    rows = every.rows()
    assert [row["text"] for row in rows] == [row["text"] for row in only.rows()]  # the table lists every variant
    assert all(isinstance(row["plausible"], bool) for row in rows)
    absurd = [row for row in rows if not row["plausible"]]
    assert "a bench sitting on a man" in {row["text"] for row in absurd}
    assert all(row["kind"] == "negative" and row["family"] != "user" for row in absurd)

    scores = every.scores[tiny_checkpoints.dir_spec]
    negatives = [(score, row) for score, row in zip(scores, rows) if row["kind"] == "negative"]
    plausible = [score for score, row in negatives if row["plausible"]]
    all_metrics, plausible_metrics = every.models[0], only.models[0]
    assert all_metrics["n_negatives"] == len(negatives) and all_metrics["plausible_only"] is False
    assert plausible_metrics["n_negatives"] == len(plausible) < len(negatives)
    assert plausible_metrics["plausible_only"] is True
    assert all_metrics["n_implausible"] == plausible_metrics["n_implausible"] == len(absurd)
    assert plausible_metrics["accuracy"] == pytest.approx(sum(scores[0] > s for s in plausible) / len(plausible))
    assert plausible_metrics["n_positives"] == all_metrics["n_positives"]
    assert every.as_dict()["rows"][0]["plausible"] is True


def test_cli_plausible_only(tiny_checkpoints, probe_image, capsys):
    args = ["probe", "--image", str(probe_image), "--caption", CAPTION, "--model", tiny_checkpoints.dir_spec,
            "--families", "negclip_swap"]
    assert main(args + ["--plausible-only", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    model = payload["models"][0]
    plausible = [row for row in payload["rows"] if row["kind"] == "negative" and row["plausible"]]
    assert model["plausible_only"] is True and model["n_negatives"] == len(plausible)
    assert model["n_implausible"] >= 1
    assert main(args + ["--plausible-only"]) == 0
    out = capsys.readouterr().out
    assert f"metrics over plausible negatives only; {model['n_implausible']} implausible left out" in out
    header = next(line for line in out.splitlines() if line.startswith("text\t"))
    assert "\tplausible\t" in header
