"""The Probe tab's endpoint through gradio_client against a real server on 127.0.0.1."""
import json

import pytest
from gradio_client import Client, handle_file

from tests.appserver import running_app
from tests.tiny import solid_image

CAPTION = "the brown dog and the white cat"


@pytest.fixture(scope="module")
def client(tiny_checkpoints, tmp_path_factory):
    downloads = tmp_path_factory.mktemp("downloads")
    choices = [tiny_checkpoints.dir_spec, tiny_checkpoints.file_spec]
    with running_app(tiny_checkpoints.directory, choices, downloads) as url:
        yield Client(url, verbose=False)


@pytest.fixture(scope="module")
def image_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("img") / "dog.png"
    solid_image((120, 80, 40), size=64).save(path)
    return str(path)


def _probe(client, image_path, caption=CAPTION, models=None, families=("binding_swap", "hard_positive"),
           extra="-a purple elephant"):
    return client.predict(handle_file(image_path), caption, models, list(families), 0, extra,
                          api_name="/probe")


def _rows(table):
    return [dict(zip(table["headers"], row)) for row in table["data"]]


def test_probe_scores_every_variant_for_every_model(client, tiny_checkpoints, image_path):
    models = [tiny_checkpoints.dir_spec, tiny_checkpoints.file_spec]
    summary, table, _plot, csv_path, json_path = _probe(client, image_path, models=models)
    for spec, label in zip(models, ["tiny-dir", "tiny.safetensors"]):
        assert f"{label} verdict" in table["headers"]
        assert f"**{label}** = `{spec}`" in summary
    rows = _rows(table)
    assert rows[0]["kind"] == "original"
    swapped = [r for r in rows if r["family"] == "binding_swap"]
    assert any("<mark>" in r["text"] for r in swapped)
    user_negative = [r for r in rows if r["family"] == "user"]
    assert user_negative and user_negative[0]["kind"] == "negative"
    saved = json.loads(open(json_path).read())
    assert [r["kind"] for r in saved["rows"]] == [r["kind"] for r in rows]
    assert saved["models"][0]["activation"] == "gelu"
    assert open(csv_path).read().startswith("text,kind,family")


def test_verdicts_follow_the_scores(client, tiny_checkpoints, image_path):
    _, table, *_ = _probe(client, image_path, models=[tiny_checkpoints.dir_spec])
    rows = _rows(table)
    original = rows[0]["tiny-dir score"]
    negatives = [row for row in rows if row["kind"] == "negative"]
    assert negatives
    for row in negatives:
        assert row["tiny-dir verdict"].startswith("FAIL") == (row["tiny-dir score"] >= original)


@pytest.mark.parametrize("caption, message", [
    ("   ", "caption is empty"),
    ("a dog " * 1000, "limit is 1,000"),
])
def test_bad_captions_get_a_clear_message(client, tiny_checkpoints, image_path, caption, message):
    with pytest.raises(Exception, match=message):
        _probe(client, image_path, caption=caption, models=[tiny_checkpoints.dir_spec])


def test_unloadable_model_is_reported_and_others_still_score(client, tiny_checkpoints, image_path):
    summary, table, *_ = _probe(client, image_path,
                                models=[tiny_checkpoints.dir_spec, "ViT-B-32:laion2b_s34b_b79k"])
    assert "Could not load 'ViT-B-32:laion2b_s34b_b79k'" in summary
    assert "tiny-dir verdict" in table["headers"]


def test_only_unloadable_models_is_an_error_not_a_crash(client, image_path):
    with pytest.raises(Exception, match="No model could be loaded"):
        _probe(client, image_path, models=["ViT-B-32:laion2b_s34b_b79k"])
    with pytest.raises(Exception, match="outside the allowed folders"):
        _probe(client, image_path, models=["local-dir:/etc"])


def test_not_an_image_is_reported(client, tiny_checkpoints, tmp_path):
    bogus = tmp_path / "notes.png"
    bogus.write_text("not an image")
    with pytest.raises(Exception):
        _probe(client, str(bogus), models=[tiny_checkpoints.dir_spec])
