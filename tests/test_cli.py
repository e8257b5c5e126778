"""`python -m backend probe` prints the same table as the Probe tab.

The commands run in-process through `backend.cli.main` (what `python -m backend`
calls); one subprocess smoke test checks that the module entry point itself runs.
"""
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from backend.cli import main
from backend.models import choices
from backend.toyworld import tokenizer as toy_tokenizer
from tests.support.tiny import solid_image

ROOT = Path(__file__).resolve().parents[1]
TOY_COPY = f"local-dir:{ROOT / 'models' / 'toyclip-v1'}"  # the built-in model's files under another spec


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "img.png"
    solid_image((200, 200, 200)).save(path)
    return path


@pytest.mark.system
def test_help_runs_as_a_module():
    # the one subprocess test: `python -m backend` itself starts and lists its commands
    result = subprocess.run([sys.executable, "-m", "backend", "--help"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "probe" in result.stdout and "evaluate" in result.stdout


def test_probe_json_has_rows_models_and_identity(tiny_checkpoints, image, capsys):
    spec = tiny_checkpoints.dir_spec
    assert main(["probe", "--image", str(image), "--caption", "the brown dog and the white cat",
                 "--model", spec, "--families", "binding_swap", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["rows"][0]["kind"] == "original"
    assert "the white dog and the brown cat" in [r["text"] for r in payload["rows"]]
    assert payload["models"][0] == {**payload["models"][0], "model": spec, "activation": "gelu",
                                    "precision": "fp32"}


def test_probe_table_output(tiny_checkpoints, tmp_path, capsys):
    image = tmp_path / "blue.png"
    solid_image((20, 20, 200)).save(image)
    assert main(["probe", "--image", str(image), "--caption", "a brown dog holding a white frisbee",
                 "--model", tiny_checkpoints.dir_spec, "--families", "hard_positive"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "accuracy vs negatives" in lines[0]
    header = next(line for line in lines if line.startswith("text\t"))
    assert f"{tiny_checkpoints.dir_spec} verdict" in header


def test_bad_input_exits_2_with_a_message(tiny_checkpoints, tmp_path, capsys):
    image = tmp_path / "img.png"
    image.write_text("not an image")
    assert main(["probe", "--image", str(image), "--caption", "a dog", "--model", tiny_checkpoints.dir_spec]) == 2
    err = capsys.readouterr().err
    assert "Could not read the image" in err
    assert "Traceback" not in err


def test_probe_without_model_uses_the_apps_default(image, capsys):
    # the test session's hub cache is empty, so the default is the built-in toy model
    assert choices.default_models() == ["toyworld"]
    assert main(["probe", "--image", str(image), "--caption", "a red circle to the left of a blue square",
                 "--families", "binding_swap", "--json"]) == 0
    captured = capsys.readouterr()
    assert [m["model"] for m in json.loads(captured.out)["models"]] == ["toyworld"]
    assert "no --model given; using the default model toyworld" in captured.err


def test_probe_without_model_follows_the_catalog(tiny_checkpoints, image, capsys, monkeypatch):
    # whatever the app would open with (e.g. a cached pretrained model), not a name fixed in the CLI
    monkeypatch.setattr(choices, "default_models", lambda: [tiny_checkpoints.dir_spec])
    assert main(["probe", "--image", str(image), "--caption", "the brown dog and the white cat",
                 "--families", "binding_swap", "--json"]) == 0
    captured = capsys.readouterr()
    assert [m["model"] for m in json.loads(captured.out)["models"]] == [tiny_checkpoints.dir_spec]
    assert f"using the default model {tiny_checkpoints.dir_spec}" in captured.err


def test_probe_without_model_and_no_default_exits_2(image, capsys, monkeypatch):
    monkeypatch.setattr(choices, "default_models", lambda: [])
    assert main(["probe", "--image", str(image), "--caption", "a red circle"]) == 2
    assert "pass --model SPEC" in capsys.readouterr().err


def test_two_toy_models_warn_once_per_unknown_word(image, capsys, monkeypatch):
    """Each toy model has its own tokenizer; a word outside the grammar is still warned about once."""
    monkeypatch.setattr(toy_tokenizer, "_WARNED_WORDS", set())  # as in a fresh process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # count every warning issued, not only those Python would display
        assert main(["probe", "--image", str(image), "--caption", "a red zebra to the left of a blue square",
                     "--model", "toyworld", TOY_COPY, "--families", "binding_swap", "--json"]) == 0
    unknown = [str(w.message) for w in caught if "unknown word" in str(w.message)]
    assert len(unknown) == 1 and "'zebra'" in unknown[0], unknown
    models = json.loads(capsys.readouterr().out)["models"]
    assert [m["model"] for m in models] == ["toyworld", TOY_COPY]
    for model in models:  # the per-model notes still name the word: only the warning is deduplicated
        assert "read as <unk>, outside this model's vocabulary: zebra" in model["notes"]


def test_probe_table_warns_when_the_model_cannot_read_the_caption(image, capsys):
    assert main(["probe", "--image", str(image), "--caption", "a spotted cheetah resting under an acacia tree",
                 "--model", "toyworld", "--families", "replace"]) == 0
    out = capsys.readouterr().out
    assert "WARNING: its numbers are not meaningful for this caption: It reads" in out and "cheetah" in out
