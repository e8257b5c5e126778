"""`python -m backend probe` prints the same table as the Probe tab, in a real subprocess."""
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.tiny import solid_image

ROOT = Path(__file__).resolve().parents[1]


def _run(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_help_lists_probe():
    result = _run("--help")
    assert result.returncode == 0
    assert "probe" in result.stdout


def test_probe_json_has_rows_models_and_identity(tiny_checkpoints, tmp_path):
    image = tmp_path / "img.png"
    solid_image((200, 200, 200)).save(image)
    spec = tiny_checkpoints.dir_spec  # a local dir carries its config, so a fresh process can load it
    result = _run("probe", "--image", str(image), "--caption", "the brown dog and the white cat",
                  "--model", spec, "--families", "binding_swap", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["rows"][0]["kind"] == "original"
    assert "the white dog and the brown cat" in [r["text"] for r in payload["rows"]]
    assert payload["models"][0] == {**payload["models"][0], "model": spec, "activation": "gelu",
                                    "precision": "fp32"}


def test_probe_table_output(tiny_checkpoints, tmp_path):
    image = tmp_path / "img.png"
    solid_image((20, 20, 200)).save(image)
    result = _run("probe", "--image", str(image), "--caption", "a brown dog holding a white frisbee",
                  "--model", tiny_checkpoints.dir_spec, "--families", "hard_positive")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "accuracy vs negatives" in lines[0]
    header = next(line for line in lines if line.startswith("text\t"))
    assert f"{tiny_checkpoints.dir_spec} verdict" in header


def test_bad_input_exits_2_with_a_message(tiny_checkpoints, tmp_path):
    image = tmp_path / "img.png"
    image.write_text("not an image")
    result = _run("probe", "--image", str(image), "--caption", "a dog", "--model", tiny_checkpoints.dir_spec)
    assert result.returncode == 2
    assert "Could not read the image" in result.stderr
    assert "Traceback" not in result.stderr
