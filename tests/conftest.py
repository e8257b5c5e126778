"""Shared fixtures: a tiny open_clip model built locally and saved three ways.

The environment is set before anything imports huggingface_hub, which reads
HF_HUB_OFFLINE and HF_HUB_CACHE once at import time.
"""
import os
import tempfile
from pathlib import Path

_HUB_CACHE = Path(tempfile.mkdtemp(prefix="hf-hub-cache-"))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_CACHE"] = str(_HUB_CACHE)
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parents[1] / ".cache" / "nltk_data"))

import pytest  # noqa: E402

from tests import tiny  # noqa: E402


@pytest.fixture(scope="session")
def hub_cache() -> Path:
    return _HUB_CACHE


@pytest.fixture(scope="session")
def tiny_checkpoints(tmp_path_factory, hub_cache) -> tiny.TinyCheckpoints:
    """One tiny model saved as a file, as a local dir, and as a cached hub repo."""
    return tiny.save_tiny_model(tmp_path_factory.mktemp("tiny-model"), hub_cache)
