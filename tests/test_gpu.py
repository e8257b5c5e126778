"""`backend.core.gpu.gpu_task`: `spaces.GPU(duration=...)` on ZeroGPU, the function itself elsewhere.

The `spaces` package here is tests/fake_spaces (the real one, pinned in requirements.txt as the Space builder
installs it, is set aside for these tests); it records what it is asked to do in the file named by
FAKE_SPACES_LOG. How the app server uses it is in
tests/test_space_runtime.py.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from backend.core.gpu import gpu_task, job_environment, on_zero_gpu
from backend.models.encoder import Encoder, ModelHandle, embed_on_device
from backend.models.loading import load_model

FAKE_SPACES = Path(__file__).parent / "fake_spaces"


@pytest.fixture
def fake_spaces(tmp_path, monkeypatch):
    """The fake `spaces` importable, its log file; `spaces` is forgotten again afterwards. A `spaces` already
    imported (the real one: Gradio imports it when SYSTEM=spaces) is set aside meanwhile."""
    for name in [name for name in sys.modules if name == "spaces" or name.startswith("spaces.")]:
        monkeypatch.delitem(sys.modules, name)
    log = tmp_path / "spaces.jsonl"
    monkeypatch.setenv("FAKE_SPACES_LOG", str(log))
    monkeypatch.syspath_prepend(str(FAKE_SPACES))
    yield log
    sys.modules.pop("spaces", None)


def recorded(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def double(x: int) -> int:
    return 2 * x


@pytest.mark.parametrize("value, zero", [("true", True), ("True", True), ("1", True), ("t", True),
                                         ("false", False), ("0", False), ("", False), (None, False)])
def test_zero_gpu_is_detected_as_the_spaces_package_does(value, zero):
    assert on_zero_gpu({} if value is None else {"SPACES_ZERO_GPU": value}) is zero


def test_off_zero_gpu_the_function_itself_and_spaces_is_never_imported(fake_spaces, monkeypatch):
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    assert gpu_task(duration=5)(double) is double
    assert "spaces" not in sys.modules and recorded(fake_spaces) == []
    assert not hasattr(embed_on_device, "__wrapped__")  # the app's GPU function, as this process imported it


def test_on_zero_gpu_spaces_gpu_with_the_duration_and_gradio_auto_wrap_off(fake_spaces, monkeypatch):
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    wrapped = gpu_task(duration=7)(double)
    assert wrapped is not double and wrapped.__wrapped__ is double
    assert wrapped(21) == 42
    import spaces
    assert spaces.gradio_auto_wrap(double) is double  # Gradio would otherwise put every handler on the GPU
    assert [(e["event"], e.get("function"), e.get("duration")) for e in recorded(fake_spaces)] == [
        ("import", None, None), ("decorate", "tests.test_gpu.double", 7), ("call", "tests.test_gpu.double", 7)]
    with pytest.raises(ValueError, match="positive duration"):
        gpu_task(duration=0)


def test_a_local_job_gets_no_zero_gpu_variables():
    env = {"SPACES_ZERO_GPU": "true", "SPACES_ZERO_DEVICE_API_URL": "http://device", "SPACE_ID": "lab/x",
           "PATH": "/usr/bin"}
    assert job_environment(env) == {"SPACE_ID": "lab/x", "PATH": "/usr/bin"}


def test_a_zerogpu_worker_without_the_model_loads_it_itself():
    """A ZeroGPU worker forked before the web process loaded a model has no copy: it loads its own from the
    handle (here: a handle no model of this process was registered under), with the same embeddings."""
    loaded = load_model("toyworld", device="cpu")
    expected = Encoder(loaded).encode_texts(["a red square left of a blue circle"])
    stranger = ModelHandle("toyworld", loaded.activation, loaded.precision, "cpu:0")
    assert ModelHandle.of(loaded) != stranger
    images, texts = embed_on_device(stranger, [], ["a red square left of a blue circle"], 8)
    assert images.numel() == 0 and torch.allclose(texts, expected, atol=1e-6)
