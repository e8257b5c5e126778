"""The later methods' checkpoints in the catalog: present, located as their authors publish them, and a manual entry
(Google Drive folders, an unnamed hub file) says exactly how to get its file."""
from __future__ import annotations

import pytest

from backend.models import catalog, choices

LATER = ("spec-clip", "vismin-clip-vit-l-14", "tripletclip-finetune", "dac-llm", "dac-sam", "tsvlc-rb-llm",
         "negbench-negclip")


def test_every_later_method_is_catalogued_with_its_architecture_and_settings():
    for name in LATER:
        entry = catalog.get_entry(name)
        assert entry.architecture in ("ViT-B-32", "ViT-L-14") and entry.activation == "quickgelu", name
        assert any(word in entry.notes for word in ("Trained ", "Fine-tuned ", "fine-tuned ", "Loss:")), name


@pytest.mark.parametrize("name", [name for name in LATER if catalog.get_entry(name).kind == "manual"])
def test_a_manual_entry_says_where_to_put_its_file(name, tmp_path):
    entry = catalog.get_entry(name)
    assert "To get it" in entry.notes and f"<models_dir>/{entry.filename}" in entry.notes
    assert any(url.startswith(("https://drive.google.com/", "https://huggingface.co/")) for url in entry.found_at)
    with pytest.raises(catalog.CatalogError, match=f"put {entry.filename} in"):
        catalog.prepare(name, tmp_path)


def test_vismin_clip_is_pinned_to_its_published_checksum():
    entry = catalog.get_entry("vismin-clip-vit-l-14")
    assert (entry.kind, entry.hub_repo, entry.filename, entry.size_bytes) == (
        "hub", "mair-lab/vismin-clip-vit-large", "model.pt", 5131963158)
    assert entry.sha256 == "ec635b2ddc9db7af1bf8fb051e81c72d8c8cf3a378f3a0eb6d5fedb97dc763f3"


def test_the_model_lists_offer_them_as_not_on_disk(tmp_path):
    labels = {spec: label for label, spec in choices.labelled_choices(choices.model_choices(), tmp_path)}
    assert labels["catalog:dac-llm"].endswith("not on disk: location unknown")
    assert all(f"catalog:{name}" in labels for name in LATER)
