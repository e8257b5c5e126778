"""The Probe tab's endpoint through gradio_client against a real server on 127.0.0.1."""
import csv
import json

import pytest
from gradio_client import handle_file
from PIL import Image

from backend.toyworld.gallery import example_gallery
from tests.support.appserver import running_app
from tests.support.clients import local_client
from tests.support.tiny import solid_image

CAPTION = "the brown dog and the white cat"
# The tiny test model reads 16 tokens: words past the 14th are cut off, so variants that change only
# those tie exactly with the caption.
LONG_CAPTION = ("a photo of a dog on the grass in the park near the house on a sunny day with the brown cat "
                "and the white mouse")


@pytest.fixture(scope="module")
def client(tiny_checkpoints, tmp_path_factory):
    downloads = tmp_path_factory.mktemp("downloads")
    choices = [tiny_checkpoints.dir_spec, tiny_checkpoints.file_spec, "toyworld"]
    with running_app(tiny_checkpoints.directory, choices, downloads) as url:
        yield local_client(url)


@pytest.fixture(scope="module")
def image_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("img") / "dog.png"
    solid_image((120, 80, 40), size=64).save(path)
    return str(path)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """A shipped example: (image path, its true caption) from the built-in world."""
    return example_gallery(tmp_path_factory.mktemp("gallery"))[1]


def _probe(client, image_path, caption=CAPTION, models=None, families=("binding_swap", "hard_positive"),
           extra="-a purple elephant"):
    return client.predict(handle_file(image_path), caption, models, list(families), 0, extra,
                          api_name="/probe")


def _rows(table):
    return [dict(zip(table["headers"], row)) for row in table["data"]]


def _cell(row, label):
    """(score, verdict) from a model's column, which shows "0.1234 · verdict · margin +0.0100" (or just the
    score)."""
    score, _, verdict = row[label].partition(" · ")
    return float(score), verdict.split(" · margin ")[0].replace("<strong>", "").replace("</strong>", "")


def _saved(json_path):
    return json.loads(open(json_path).read())


@pytest.mark.system
def test_probe_scores_every_variant_for_every_model(client, tiny_checkpoints, image_path):
    models = [tiny_checkpoints.dir_spec, tiny_checkpoints.file_spec]
    summary, table, _plot, csv_path, json_path = _probe(client, image_path, models=models)
    assert table["headers"][:2] == ["#", "text"]
    for spec, label in zip(models, ["tiny-dir", "tiny.safetensors"]):
        assert label in table["headers"]
        assert f"**{label}** = `{spec}`" in summary
    rows = _rows(table)
    assert [row["#"] for row in rows] == list(range(len(rows)))
    assert rows[0]["kind"] == "original"
    swapped = [r for r in rows if r["family"].startswith("binding")]
    assert any("<mark>" in r["text"] for r in swapped)
    user_negative = [r for r in rows if r["family"] == "user"]
    assert user_negative and user_negative[0]["kind"] == "negative"
    saved = _saved(json_path)
    assert [r["kind"] for r in saved["rows"]] == [r["kind"] for r in rows]
    assert saved["models"][0]["activation"] == "gelu"
    assert open(csv_path).read().startswith("text,kind,family")


@pytest.mark.system
def test_downloads_keep_full_precision_and_the_table_rounds(client, tiny_checkpoints, image_path):
    spec = tiny_checkpoints.dir_spec
    _, table, _, csv_path, json_path = _probe(client, image_path, models=[spec])
    saved = [row[f"{spec} score"] for row in _saved(json_path)["rows"]]
    assert any(round(score, 4) != score for score in saved), "JSON scores are rounded"
    with open(csv_path, newline="") as handle:
        assert [float(row[f"{spec} score"]) for row in csv.DictReader(handle)] == saved
    assert [_cell(row, "tiny-dir")[0] for row in _rows(table)] == [round(score, 4) for score in saved]


@pytest.mark.system
def test_verdicts_follow_the_scores(client, tiny_checkpoints, image_path):
    spec = tiny_checkpoints.dir_spec
    _summary, table, *_, json_path = _probe(client, image_path, models=[spec])
    saved = _saved(json_path)
    original = saved["rows"][0][f"{spec} score"]
    negatives = [(row, saved_row) for row, saved_row in zip(_rows(table), saved["rows"]) if row["kind"] == "negative"]
    assert negatives
    for row, saved_row in negatives:
        _, verdict = _cell(row, "tiny-dir")
        assert verdict.startswith("FAIL") == (saved_row[f"{spec} score"] >= original), saved_row
        assert verdict == saved_row[f"{spec} verdict"]
    ok = sum(1 for row, _ in negatives if _cell(row, "tiny-dir")[1] == "ok")
    assert saved["models"][0]["accuracy"] == pytest.approx(ok / len(negatives))


@pytest.mark.system
def test_a_negative_identical_to_the_original_ties_exactly_and_is_flagged(client, scene):
    """Many texts in one batch: a matrix product rounded the repeated caption's column differently."""
    image, caption = scene
    _, table, *_, json_path = _probe(client, image, caption=caption, models=["toyworld"],
                                     families=["binding_swap", "replace", "ce_clip", "hard_positive"],
                                     extra=f"-{caption}\n+{caption}")
    rows, saved = _rows(table), _saved(json_path)["rows"]
    repeats = [index for index, row in enumerate(saved) if row["family"] == "user"]
    assert len(repeats) == 2 and all(saved[index]["text"] == caption for index in repeats)
    for index in repeats:
        assert saved[index]["toyworld score"] == saved[0]["toyworld score"]  # exactly, not to 4 digits
    negative, positive = repeats
    assert _cell(rows[negative], "toyworld")[1] == "FAIL: same text as the original"
    assert _cell(rows[positive], "toyworld")[1] == "same text as the original"


@pytest.mark.system
def test_unknown_words_are_shown_and_the_numbers_flagged(client, tiny_checkpoints, scene):
    image, _ = scene
    summary, _, _, _, json_path = _probe(client, image, caption="a cheetah running across the dry savanna grass",
                                         models=["toyworld", tiny_checkpoints.dir_spec],
                                         families=["replace", "ce_clip"], extra="")
    warning, _, rest = summary.partition("| model |")
    assert '<div class="probe-warning"' in warning  # above the metrics and the table
    assert "toyworld: its numbers are not meaningful for this caption" in warning
    assert "as &lt;unk&gt; (outside its vocabulary): cheetah, running, across, dry, savanna, grass" in warning
    assert "tiny-dir" not in warning  # a BPE model reads every word
    assert "toyworld: read as &lt;unk&gt;, outside this model's vocabulary:" in rest
    models = {model["model"]: model for model in _saved(json_path)["models"]}
    assert models["toyworld"]["warnings"] and models[tiny_checkpoints.dir_spec]["warnings"] == []


@pytest.mark.system
def test_variants_that_tie_with_the_original_are_flagged(client, tiny_checkpoints, image_path):
    """Words past the tiny model's 16 tokens are cut off: variants changing only those are exact ties."""
    spec = tiny_checkpoints.dir_spec
    summary, _, _, _, json_path = _probe(client, image_path, caption=LONG_CAPTION, models=[spec],
                                         families=["binding_swap", "negclip_swap"], extra="")
    saved = _saved(json_path)
    ties = [row for row in saved["rows"][1:] if row[f"{spec} score"] == saved["rows"][0][f"{spec} score"]]
    assert len(ties) >= 2
    (reason,) = saved["models"][0]["warnings"]
    assert f"{len(ties)} of the {len(saved['rows']) - 1} variants score exactly the same" in reason
    assert "mouse" in reason.split("They change:")[1]
    assert "tiny-dir: its numbers are not meaningful for this caption" in summary


@pytest.mark.system
def test_bare_families_run_only_the_extra_captions(client, tiny_checkpoints, image_path):
    _, table, *_ = _probe(client, image_path, models=[tiny_checkpoints.dir_spec], families=[],
                          extra="-the white dog and the brown cat\n+the brown dog and the white cat .")
    assert [(row["kind"], row["family"]) for row in _rows(table)] == [
        ("original", ""), ("negative", "user"), ("positive", "user")]
    with pytest.raises(Exception, match="No perturbation family is checked and there are no extra captions"):
        _probe(client, image_path, models=[tiny_checkpoints.dir_spec], families=[], extra="")


@pytest.mark.system
def test_aro_shuffles_are_judged_against_the_normalised_caption(client, tiny_checkpoints, image_path):
    spec = tiny_checkpoints.dir_spec
    summary, table, plot, _, json_path = _probe(client, image_path, caption="The brown dog, and the white cat.",
                                                models=[spec], families=["aro_order"], extra="")
    rows, saved = _rows(table), _saved(json_path)["rows"]
    assert (saved[1]["kind"], saved[1]["text"]) == ("reference", "the brown dog and the white cat")
    reference_score = saved[1][f"{spec} score"]
    shuffles = saved[2:]
    assert len(shuffles) >= 2
    for row, saved_row in zip(rows[2:], shuffles):
        assert sorted(saved_row["text"].split()) == sorted(saved[1]["text"].split())  # only the order moved
        assert saved_row[f"{spec} margin"] == saved_row[f"{spec} score"] - reference_score
        expected = "FAIL: not below reference" if saved_row[f"{spec} margin"] >= 0 else "ok"
        assert _cell(row, "tiny-dir")[1] == expected
    assert "**reference** row" in summary
    points = {point[plot["columns"].index("#")]: point for point in plot["data"]}
    text_column = plot["columns"].index("text")
    assert {index: point[text_column] for index, point in points.items()} == {
        index: saved[index]["text"] for index in range(1, len(saved))}  # the plot's x is the table's #


@pytest.mark.parametrize("caption, message", [
    ("   ", "caption is empty"),
    ("a dog " * 1000, "limit is 1,000"),
])
@pytest.mark.system
def test_bad_captions_get_a_clear_message(client, tiny_checkpoints, image_path, caption, message):
    with pytest.raises(Exception, match=message):
        _probe(client, image_path, caption=caption, models=[tiny_checkpoints.dir_spec])


@pytest.mark.system
def test_unloadable_model_is_reported_and_others_still_score(client, tiny_checkpoints, image_path):
    summary, table, *_ = _probe(client, image_path,
                                models=[tiny_checkpoints.dir_spec, "ViT-B-32:laion2b_s34b_b79k"])
    assert "Could not load 'ViT-B-32:laion2b_s34b_b79k'" in summary
    assert "tiny-dir" in table["headers"]


@pytest.mark.system
def test_only_unloadable_models_is_an_error_not_a_crash(client, image_path):
    with pytest.raises(Exception, match="No model could be loaded"):
        _probe(client, image_path, models=["ViT-B-32:laion2b_s34b_b79k"])
    with pytest.raises(Exception, match="outside the allowed folders"):
        _probe(client, image_path, models=["local-dir:/etc"])


@pytest.mark.system
def test_not_an_image_gets_the_command_lines_message_and_the_next_probe_works(client, tiny_checkpoints,
                                                                             image_path, tmp_path):
    bogus = tmp_path / "notes.png"
    bogus.write_text("not an image")
    with pytest.raises(Exception, match=r"Could not read the image 'notes\.png': it is not an image file"):
        _probe(client, str(bogus), models=[tiny_checkpoints.dir_spec])
    _, table, *_ = _probe(client, image_path, models=[tiny_checkpoints.dir_spec])
    assert _rows(table)[0]["kind"] == "original"


@pytest.mark.system
def test_a_photo_is_scored_upright_as_its_exif_orientation_says(client, tiny_checkpoints, tmp_path):
    """What Gradio's preprocessing did before the page read uploads itself (and the command line now too)."""
    upright = Image.new("RGB", (64, 32), (200, 30, 30))
    upright.paste((30, 30, 200), (32, 0, 64, 32))
    upright.save(tmp_path / "upright.png")
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to view": what a phone writes
    upright.transpose(Image.Transpose.ROTATE_90).save(tmp_path / "phone.png", exif=exif)
    spec = tiny_checkpoints.dir_spec
    scores = [_saved(_probe(client, str(tmp_path / name), models=[spec])[-1])["rows"][0][f"{spec} score"]
              for name in ("upright.png", "phone.png")]
    assert scores[0] == scores[1]


@pytest.mark.system
def test_implausible_negatives_are_marked_and_can_be_left_out_of_the_metrics(client, tiny_checkpoints, image_path):
    def run(plausible_only):
        return client.predict(handle_file(image_path), "a man sitting on a bench", [tiny_checkpoints.dir_spec],
                              ["negclip_swap", "replace"], 0, "", plausible_only, api_name="/probe")
    summary, table, *_ = run(False)
    rows = _rows(table)
    absurd = [row for row in rows if row["kind"] == "negative (implausible)"]
    assert any("bench</mark> sitting on a <mark>man" in row["text"] for row in absurd)
    negatives = [row for row in rows if row["kind"].startswith("negative")]
    assert f"of {len(negatives)}" in summary and "implausible left out" not in summary
    only, _table, *_ = run(True)
    assert f"of {len(negatives) - len(absurd)}" in only
    assert f"metrics over plausible negatives only; {len(absurd)} implausible left out" in only
