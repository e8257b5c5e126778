"""The CoLA grammar filter, loaded offline from a tiny BERT classifier built here: by path and by hub id."""
import json
import shutil
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification, BertConfig, BertForSequenceClassification, BertTokenizer

from backend import cli
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.perturb import Variant
from backend.perturb.grammar import DEFAULT_GRAMMAR_MODEL, GrammarFilter, GrammarModelError, acceptable_index
from backend.probe import run_probe
from tests.support.tiny import solid_image

HUB_ID = "complab-tests/tiny-cola"
WORDS = ("a an the man woman dog cat bench table field sheep horse plate sandwich sitting on grazing in group "
         "of riding eating holding brown white and is . ,").split()
TEXTS = ["a man sitting on a bench", "a bench sitting on a man", "on man a bench the sitting",
         "a brown dog and a white cat eating a sandwich"]


def _save_classifier(directory: Path, id2label: dict[int, str], seed: int = 0) -> Path:
    """A 1-layer BERT sequence classifier with a vocabulary of a few dozen words, saved with save_pretrained."""
    directory.mkdir(parents=True)
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = BertTokenizer(vocab=str(vocab))
    config = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, id2label=id2label,
                        label2id={name: index for index, name in id2label.items()})
    torch.manual_seed(seed)
    BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _lay_out_hub_repo(hub_cache: Path, repo_id: str, source: Path) -> None:
    """What a download leaves in HF_HUB_CACHE, so HF_HUB_OFFLINE=1 resolves the id from disk."""
    commit = "1" * 40
    repo = hub_cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for file in source.iterdir():
        shutil.copy(file, repo / "snapshots" / commit / file.name)


@pytest.fixture(scope="module")
def cola_dir(tmp_path_factory, hub_cache) -> Path:
    directory = _save_classifier(tmp_path_factory.mktemp("cola") / "tiny-cola", {0: "unacceptable", 1: "acceptable"})
    _lay_out_hub_repo(hub_cache, HUB_ID, directory)
    return directory


@pytest.fixture(scope="module")
def grammar(cola_dir) -> GrammarFilter:
    return GrammarFilter.from_pretrained(str(cola_dir), device="cpu")


def _direct_probabilities(directory: Path, texts: list[str]) -> torch.Tensor:
    """Softmax of the saved model's logits, computed without GrammarFilter."""
    tokenizer = BertTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    with torch.inference_mode():
        return model(**tokenizer(texts, padding=True, return_tensors="pt")).logits.softmax(-1)


def test_scores_are_deterministic_probabilities_of_the_acceptable_label(grammar, cola_dir):
    scores = grammar.acceptable(TEXTS)
    assert len(scores) == len(TEXTS) and all(0.0 <= s <= 1.0 for s in scores)
    assert grammar.acceptable(TEXTS) == scores
    assert scores == pytest.approx(_direct_probabilities(cola_dir, TEXTS)[:, 1].tolist(), abs=1e-6)
    assert len(set(scores)) > 1  # the texts are told apart, not one constant
    assert grammar.acceptable([]) == []


def test_loads_by_hub_id_offline_with_the_same_scores(grammar):
    by_id = GrammarFilter.from_pretrained(HUB_ID, device="cpu")
    assert by_id.model_id == HUB_ID
    assert by_id.acceptable(TEXTS) == pytest.approx(grammar.acceptable(TEXTS), abs=1e-6)


def test_the_acceptable_label_comes_from_the_config(tmp_path, cola_dir):
    # Same weights (same seed), labels the other way round: the filter must read column 0.
    flipped = _save_classifier(tmp_path / "flipped", {0: "acceptable", 1: "unacceptable"})
    loaded = GrammarFilter.from_pretrained(str(flipped), device="cpu")
    assert loaded.acceptable_index == 0
    assert loaded.acceptable(TEXTS) == pytest.approx(_direct_probabilities(cola_dir, TEXTS)[:, 0].tolist(), abs=1e-6)


def test_label_mapping_rules():
    assert acceptable_index({0: "LABEL_0", 1: "LABEL_1"}) == 1  # textattack/roberta-base-CoLA: GLUE's 1 = acceptable
    assert acceptable_index({0: "unacceptable", 1: "acceptable"}) == 1
    assert acceptable_index({"0": "Acceptable", "1": "Unacceptable"}) == 0
    assert acceptable_index({0: "bad", 1: "fine"}) == 1
    assert acceptable_index({0: "negative", 1: "positive"}, acceptable_label="positive") == 1
    with pytest.raises(GrammarModelError, match=r"Cannot tell which label.*negative"):
        acceptable_index({0: "negative", 1: "positive"})
    with pytest.raises(GrammarModelError, match="no label 'yes'"):
        acceptable_index({0: "LABEL_0", 1: "LABEL_1"}, acceptable_label="yes")


def test_a_missing_hub_id_gives_one_clear_message():
    with pytest.raises(GrammarModelError) as caught:
        GrammarFilter.from_pretrained("complab-tests/no-such-cola", device="cpu")
    message = str(caught.value)
    assert "'complab-tests/no-such-cola'" in message
    assert "local cache" in message and "HF_HUB_OFFLINE=1 is set" in message
    assert "HF_TOKEN" in message and "local folder" in message and "network" in message
    assert isinstance(caught.value.__cause__, OSError)  # the original error is chained, not hidden


def test_a_missing_folder_says_so(tmp_path):
    with pytest.raises(GrammarModelError, match=r"tried the local folder .*nowhere \(it does not exist\)"):
        GrammarFilter.from_pretrained(str(tmp_path / "nowhere"), device="cpu")


def test_threshold_must_be_a_probability(cola_dir):
    with pytest.raises(ValueError, match="between 0 and 1"):
        GrammarFilter.from_pretrained(str(cola_dir), threshold=1.5, device="cpu")


def test_filter_variants_marks_negatives_below_the_threshold(grammar):
    variants = [Variant(text, "negative", "replace", "object", ()) for text in TEXTS]
    variants.append(Variant(TEXTS[0], "positive", "hard_positive", "synonym", ()))
    variants.append(Variant(TEXTS[1], "negative", "replace", "object", (), plausible=False))
    scores = grammar.acceptable(TEXTS)
    threshold = sorted(scores)[len(scores) // 2]
    median = GrammarFilter(grammar.tokenizer, grammar.model, grammar.acceptable_index, threshold)
    judged = median.filter_variants(variants)
    assert [v.text for v in judged] == [v.text for v in variants]
    assert [v.plausible for v in judged[:4]] == [score >= threshold for score in scores]
    assert judged[4].plausible is True  # positives are not judged
    assert judged[5].plausible is False  # a flag already down stays down
    everything = GrammarFilter(grammar.tokenizer, grammar.model, grammar.acceptable_index, 0.0)
    assert all(v.plausible for v in everything.filter_variants(variants[:5]))


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    path = tmp_path_factory.mktemp("grammar-probe") / "scene.png"
    solid_image((40, 90, 160), size=64).save(path)
    return path


def test_probe_with_a_grammar_filter(tiny_checkpoints, image, cola_dir):
    strict = GrammarFilter.from_pretrained(str(cola_dir), threshold=1.0, device="cpu")  # nothing is acceptable enough
    result = run_probe(str(image), "the brown dog and the white cat", [tiny_checkpoints.dir_spec],
                       ModelRegistry(max_models=1, device="cpu"), EmbeddingCache(),
                       families=["binding_swap", "hard_positive"], extra=["-a purple elephant"],
                       plausible_only=True, grammar_filter=strict)
    rows = result.rows()
    generated = [row for row in rows if row["kind"] == "negative" and row["family"] != "user"]
    assert generated and not any(row["plausible"] for row in generated)
    assert [row["plausible"] for row in rows if row["family"] == "user"] == [True]  # taken as written
    assert all(row["plausible"] for row in rows if row["kind"] in ("original", "positive"))
    model = result.models[0]
    assert model["n_negatives"] == 1 and model["n_implausible"] == len(generated)


def test_cli_grammar_model(tiny_checkpoints, image, cola_dir, capsys):
    args = ["probe", "--image", str(image), "--caption", "the brown dog and the white cat",
            "--model", tiny_checkpoints.dir_spec, "--families", "binding_swap", "--device", "cpu", "--json"]
    assert cli.main([*args, "--grammar-model", HUB_ID, "--grammar-threshold", "1.0"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["plausible"] for row in rows if row["kind"] == "negative"] == [False] * (len(rows) - 1)
    assert cli.main([*args, "--grammar-model", "complab-tests/no-such-cola"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Could not load the grammar (CoLA) model 'complab-tests/no-such-cola'")


def test_default_model_is_bivlcs_cola_classifier():
    assert DEFAULT_GRAMMAR_MODEL == "textattack/roberta-base-CoLA"
    parser = cli.build_parser()
    args = parser.parse_args(["probe", "--image", "x.png", "--caption", "a dog", "--grammar-model"])
    assert args.grammar_model == DEFAULT_GRAMMAR_MODEL and args.grammar_threshold == 0.5
    assert parser.parse_args(["probe", "--image", "x.png", "--caption", "a dog"]).grammar_model is None
