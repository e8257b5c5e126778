"""The model layer on real open_clip code: three loading routes, caching, activation, failures."""
import json

import pytest
import torch

from backend.models.encoder import Encoder
from backend.models.loading import load_model
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.models.spec import ModelLoadError, parse_spec
from tests.support.tiny import ARCH, solid_image

CAPTIONS = ["a red square", "a blue square", "a green field", "a photo of a dog"]


def _scores(spec):
    encoder = Encoder(load_model(spec, device="cpu"))
    images = [solid_image((255, 0, 0)), solid_image((0, 0, 255))]
    return encoder.score(images, CAPTIONS)


def test_three_routes_give_identical_scores(tiny_checkpoints):
    file_scores = _scores(tiny_checkpoints.file_spec)
    dir_scores = _scores(tiny_checkpoints.dir_spec)
    hub_scores = _scores(tiny_checkpoints.hub_spec)
    assert file_scores.cosine.shape == (2, 4)
    assert torch.equal(file_scores.cosine, dir_scores.cosine)
    assert torch.equal(file_scores.cosine, hub_scores.cosine)
    assert hub_scores.identity == {"model": tiny_checkpoints.hub_spec, "activation": "gelu",
                                   "precision": "fp32"}


def test_logits_are_cosine_times_learned_scale(tiny_checkpoints):
    scores = _scores(tiny_checkpoints.dir_spec)
    assert torch.allclose(scores.logits, scores.cosine * (1 / 0.07), rtol=1e-5)
    assert torch.all(scores.cosine.abs() <= 1.0 + 1e-6)


def test_file_checkpoint_declaring_quickgelu_loads_quickgelu(tiny_checkpoints):
    """The trap: a finetuned OpenAI checkpoint loaded into a GELU architecture."""
    sidecar = tiny_checkpoints.directory / "tiny.json"
    sidecar.write_text(json.dumps({"activation": "quickgelu"}))
    try:
        loaded = load_model(tiny_checkpoints.file_spec, device="cpu")
    finally:
        sidecar.unlink()
    assert loaded.activation == "quickgelu"
    assert any("QuickGELU" in note for note in loaded.notes)


def test_local_dir_declaring_other_activation_warns(tiny_checkpoints, tmp_path):
    source = tiny_checkpoints.directory / "tiny-dir"
    target = tmp_path / "mislabelled"
    target.mkdir()
    config = json.loads((source / "open_clip_config.json").read_text())
    config["activation"] = "quickgelu"
    (target / "open_clip_config.json").write_text(json.dumps(config))
    (target / "open_clip_model.safetensors").write_bytes((source / "open_clip_model.safetensors").read_bytes())
    loaded = load_model(f"local-dir:{target}", device="cpu")
    assert loaded.activation == "gelu"
    assert any(note.startswith("WARNING") and "quickgelu" in note for note in loaded.notes)


class _RunsCodeWhenUnpickled:
    """A pickle payload: unpickling it would call `_touch(path)`."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (_touch, (str(self.path),))


def _touch(path):
    open(path, "w").close()


def test_pickled_checkpoint_is_refused_and_runs_no_code(tiny_checkpoints, tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.pt"
    torch.save({"state_dict": _RunsCodeWhenUnpickled(marker)}, path)
    with pytest.raises(ModelLoadError, match="evil.pt"):
        load_model(f"{ARCH}:{path}", device="cpu")
    assert not marker.exists()


def test_offline_download_failure_says_what_was_tried():
    with pytest.raises(ModelLoadError) as error:
        load_model("ViT-B-32:laion2b_s34b_b79k", device="cpu")
    message = str(error.value)
    assert "ViT-B-32:laion2b_s34b_b79k" in message
    assert "HF_HUB_OFFLINE=1" in message
    assert "To fix" in message


@pytest.mark.parametrize("spec, fragment", [
    ("", "Empty model spec"),
    ("model.safetensors", "without an architecture"),
    ("ViT-B-32", "no pretrained tag"),
])
def test_malformed_specs_explain_the_accepted_forms(spec, fragment):
    with pytest.raises(ModelLoadError, match=fragment):
        parse_spec(spec)


def test_registry_confines_local_paths(tiny_checkpoints, tmp_path):
    registry = ModelRegistry(allowed_roots=[tmp_path])
    with pytest.raises(ModelLoadError, match="outside the allowed folders"):
        registry.get(tiny_checkpoints.dir_spec)


def test_registry_is_a_bounded_lru(tiny_checkpoints):
    registry = ModelRegistry(max_models=1, device="cpu")
    first = registry.get(tiny_checkpoints.dir_spec)
    assert registry.get(tiny_checkpoints.dir_spec) is first
    registry.get(tiny_checkpoints.file_spec)
    assert registry.loaded() == [tiny_checkpoints.file_spec]


def test_reprobing_an_image_encodes_only_the_new_caption(tiny_checkpoints):
    cache = EmbeddingCache()
    encoder = Encoder(load_model(tiny_checkpoints.dir_spec, device="cpu"), cache)
    image = solid_image((10, 200, 30))
    encoder.score([image], ["a green square", "a red square"])
    assert len(cache) == 3
    calls = []  # images preprocessed for encoding: none, the picture's embedding is cached
    preprocess = encoder.loaded.preprocess
    encoder.loaded.preprocess = lambda image: calls.append(image) or preprocess(image)
    scores = encoder.score([solid_image((10, 200, 30))], ["a green square", "a green circle"])
    assert calls == []
    assert len(cache) == 4
    assert scores.cosine.shape == (1, 2)


def test_trimmed_text_encoding_equals_full_encoding(tiny_checkpoints):
    """Dropping positions after the last end-of-text token must not change any embedding."""
    from backend.models.encoder import encode_text_trimmed

    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu")
    for batch in (["a dog", "a red cat"], ["a dog", "a small brown dog holding a white frisbee"]):
        tokens = loaded.tokenizer(batch)
        with torch.inference_mode():
            full = loaded.model.encode_text(tokens)
            trimmed = encode_text_trimmed(loaded.model, tokens)
        assert torch.allclose(full, trimmed, atol=1e-5)


def test_catalog_specs_name_catalog_entries_only():
    assert parse_spec("catalog:negclip").source == "catalog"
    with pytest.raises(ModelLoadError, match="not in the model catalog; known: .*bivlc-trohn-text"):
        parse_spec("catalog:not-a-model")


def test_catalog_model_offline_says_what_was_tried_and_how_to_get_it(tmp_path):
    with pytest.raises(ModelLoadError) as error:
        load_model("catalog:bivlc-trohn-text", device="cpu", models_dir=tmp_path)
    message = str(error.value)
    for fragment in ("Could not load 'catalog:bivlc-trohn-text'", "Hugging Face cache", "HF_HUB_OFFLINE=1",
                     "imirandam/CLIP_TROHN-Text", "best_CLIP_TROHN-Text_9.pt", str(tmp_path), "To get it"):
        assert fragment in message
    assert not (tmp_path / "catalog" / "bivlc-trohn-text").exists()
