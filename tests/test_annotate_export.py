"""BiVLC-schema export on real PNG files and the real `datasets` library; the
answers CSV read back with the csv module. Nothing is pushed: the Hub is offline
in tests (conftest), which is itself one of the failures checked."""

import csv
from datetime import datetime, timedelta, timezone
from pathlib import Path

import datasets
import huggingface_hub
import pytest
from PIL import Image

from backend.annotate.export import (
    ANSWER_COLUMNS,
    COLUMNS,
    ExportError,
    ExportRow,
    build_dataset,
    push_dataset,
    save_dataset,
    write_answers_csv,
)


def png(path, size, colour):
    Image.new("RGB", size, colour).save(path)
    return path


@pytest.fixture
def rows(tmp_path):
    images = tmp_path / "campaign-images"
    images.mkdir()
    return [
        ExportRow(image=png(images / "1-original.png", (8, 6), "red"), caption="A red cube left of a ball.",
                  negative_caption="A red ball left of a cube.",
                  negative_image=png(images / "1-negative.png", (5, 7), "blue"),
                  type="swap", subtype="obj", item_id=11),
        ExportRow(image=str(png(images / "2-original.png", (3, 3), "green")), caption="A dog on grass.",
                  negative_caption="A cat on grass.",
                  negative_image=str(png(images / "2-negative.png", (4, 2), "white")),
                  type="replace", subtype="obj", item_id=12),
    ]


def test_schema_and_column_order(rows):
    dataset = build_dataset(rows)
    assert dataset.column_names == list(COLUMNS)
    assert COLUMNS == ("image", "caption", "negative_caption", "negative_image", "type", "subtype", "item_id")
    assert isinstance(dataset.features["image"], datasets.Image)
    assert isinstance(dataset.features["negative_image"], datasets.Image)
    assert dataset.features["item_id"] == datasets.Value("int64")
    assert all(dataset.features[name] == datasets.Value("string")
               for name in ("caption", "negative_caption", "type", "subtype"))
    assert dataset["item_id"] == [11, 12]
    assert dataset[1]["negative_caption"] == "A cat on grass."
    assert dataset[0]["negative_image"].size == (5, 7)


def test_saved_dataset_embeds_images(rows, tmp_path):
    out = save_dataset(rows, tmp_path / "export")
    for row in rows:  # the campaign's files are gone: the saved dataset must not need them
        for path in (row.image, row.negative_image):
            Path(path).unlink()
    assert not any((tmp_path / "campaign-images").iterdir())
    loaded = datasets.load_from_disk(str(out))
    assert loaded.column_names == list(COLUMNS)
    assert [loaded[i]["image"].size for i in range(2)] == [(8, 6), (3, 3)]
    assert [loaded[i]["negative_image"].size for i in range(2)] == [(5, 7), (4, 2)]
    assert loaded[0]["image"].getpixel((0, 0)) == (255, 0, 0)
    assert loaded[1]["type"] == "replace" and loaded[1]["item_id"] == 12
    # only the base name is kept, not the campaign's directory
    raw = loaded.with_format("arrow")[:1]["image"].to_pylist()[0]
    assert raw["path"] == "1-original.png" and raw["bytes"][:4] == b"\x89PNG"


def test_empty_export_keeps_the_schema(tmp_path):
    loaded = datasets.load_from_disk(str(save_dataset([], tmp_path / "empty")))
    assert len(loaded) == 0 and loaded.column_names == list(COLUMNS)


def test_bad_rows_are_refused_naming_the_item(rows, tmp_path):
    missing = ExportRow(image=tmp_path / "nope.png", caption="c", negative_caption="n",
                        negative_image=rows[0].negative_image, type="add", subtype="att", item_id=13)
    with pytest.raises(ExportError, match="item 13: image file .*nope.png does not exist"):
        build_dataset(rows + [missing])
    with pytest.raises(ExportError, match="item 11 appears twice"):
        build_dataset(rows + [rows[0]])


class FakeHfApi:
    """The one HfApi method push_dataset calls itself; records the call."""

    def __init__(self, error=None):
        self.calls, self.error = [], error

    def create_repo(self, **kwargs):
        self.calls.append(kwargs)
        if self.error:
            raise self.error


def test_push_without_token_says_which_repo_and_what_to_do(rows):
    api = FakeHfApi()
    with pytest.raises(ExportError, match="no Hugging Face token to push to the dataset repo me/bivlc-mine: set HF_TOKEN"):
        push_dataset(rows, "me/bivlc-mine", "", api=api)
    assert api.calls == []  # refused before contacting anything
    with pytest.raises(ExportError, match="owner/name"):
        push_dataset(rows, "bivlc-mine", "hf_x", api=api)
    with pytest.raises(ExportError, match="no accepted item"):
        push_dataset([], "me/bivlc-mine", "hf_x", api=api)


def test_push_failures_name_the_repo(rows):
    api = FakeHfApi(error=RuntimeError("401 Unauthorized"))
    with pytest.raises(ExportError, match="me/bivlc-mine .*write access.*401 Unauthorized"):
        push_dataset(rows, "me/bivlc-mine", "hf_bad", api=api)
    assert api.calls == [{"repo_id": "me/bivlc-mine", "repo_type": "dataset", "private": True, "exist_ok": True,
                          "token": "hf_bad"}]
    # the repo "exists"; the upload itself then fails because the Hub is offline in tests
    assert huggingface_hub.constants.HF_HUB_OFFLINE
    with pytest.raises(ExportError, match="pushing the dataset to me/bivlc-mine failed: .*offline"):
        push_dataset(rows, "me/bivlc-mine", "hf_x", private=False, api=FakeHfApi())


def test_answers_csv_round_trip(tmp_path):
    when = datetime(2025, 3, 4, 5, 6, 7, 890000, tzinfo=timezone.utc)
    answers = [
        {"campaign": "bivlc-1", "item_id": 11, "stage": "select", "annotator": "ann", "choice": "3",
         "correct": True, "time_ms": 4210, "answered_at": when, "source": "crowd", "id": 99, "study_id": "st1",
         "session_id": "se1", "gold": 1},
        {"campaign": "bivlc-1", "item_id": 11, "stage": "select", "annotator": "bob", "choice": "none",
         "correct": False, "time_ms": 3000.0, "answered_at": when.astimezone(timezone(timedelta(hours=2))),
         "source": "crowd"},
        {"campaign": "bivlc-1", "item_id": 12, "stage": "ambiguity", "annotator": "ann", "choice": "both",
         "correct": None, "time_ms": None, "answered_at": "2025-03-04 05:06:07", "source": None},
        {"campaign": "bivlc-1", "item_id": 12, "stage": "ambiguity", "annotator": "cat", "choice": "original",
         "answered_at": when.timestamp()},
    ]
    path = tmp_path / "out" / "answers.csv"
    assert write_answers_csv(iter(answers), path) == 4
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames) == ANSWER_COLUMNS
        read = list(reader)
    assert ANSWER_COLUMNS == ("campaign", "item_id", "stage", "annotator", "choice", "correct", "time_ms",
                              "answered_at", "source", "study_id", "session_id", "gold")
    assert read[0] == {"campaign": "bivlc-1", "item_id": "11", "stage": "select", "annotator": "ann",
                       "choice": "3", "correct": "true", "time_ms": "4210",
                       "answered_at": "2025-03-04T05:06:07.890Z", "source": "crowd", "study_id": "st1",
                       "session_id": "se1", "gold": "true"}
    # +02:00 is converted to UTC, naive strings are UTC, epoch seconds are UTC
    assert [row["answered_at"] for row in read[1:]] == [
        "2025-03-04T05:06:07.890Z", "2025-03-04T05:06:07.000Z", "2025-03-04T05:06:07.890Z"]
    assert [row["correct"] for row in read] == ["true", "false", "", ""]
    assert [row["time_ms"] for row in read] == ["4210", "3000", "", ""]
    assert [row["source"] for row in read] == ["crowd", "crowd", "", ""]
    assert [row["gold"] for row in read] == ["true", "", "", ""]


def test_answers_csv_cells_never_run_as_spreadsheet_formulas(tmp_path):
    """OWASP's CSV injection: a text starting with =, +, -, @, tab or carriage return is a formula to Excel,
    LibreOffice and Sheets. Such texts get a leading apostrophe (shown as text); numbers stay numbers."""
    names = ['=HYPERLINK("http://evil","click")', "+cmd|'/C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "ann"]
    answers = [{"campaign": "c", "item_id": 1, "stage": "select", "annotator": name, "choice": "1", "time_ms": -5,
                "study_id": "=1+1", "session_id": "@x"} for name in names]
    path = tmp_path / "answers.csv"
    write_answers_csv(answers, path)
    with path.open(newline="") as handle:
        read = list(csv.DictReader(handle))
    assert [row["annotator"] for row in read] == ["'" + name for name in names[:-1]] + ["ann"]
    assert {(row["study_id"], row["session_id"], row["time_ms"]) for row in read} == {("'=1+1", "'@x", "-5")}


def test_answers_csv_empty_and_bad_input(tmp_path):
    path = tmp_path / "answers.csv"
    assert write_answers_csv([], path) == 0
    assert path.read_text().splitlines() == [",".join(ANSWER_COLUMNS)]
    with pytest.raises(ExportError, match="answer 1 has no annotator"):
        write_answers_csv([{"campaign": "c", "item_id": 1, "stage": "select", "choice": "1"}], path)
    assert path.read_text().splitlines() == [",".join(ANSWER_COLUMNS)]  # the earlier file is untouched
    assert [p.name for p in tmp_path.iterdir()] == ["answers.csv"]  # no partial file left behind
