"""The model catalog, offline: a local HTTP server stands in for the checkpoints' hosts.

A tiny open_clip model is saved the ways the papers released theirs (an
open_clip training checkpoint with 'module.' keys and numpy learning rates, a
BiVLC-style 'model_state_dict' dict), served from 127.0.0.1, and loaded through
``catalog:NAME``: downloaded once, SHA-256 checked, converted, re-used.
"""
import hashlib
import http.server
import io
import json
import re
import threading
import zipfile
from types import SimpleNamespace

import numpy as np
import open_clip
import pytest
import torch
from safetensors.torch import load_file

from backend.models import catalog, choices
from backend.models.checkpoint import remove_checkpoint
from backend.models.encoder import Encoder
from backend.models.loading import load_model, tag_needs_quick_gelu
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.models.spec import ModelLoadError, parse_spec
from backend.patching import sweep as patching
from backend.probe import run_probe
from tests.support.clients import local_client
from tests.support.tiny import ARCH, solid_image

CAPTIONS = ["a red square", "a blue square", "a photo of a dog"]


# ---- fixtures: a file server that counts requests, catalog entries of the test's own -----------------------

@pytest.fixture
def server():
    """Serves `files[path] = (bytes, content type)` from 127.0.0.1 and records every requested path."""
    files, hits = {}, []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            body, content_type = files.get(self.path, (None, None))
            self.send_response(404 if body is None else 200)
            self.send_header("Content-Type", content_type or "text/plain")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)  # shuts down in 0.05 s
    thread.start()
    yield SimpleNamespace(files=files, hits=hits, url=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def online(monkeypatch):
    """URL downloads allowed (the hub client read HF_HUB_OFFLINE=1 at import and stays offline)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")


@pytest.fixture
def models_dir(tmp_path):
    return tmp_path / "models"


@pytest.fixture
def add_entry(monkeypatch, tiny_checkpoints):
    """Register a catalog entry for the tiny architecture for this test only."""
    def add(name, **fields):
        raw = {"name": name, "label": f"Test {name}", "paper": "test", "kind": "url", "architecture": ARCH,
               "activation": "gelu", "origin": "openai", "format": "test", "licence": "test", "size": "tiny",
               "found_at": ["https://example.org/readme"], "filename": f"{name}.pt", "sha256": None, **fields}
        entry = catalog.validate(raw, allow_plain_http=True)
        monkeypatch.setitem(catalog.ENTRIES, name, entry)
        return entry
    return add


def tiny_state(seed: int = 0) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    return {key: value.clone() for key, value in open_clip.create_model(ARCH).state_dict().items()}


def saved(payload, old_numpy_names: bool = False) -> bytes:
    """torch.save bytes; optionally with the numpy 1.x module names that 2023-24 checkpoints carry."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    if not old_numpy_names:
        return buffer.getvalue()
    source, rewritten = zipfile.ZipFile(buffer), io.BytesIO()
    with zipfile.ZipFile(rewritten, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename.endswith("data.pkl"):
                assert b"numpy._core.multiarray\nscalar" in data
                data = data.replace(b"numpy._core.multiarray\nscalar", b"numpy.core.multiarray\nscalar")
            target.writestr(info, data)
    return rewritten.getvalue()


def negclip_style(state) -> dict:
    """An open_clip training checkpoint: DataParallel keys under 'state_dict', optimizer lr as numpy floats."""
    return {"epoch": 5, "name": "negclip", "state_dict": {f"module.{k}": v for k, v in state.items()},
            "optimizer": {"state": {}, "param_groups": [{"lr": np.float64(1e-6), "betas": (0.9, 0.98)}]}}


def bivlc_style(state) -> dict:
    return {"epoch": 9, "model_state_dict": state, "loss": torch.tensor(0.5, requires_grad=True),
            "optimizer_state_dict": {"state": {}, "param_groups": [{"lr": np.float64(3e-7), "step": np.int64(9)}]}}


def serve(server, name: str, body: bytes, content_type: str = "application/octet-stream") -> str:
    server.files[f"/{name}"] = (body, content_type)
    return f"{server.url}/{name}"


def cosine(spec: str, models_dir=None) -> torch.Tensor:
    loaded = load_model(spec, device="cpu", models_dir=models_dir)
    return Encoder(loaded).score([solid_image((255, 0, 0)), solid_image((0, 0, 255))], CAPTIONS).cosine


# ---- the catalog's own data --------------------------------------------------------------------------------

def test_every_entry_has_the_fields_a_user_and_the_loader_need():
    raw = json.loads(catalog.DATA_FILE.read_text())["entries"]
    assert len({entry["name"] for entry in raw}) == len(raw) >= 9
    for entry in catalog.ENTRIES.values():
        assert all(getattr(entry, key) for key in catalog.REQUIRED_FIELDS), entry.name
        assert all(url.startswith("https://") for url in entry.found_at), entry.name
        assert entry.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", entry.sha256), entry.name
        assert parse_spec(entry.model_spec).source == ("tag" if entry.kind == "tag" else "catalog")
        if entry.kind in ("url", "hub"):
            assert entry.filename and (entry.url or entry.hub_repo), entry.name
    names = {entry.name for entry in catalog.ENTRIES.values()}
    assert {"negclip", "ce-clip", "clove", "bivlc-trohn-text", "bivlc-trohn-img", "bivlc-clip-coco"} <= names


def test_openai_based_finetunes_declare_quickgelu():
    """The trap of ARO issue 35 / sugar-crepe issue 7: OpenAI-derived weights run in a GELU tower."""
    openai_based = [e for e in catalog.ENTRIES.values() if e.origin == "openai"]
    assert len(openai_based) >= 8
    for entry in openai_based:
        assert entry.activation == "quickgelu", entry.name
    for entry in catalog.ENTRIES.values():
        for spec in filter(None, [entry.spec, (entry.patch or {}).get("base")]):
            architecture, tag = spec.split(":", 1)
            assert tag_needs_quick_gelu(architecture, tag) == (entry.activation == "quickgelu"), entry.name
            assert "-quickgelu" in architecture, f"{entry.name}: say QuickGELU in the spec too"


@pytest.mark.parametrize("change, message", [
    ({"label": ""}, "lacks label"),
    ({"filename": "../escape.pt"}, "not allowed"),
    ({"url": "http://example.org/x.pt"}, "url must be https"),
    ({"sha256": "ABC"}, "64 lowercase hex"),
    ({"activation": "relu"}, "activation"),
    ({"checksum": "x"}, "unknown field"),
])
def test_malformed_entries_are_refused(change, message):
    raw = {"name": "x", "label": "X", "paper": "p", "kind": "url", "url": "https://example.org/x.pt",
           "filename": "x.pt", "architecture": "ViT-B-32", "activation": "quickgelu", "origin": "openai",
           "format": "f", "licence": "l", "size": "s", "found_at": ["https://example.org"], **change}
    with pytest.raises(catalog.CatalogError, match=message):
        catalog.validate(raw)


def test_unknown_catalog_names_are_refused_with_the_known_ones():
    with pytest.raises(ModelLoadError, match=r"known: .*negclip"):
        parse_spec("catalog:https://example.org/evil.pt")


# ---- downloads: cached, verified, converted ----------------------------------------------------------------

@pytest.mark.system
def test_download_is_verified_cached_and_scores_like_the_released_weights(server, online, add_entry, models_dir,
                                                                         tiny_checkpoints):
    body = saved(negclip_style(tiny_state()))
    add_entry("tiny-neg", url=serve(server, "negclip.pth", body), sha256=hashlib.sha256(body).hexdigest())
    scores = cosine("catalog:tiny-neg", models_dir)
    assert torch.equal(scores, cosine(tiny_checkpoints.file_spec))  # same weights as tests/support/tiny.py saved
    assert server.hits == ["/negclip.pth"]
    assert (models_dir / "catalog" / "downloads" / "tiny-neg.pt").read_bytes() == body
    loaded = load_model("catalog:tiny-neg", device="cpu", models_dir=models_dir)
    assert server.hits == ["/negclip.pth"]  # the second load re-uses the converted copy
    assert loaded.spec == "catalog:tiny-neg"
    assert any("converted copy" in note and "verified" in note for note in loaded.notes)


@pytest.mark.system
def test_declared_quickgelu_is_what_runs(server, online, add_entry, models_dir):
    body = saved(bivlc_style(tiny_state()))
    add_entry("tiny-bivlc", url=serve(server, "bivlc.pt", body), activation="quickgelu")
    loaded = load_model("catalog:tiny-bivlc", device="cpu", models_dir=models_dir)
    assert loaded.activation == "quickgelu"
    assert not any(note.startswith("WARNING") for note in loaded.notes)
    config = json.loads((models_dir / "catalog" / "tiny-bivlc" / "open_clip_config.json").read_text())
    assert config["activation"] == "quickgelu" and config["model_cfg"]["quick_gelu"] is True


@pytest.mark.system
def test_wrong_checksum_is_refused_and_the_download_deleted(server, online, add_entry, models_dir):
    add_entry("tiny-bad", url=serve(server, "x.pt", saved(tiny_state())), sha256="0" * 64)
    with pytest.raises(ModelLoadError, match=r"SHA-256 mismatch .*expected 0{64} \(published checksum\).*deleted"):
        load_model("catalog:tiny-bad", device="cpu", models_dir=models_dir)
    assert not (models_dir / "catalog" / "downloads" / "tiny-bad.pt").exists()
    assert not (models_dir / "catalog" / "tiny-bad").exists()


@pytest.mark.system
def test_corrupted_cached_file_is_refused_then_downloaded_again(server, online, add_entry, models_dir):
    body = saved(tiny_state())
    add_entry("tiny-c", url=serve(server, "c.pt", body), sha256=hashlib.sha256(body).hexdigest())
    downloaded = models_dir / "catalog" / "downloads" / "tiny-c.pt"
    downloaded.parent.mkdir(parents=True)
    downloaded.write_bytes(body[:-10] + b"0123456789")  # a damaged copy already in the cache
    with pytest.raises(ModelLoadError, match=r"SHA-256 mismatch.*the file was deleted"):
        load_model("catalog:tiny-c", device="cpu", models_dir=models_dir)
    assert server.hits == [] and not downloaded.exists()
    assert load_model("catalog:tiny-c", device="cpu", models_dir=models_dir).activation == "gelu"
    assert server.hits == ["/c.pt"]


def test_file_outside_the_downloads_is_refused_but_not_deleted(add_entry, models_dir):
    add_entry("tiny-mine", kind="manual", sha256="1" * 64)
    models_dir.mkdir(parents=True)
    (models_dir / "tiny-mine.pt").write_bytes(saved(tiny_state()))
    with pytest.raises(ModelLoadError, match="left in place"):
        load_model("catalog:tiny-mine", device="cpu", models_dir=models_dir)
    assert (models_dir / "tiny-mine.pt").exists()


@pytest.mark.system
def test_without_a_published_checksum_the_first_copy_is_recorded_and_enforced(server, online, add_entry,
                                                                             models_dir):
    first = saved(negclip_style(tiny_state(0)))
    add_entry("tiny-tofu", url=serve(server, "t.pt", first))
    loaded = load_model("catalog:tiny-tofu", device="cpu", models_dir=models_dir)
    assert any("no published checksum" in note for note in loaded.notes)
    book = json.loads((models_dir / "catalog" / "checksums.json").read_text())
    assert book["tiny-tofu.pt"]["sha256"] == hashlib.sha256(first).hexdigest()
    (models_dir / "catalog" / "downloads" / "tiny-tofu.pt").unlink()
    remove_checkpoint(models_dir / "catalog" / "tiny-tofu")
    serve(server, "t.pt", saved(negclip_style(tiny_state(1))))  # the host now serves other bytes
    with pytest.raises(ModelLoadError, match=r"SHA-256 mismatch.*recorded from its first copy"):
        load_model("catalog:tiny-tofu", device="cpu", models_dir=models_dir)


class _RunsCodeWhenUnpickled:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


@pytest.mark.system
def test_pickled_payload_is_refused_runs_no_code_and_pins_no_checksum(server, online, add_entry, models_dir,
                                                                       tmp_path):
    marker = tmp_path / "code-ran"
    add_entry("tiny-evil", url=serve(server, "evil.pt", saved({"state_dict": _RunsCodeWhenUnpickled(marker)})))
    with pytest.raises(ModelLoadError, match="refused: it cannot be read as weights only"):
        load_model("catalog:tiny-evil", device="cpu", models_dir=models_dir)
    assert not marker.exists()
    assert not (models_dir / "catalog" / "checksums.json").exists()


@pytest.mark.system
def test_a_web_page_instead_of_the_file_is_refused(server, online, add_entry, models_dir):
    add_entry("tiny-html", url=serve(server, "drive", b"<html>quota exceeded</html>", "text/html"))
    with pytest.raises(ModelLoadError, match=r"answered with a web page.*To get it"):
        load_model("catalog:tiny-html", device="cpu", models_dir=models_dir)
    assert not (models_dir / "catalog" / "downloads" / "tiny-html.pt").exists()


@pytest.mark.system
def test_offline_nothing_is_requested_and_the_message_says_how_to_get_it(server, add_entry, models_dir):
    add_entry("tiny-off", url=serve(server, "off.pt", saved(tiny_state())))
    with pytest.raises(ModelLoadError) as error:
        load_model("catalog:tiny-off", device="cpu", models_dir=models_dir)
    message = str(error.value)
    assert server.hits == []
    for fragment in ("Could not load 'catalog:tiny-off'", "not on this machine", "HF_HUB_OFFLINE=1",
                     "To get it", str(models_dir / "catalog" / "downloads"), "tiny-off.pt", f"{server.url}/off.pt"):
        assert fragment in message


def test_unreachable_host_is_a_message_not_a_crash(online, add_entry, models_dir):
    add_entry("tiny-gone", url="http://127.0.0.1:9/gone.pt")
    with pytest.raises(ModelLoadError, match=r"downloading http://127.0.0.1:9/gone.pt failed.*To get it"):
        load_model("catalog:tiny-gone", device="cpu", models_dir=models_dir)


@pytest.mark.system
def test_damaged_converted_copy_is_rebuilt_from_the_download(server, online, add_entry, models_dir):
    body = saved(tiny_state())
    add_entry("tiny-d", url=serve(server, "d.pt", body), sha256=hashlib.sha256(body).hexdigest())
    reference = cosine("catalog:tiny-d", models_dir)
    weights = models_dir / "catalog" / "tiny-d" / "open_clip_model.safetensors"
    damaged = bytearray(weights.read_bytes())
    damaged[-1] ^= 0xFF
    weights.write_bytes(bytes(damaged))
    assert torch.equal(cosine("catalog:tiny-d", models_dir), reference)
    assert server.hits == ["/d.pt"]


# ---- formats ---------------------------------------------------------------------------------------------

def test_bivlc_checkpoint_with_numpy_1_names_loads(add_entry, models_dir, tiny_checkpoints):
    add_entry("tiny-old", kind="manual")
    models_dir.mkdir(parents=True)
    (models_dir / "tiny-old.pt").write_bytes(saved(bivlc_style(tiny_state()), old_numpy_names=True))
    assert torch.equal(cosine("catalog:tiny-old", models_dir), cosine(tiny_checkpoints.file_spec))


def test_transformers_clipmodel_is_reported_as_not_loadable(add_entry, models_dir):
    add_entry("tiny-hf", kind="manual")
    models_dir.mkdir(parents=True)
    (models_dir / "tiny-hf.pt").write_bytes(saved({"text_model.embeddings.token_embedding.weight": torch.ones(2, 2)}))
    with pytest.raises(ModelLoadError, match=r"transformers CLIPModel.*not loadable here yet"):
        load_model("catalog:tiny-hf", device="cpu", models_dir=models_dir)
    assert not (models_dir / "catalog" / "tiny-hf").exists()


def test_weights_of_another_architecture_are_refused(add_entry, models_dir):
    add_entry("tiny-odd", kind="manual")
    models_dir.mkdir(parents=True)
    state = tiny_state()
    state["positional_embedding"] = torch.zeros(3, 5)
    (models_dir / "tiny-odd.pt").write_bytes(saved(state))
    with pytest.raises(ModelLoadError, match=f"do not fit open_clip's {ARCH}"):
        load_model("catalog:tiny-odd", device="cpu", models_dir=models_dir)


@pytest.mark.system
def test_patched_entry_is_backend_patching_of_base_and_finetune(server, online, add_entry, models_dir,
                                                                 tiny_checkpoints):
    """CLoVe: the release is interpolated into its base at alpha 0.6, as backend.patching.sweep defines it."""
    finetuned = tiny_state(1)
    base_spec = tiny_checkpoints.file_spec
    add_entry("tiny-clove", url=serve(server, "clove.pt", saved(negclip_style(finetuned))),
              patch={"base": base_spec, "alpha": 0.6})
    load_model("catalog:tiny-clove", device="cpu", models_dir=models_dir)
    written = load_file(models_dir / "catalog" / "tiny-clove" / "open_clip_model.safetensors")
    expected = patching.interpolate(load_file(base_spec.split(":", 1)[1]), finetuned, 0.6)
    assert written.keys() == expected.keys()
    assert all(torch.equal(written[key], expected[key]) for key in expected)


def test_hub_entry_is_read_from_the_hugging_face_cache_offline(add_entry, models_dir, hub_cache, tiny_checkpoints):
    body = saved(bivlc_style(tiny_state()))
    repo = hub_cache / "models--complab-tests--tiny-bivlc"
    (repo / "snapshots" / ("1" * 40)).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("1" * 40)
    (repo / "snapshots" / ("1" * 40) / "best.pt").write_bytes(body)
    add_entry("tiny-hub", kind="hub", hub_repo="complab-tests/tiny-bivlc", filename="best.pt",
              sha256=hashlib.sha256(body).hexdigest())
    assert choices.describe("catalog:tiny-hub", models_dir).available
    assert torch.equal(cosine("catalog:tiny-hub", models_dir), cosine(tiny_checkpoints.file_spec))


# ---- availability in the model list ------------------------------------------------------------------------

def test_label_flips_from_not_downloaded_to_available(add_entry, models_dir):
    add_entry("tiny-flip", url="https://example.org/flip.pt")
    before = choices.describe("catalog:tiny-flip", models_dir)
    assert (before.label, before.available) == ("Test tiny-flip — not downloaded: needs network", False)
    assert "put tiny-flip.pt in" in before.detail and "https://example.org/flip.pt" in before.detail
    (models_dir / "catalog" / "downloads").mkdir(parents=True)
    (models_dir / "catalog" / "downloads" / "tiny-flip.pt").write_bytes(saved(tiny_state()))
    after = choices.describe("catalog:tiny-flip", models_dir)
    assert (after.label, after.available) == ("Test tiny-flip", True)
    load_model("catalog:tiny-flip", device="cpu", models_dir=models_dir)
    assert choices.describe("catalog:tiny-flip", models_dir).detail.startswith("converted copy in")


def test_patched_entry_needs_its_base_too(add_entry, models_dir, tmp_path):
    add_entry("tiny-half", kind="url", url="https://example.org/h.pt",
              patch={"base": f"{ARCH}:{tmp_path / 'missing.safetensors'}", "alpha": 0.6})
    models_dir.mkdir(parents=True)
    (models_dir / "tiny-half.pt").write_bytes(b"raw")
    choice = choices.describe("catalog:tiny-half", models_dir)
    assert not choice.available and "base weights" in choice.detail


def test_the_papers_models_are_offered_and_labelled_offline(models_dir):
    offered = choices.model_choices()
    assert offered[0] == "toyworld"
    assert {"catalog:negclip", "catalog:clove", "catalog:bivlc-trohn-img", "ViT-L-14-quickgelu:openai"} <= set(offered)
    labels = {spec: label for label, spec in choices.labelled_choices(offered, models_dir)}
    assert labels["catalog:negclip"] == "NegCLIP (ARO) — not downloaded: needs network"
    assert labels["ViT-B-32-quickgelu:openai"] == "OpenAI CLIP ViT-B/32 — not downloaded: needs network"
    assert labels["catalog:hard-positives"].endswith("not on disk: location unknown")
    assert labels["toyworld"] == "toyworld"


def test_probing_an_unavailable_catalog_model_reports_it_and_scores_the_rest(tiny_checkpoints, models_dir):
    registry = ModelRegistry(device="cpu", models_dir=models_dir)
    result = run_probe(solid_image((10, 20, 30)), "a red square", [tiny_checkpoints.dir_spec, "catalog:negclip"],
                       registry, EmbeddingCache(), families=[], extra="- a blue square")  # no spaCy to load
    assert list(result.scores) == [tiny_checkpoints.dir_spec]
    assert len(result.errors) == 1
    assert "NegCLIP (ARO) is not on this machine" in result.errors[0] and "To get it" in result.errors[0]


@pytest.mark.system
def test_refresh_endpoint_shows_the_download(add_entry, tiny_checkpoints, tmp_path_factory):
    from tests.support.appserver import running_app
    add_entry("tiny-ui", url="https://example.org/ui.pt")
    workspace = tmp_path_factory.mktemp("workspace")
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec, "catalog:tiny-ui"], workspace) as url:
        client = local_client(url)
        assert ["Test tiny-ui — not downloaded: needs network", "catalog:tiny-ui"] in \
            client.predict(api_name="/model_choices")["choices"]
        (workspace / "models").mkdir()
        (workspace / "models" / "tiny-ui.pt").write_bytes(saved(tiny_state()))
        assert ["Test tiny-ui", "catalog:tiny-ui"] in client.predict(api_name="/model_choices")["choices"]


def test_readme_shows_the_catalog_as_the_app_reads_it():
    readme = (catalog.DATA_FILE.parents[2] / "README.md").read_text()
    assert choices.catalog_table() in readme
