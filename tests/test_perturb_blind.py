"""The text-only ("blind") scorers: the shipped n-gram model, Hugging Face causal and masked LMs loaded
offline from tiny models built here, blind accuracy, and the adversarial refinement that uses them."""
import math
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, BertTokenizer, GPT2Config, GPT2LMHeadModel

from backend.perturb import Variant, perturb
from backend.perturb.blind import HFScorer, NgramScorer, ScorerError, blind_accuracy, blind_margins, load_scorer
from backend.perturb.caption_stats import SOURCE, shipped
from backend.perturb.engine import refined
from backend.perturb.textlm import TrigramLM, counts_of

WORDS = "a an the man woman dog horse riding on beach sitting bench eating sandwich . ,".split()
CORPUS = ["a man riding a horse on the beach", "a woman riding a horse", "a dog sitting on a bench",
          "a man sitting on a bench eating a sandwich", "a woman eating a sandwich on the beach"]


def _vocab(directory: Path) -> BertTokenizer:
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    return BertTokenizer(vocab=str(vocab))


def _save_tiny_lm(directory: Path, model_class, config) -> Path:
    """A randomly initialised tiny LM and the word-level tokenizer it reads, saved as a Hugging Face folder."""
    directory.mkdir()
    tokenizer = _vocab(directory)
    torch.manual_seed(0)
    model_class(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def causal_dir(tmp_path_factory) -> Path:
    config = GPT2Config(vocab_size=len(WORDS) + 5, n_layer=1, n_head=2, n_embd=16, n_positions=32)
    return _save_tiny_lm(tmp_path_factory.mktemp("causal") / "tiny-gpt2", GPT2LMHeadModel, config)


@pytest.fixture(scope="module")
def masked_dir(tmp_path_factory) -> Path:
    config = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32)
    return _save_tiny_lm(tmp_path_factory.mktemp("masked") / "tiny-bert", BertForMaskedLM, config)


def test_the_trigram_model_is_a_distribution_over_the_vocabulary():
    lm = TrigramLM.from_counts(counts_of(CORPUS))
    for history in [("<s>", "<s>"), ("a", "man"), ("riding", "a"), ("never", "seen")]:
        total = sum(lm.prob(*history, word) for word in [*lm.vocabulary, "\x00unseen"])
        assert math.isclose(total, 1.0, rel_tol=1e-9), history


def test_the_trigram_model_prefers_the_order_it_has_read():
    scorer = NgramScorer(TrigramLM.from_counts(counts_of(CORPUS)), name="test")
    assert blind_accuracy(scorer, [("a man riding a horse", "a horse riding a man"),
                                   ("a dog sitting on a bench", "a bench sitting on a dog")]) == 1.0


def test_the_shipped_counts_name_their_source_and_come_from_even_ids():
    stats = shipped()
    assert stats.source == SOURCE and "even-id" in SOURCE and "CC BY 4.0" in SOURCE
    assert stats.captions > 2000 and stats.together("horse", "man") > 0
    assert NgramScorer().score(["a man riding a horse"])[0] > NgramScorer().score(["a horse riding a man"])[0]


def _direct_causal(directory: Path, text: str) -> float:
    tokenizer = BertTokenizer.from_pretrained(directory)
    model = GPT2LMHeadModel.from_pretrained(directory).eval()
    ids = tokenizer(text, return_tensors="pt")["input_ids"][0]
    with torch.no_grad():
        logprobs = model(ids[None]).logits[0, :-1].log_softmax(-1)
    return float(logprobs.gather(1, ids[1:, None]).mean())


def test_a_causal_lm_loads_offline_and_scores_mean_token_log_probability(causal_dir):
    scorer = load_scorer(str(causal_dir), device="cpu")
    assert isinstance(scorer, HFScorer) and scorer.causal and "causal" in scorer.name
    text = "a man riding a horse"
    assert math.isclose(scorer.score([text])[0], _direct_causal(causal_dir, text), rel_tol=1e-5)
    assert scorer.score([text]) == scorer.score([text])


def _direct_masked(directory: Path, text: str) -> float:
    tokenizer = BertTokenizer.from_pretrained(directory)
    model = BertForMaskedLM.from_pretrained(directory).eval()
    ids = tokenizer(text, return_tensors="pt")["input_ids"][0]
    total, positions = 0.0, range(1, len(ids) - 1)  # [CLS] and [SEP] are not scored
    with torch.no_grad():
        for position in positions:
            masked = ids.clone()
            masked[position] = tokenizer.mask_token_id
            total += float(model(masked[None]).logits[0, position].log_softmax(-1)[ids[position]])
    return total / len(positions)


def test_a_masked_lm_scores_pseudo_log_likelihood(masked_dir):
    scorer = HFScorer.from_pretrained(str(masked_dir), device="cpu")
    assert not scorer.causal
    text = "a woman eating a sandwich"
    assert math.isclose(scorer.score([text])[0], _direct_masked(masked_dir, text), rel_tol=1e-5)


def test_a_missing_model_gives_one_clear_message(tmp_path):
    with pytest.raises(ScorerError, match=r"tried the local folder .*nowhere \(it does not exist\)"):
        load_scorer(str(tmp_path / "nowhere"))


class Fixed:
    name = "fixed"

    def __init__(self, scores):
        self.scores = scores

    def score(self, texts):
        return [self.scores[text] for text in texts]


def test_blind_accuracy_is_strict():
    scorer = Fixed({"c": 1.0, "worse": 0.5, "tie": 1.0, "better": 2.0})
    assert blind_margins(scorer, [("c", "worse"), ("c", "tie")]) == [0.5, 0.0]
    assert blind_accuracy(scorer, [("c", "worse"), ("c", "tie"), ("c", "better")]) == pytest.approx(1 / 3)
    assert blind_accuracy(scorer, []) is None


def test_refinement_keeps_the_negatives_the_scorer_separates_least():
    scores = {"caption": 0.0, "n1": -3.0, "n2": -0.5, "n3": 1.0, "n4": -2.0}
    variants = [Variant(text, "negative", "replace", "object", ()) for text in ("n1", "n2", "n3", "n4")]
    kept = refined("caption", variants, 2, Fixed(scores))
    assert [v.text for v in kept] == ["n2", "n3"]  # order of generation kept
    assert [v.text for v in refined("caption", variants, 2, None)] == ["n1", "n2"]


def test_perturb_refines_with_the_shipped_model_by_default():
    # a phone, not an umbrella: an umbrella has no refill of its class (refill_fit), so too few to refine
    caption = "A woman holding up a phone near a stage."
    unrefined = perturb(caption, ["replace"], scorer=None)
    default = perturb(caption, ["replace"])
    assert default != unrefined and len(default) == len(unrefined)
