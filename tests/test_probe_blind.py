"""The Probe's blind row and its handling of words a model cannot read, with the built-in world's model (a
word-level tokenizer that declares its vocabulary) and a tiny BPE model."""
import pytest

from backend import cli
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe import ProbeInputError, build_texts, run_probe
from backend.probe.reliability import unreadable_variants
from backend.toyworld.tokenizer import ToyTokenizer
from tests.support.tiny import solid_image_file

CAPTION = "a small purple square above a little red cross"


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return solid_image_file(tmp_path_factory.mktemp("blind-probe"), (200, 60, 40))


def test_the_built_in_model_gets_variants_it_can_read_and_a_blind_row(image):
    result = run_probe(str(image), CAPTION, ["toyworld"], ModelRegistry(max_models=1, device="cpu"),
                       EmbeddingCache(), families=None, extra=["-a small crimson square above a little red cross"])
    model = result.models[0]
    generated = [t for t in result.texts if t.family not in ("", "user") and t.kind in ("negative", "positive")]
    assert generated and not unreadable_variants(ToyTokenizer(), generated)  # words come from its vocabulary
    assert {t.subtype for t in generated if t.family == "binding_swap"} >= {"attribute", "relation_arguments"}
    assert model["n_unreadable"] == 1  # the user's "crimson": left out of its metrics, and said so
    assert any("<unk>" in warning and "crimson" in warning for warning in model["warnings"])
    negatives = sum(1 for t in result.texts if t.kind == "negative")
    assert model["n_negatives"] == negatives - 1
    assert result.blind["n_negatives"] == negatives and 0 <= result.blind["accuracy"] <= 1
    assert "ngram" in result.blind["scorer"] and len(result.blind["scores"]) == len(result.texts)


def test_the_cli_prints_the_blind_row(tiny_checkpoints, image, capsys):
    args = ["probe", "--image", str(image), "--caption", "a man riding a horse on the beach",
            "--model", tiny_checkpoints.dir_spec, "--families", "replace", "addition", "--device", "cpu"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "text only (blind): accuracy vs negatives" in out and "ngram" in out
    assert cli.main([*args, "--blind-model", "/no/such/lm"]) == 2
    assert "Could not load the text scorer '/no/such/lm'" in capsys.readouterr().err


def test_a_caption_whose_variants_the_model_cannot_read_is_refused_with_that_reason(image):
    """The built-in world's model reads only its grammar: every addition to a zebra caption names an animal it
    cannot read, so nothing is left to compare, and the message says why (not "made no variant")."""
    with pytest.raises(ProbeInputError, match="each uses a word outside the vocabulary of the models you probe"):
        run_probe(str(image), "A zebra grazes in a field adjacent to trees.", ["toyworld"],
                  ModelRegistry(max_models=1, device="cpu"), EmbeddingCache(), families=["addition"])
    with pytest.raises(ProbeInputError, match="made no variant of this caption"):
        build_texts("Hi.", ["addition"], seed=0, vocabulary=frozenset({"hi"}))
