"""Objective end to end on a tiny open_clip model: a caption without a hard negative is
never encoded (the tokenizer never sees ""), the loss equals the one computed from
separately encoded features with that negative absent, and both output forms of
open_clip models (tuple, ``output_dict=True``) give the same loss."""

import numpy as np
import open_clip
import pytest
import torch
import torch.nn.functional as F

from backend.train import losses
from backend.train.config import TrainConfig
from backend.train.data import ImageBank, TrainData, make_batch
from backend.train.objectives import Objective, model_outputs
from tests.support import tiny

B = 6
CAPTIONS = ["a red dog on a sofa", "a blue cat under a table", "a man next to a tree",
            "a small boat in the river", "a green car on the street", "a white horse in a field"]
NEGATIVES = [["a sofa on a red dog"], [], ["a tree next to a man"], [], ["a street on a green car"],
             ["a field in a white horse"]]  # items 1 and 3 have no negative
TYPED = {"relation": "a sofa on a dog", "attribute": "a purple dog on a sofa", "object": "a red cat on a sofa"}


class RecordingTokenizer:
    """The model's tokenizer, keeping every text it is asked to tokenize."""

    def __init__(self, tokenizer):
        self.tokenizer, self.seen = tokenizer, []

    def __call__(self, texts):
        self.seen.extend(texts)
        return self.tokenizer(texts)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The same tiny weights built returning a tuple and returning a dict."""
    tiny.register_arch(tmp_path_factory.mktemp("arch"))
    torch.manual_seed(0)
    as_tuple = open_clip.create_model(tiny.ARCH).eval()
    as_dict = open_clip.create_model(tiny.ARCH, output_dict=True).eval()
    as_dict.load_state_dict(as_tuple.state_dict())
    return as_tuple, as_dict, open_clip.get_tokenizer(tiny.ARCH)


def toy_data(neighbours: bool) -> TrainData:
    pixels = np.random.default_rng(0).integers(0, 256, size=(B, 32, 32, 3), dtype=np.uint8)
    typed = [{t: [TYPED[t]] for t in TYPED if i % 2 == 0} for i in range(B)]  # odd items: no typed negative
    return TrainData(images=ImageBank(None, pixels, mean_std=((0.5,) * 3, (0.25,) * 3)),
                     captions=list(CAPTIONS), negatives=[list(n) for n in NEGATIVES],
                     positives=[[c.replace("a ", "one ", 1)] for c in CAPTIONS], typed_negatives=typed,
                     neighbours=torch.tensor([[(i + 1) % B, (i + 2) % B] for i in range(B)]) if neighbours else None)


def encode(model, tokenizer, images, texts):
    """Features the independent way: each tower on its own, nothing else in the batch."""
    return model.encode_image(images, normalize=True), model.encode_text(tokenizer(texts), normalize=True)


def run_objective(model, tokenizer, loss: str, neighbours: bool = False):
    batch = make_batch(toy_data(neighbours), step=0, batch_size=B, seed=0)
    recorder = RecordingTokenizer(tokenizer)
    total, _ = Objective(TrainConfig(loss=loss), recorder, "cpu")(model, batch)
    return batch, recorder.seen, total


def present(texts):
    return [t for t in texts if t]


def test_batch_masks_mark_the_missing_negatives():
    batch = make_batch(toy_data(neighbours=True), step=0, batch_size=B, seed=0)
    assert batch.negatives_valid.tolist() == [bool(NEGATIVES[CAPTIONS.index(c)]) for c in batch.captions]
    assert batch.neighbour_negatives_valid.tolist() == [bool(NEGATIVES[CAPTIONS.index(c)])
                                                        for c in batch.neighbour_captions]
    assert batch.negatives_valid.dtype == torch.bool and not batch.negatives_valid.all()


def test_negclip_never_encodes_a_missing_negative(models):
    model, _, tokenizer = models
    batch, seen, total = run_objective(model, tokenizer, "negclip")
    assert "" not in seen and seen == batch.captions + present(batch.negatives)
    with torch.no_grad():
        I, texts = encode(model, tokenizer, batch.images, batch.captions + present(batch.negatives))
        want, _ = losses.negclip_loss(I, texts[:B], texts[B:], model.logit_scale.exp())
    assert total.item() == pytest.approx(want.item(), rel=1e-5)


def test_negclip_with_neighbour_images_never_encodes_a_missing_negative(models):
    model, _, tokenizer = models
    batch, seen, total = run_objective(model, tokenizer, "negclip", neighbours=True)
    negatives, neighbour_negatives = present(batch.negatives), present(batch.neighbour_negatives)
    assert "" not in seen
    assert seen == batch.captions + negatives + batch.neighbour_captions + neighbour_negatives
    with torch.no_grad():
        images, texts = encode(model, tokenizer, torch.cat([batch.images, batch.neighbour_images]), seen)
        T, N, T_nn, N_nn = texts.split([B, len(negatives), B, len(neighbour_negatives)])
        want, _ = losses.negclip_loss(images[:B], T, N, model.logit_scale.exp(), I_nn=images[B:], T_nn=T_nn,
                                      N_nn=N_nn)
    assert total.item() == pytest.approx(want.item(), rel=1e-5)


def test_hp_hn_averages_hard_negatives_over_the_items_that_have_one(models):
    model, _, tokenizer = models
    batch, seen, total = run_objective(model, tokenizer, "hp_hn")
    valid = batch.negatives_valid
    assert "" not in seen and seen == batch.captions + present(batch.negatives) + batch.positives
    with torch.no_grad():
        I, texts = encode(model, tokenizer, batch.images, seen)
        T, N, P = texts.split([B, int(valid.sum()), B])
        s = model.logit_scale.exp()
        pairs = torch.stack([s * (I[valid] * T[valid]).sum(-1), s * (I[valid] * N).sum(-1)], dim=1)
        hn = F.cross_entropy(pairs, torch.zeros(len(N), dtype=torch.long))
        hp = (F.cross_entropy(s * I @ P.T, torch.arange(B)) + F.cross_entropy(s * T @ P.T, torch.arange(B))) / 2
        want = losses.clip_loss(I, T, s)[0] + hn + hp  # paper weights w_hn = w_hp = 1
    assert total.item() == pytest.approx(want.item(), rel=1e-5)


def test_ce_clip_encodes_only_the_valid_typed_negatives(models):
    model, _, tokenizer = models
    batch, seen, total = run_objective(model, tokenizer, "ce_clip")
    typed = [text for row in batch.typed_negatives for text in row]
    assert "" not in seen and seen == batch.captions + present(typed)
    with torch.no_grad():
        # invalid slots get an arbitrary text here: ce_clip_loss must ignore whatever is in them
        filled = [text or "an unrelated placeholder" for text in typed]
        I, texts = encode(model, tokenizer, batch.images, batch.captions + filled)
        N = texts[B:].view(B, len(losses.CE_CLIP_TYPES), -1)
        want, _ = losses.ce_clip_loss(I, texts[:B], N, batch.typed_valid, model.logit_scale.exp(),
                                      torch.zeros(4))
    assert total.item() == pytest.approx(want.item(), rel=1e-5)


@pytest.mark.parametrize("loss", ["clip", "negclip", "hp_hn", "ce_clip"])
def test_dict_output_model_gives_the_tuple_model_loss(models, loss):
    """open_clip's ``output_dict=True`` models return a dict; Objective reads both forms."""
    as_tuple, as_dict, tokenizer = models
    _, _, want = run_objective(as_tuple, tokenizer, loss)
    _, _, got = run_objective(as_dict, tokenizer, loss)
    assert got.item() == want.item()
    got.backward()
    assert as_dict.logit_scale.grad is not None and as_dict.text_projection.grad.abs().sum() > 0


def test_model_outputs_reads_both_forms():
    image, text, scale = torch.ones(2, 3), torch.zeros(2, 3), torch.tensor(7.0)
    from_dict = model_outputs({"image_features": image, "text_features": text, "logit_scale": scale,
                               "logit_bias": torch.tensor(0.0)})
    from_tuple = model_outputs((image, text, scale, torch.tensor(0.0)))
    for got in (from_dict, from_tuple):
        assert got[0] is image and got[1] is text and got[2] is scale
