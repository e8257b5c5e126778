"""The Probe's blind row and its handling of words a model cannot read, with the built-in world's model (a
word-level tokenizer that declares its vocabulary) and a tiny BPE model."""
import pytest

from backend import cli
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe import run_probe
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
