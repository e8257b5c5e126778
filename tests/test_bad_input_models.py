"""Bad models through the real app (gradio_client against a server on 127.0.0.1) and the command line: unknown
specs, pickled checkpoints that carry code, and a pretrained/finetuned pair of different architectures.

An unknown spec is named with what was tried while the models that load keep
scoring; a pickle is refused by ``torch.load(weights_only=True)`` and its code
never runs (a sentinel file stays absent); two architectures are refused before
any sweep or export starts, and nothing is exported.
"""
from __future__ import annotations

import re

import pytest
from gradio_client import handle_file
from safetensors.torch import load_file

from backend.benchmarks.results import results
from backend.cli import main
from backend.core.store import Store
from backend.models.choices import PATCHED_FOLDER
from backend.models.loading import load_model
from backend.patching.interpolation import PatchingError
from backend.patching.sweep import patched_model
from tests.support.appserver import running_app, workspace_settings
from tests.support.bad_files import good_image, pickled_checkpoint
from tests.support.clients import local_client
from tests.support.forms import form as train_form
from tests.support.tiny import ARCH, save_wider_model

UNKNOWN_SPECS = {  # spec -> (message, refused before any model loads)
    "nosuch-arch:openai": ("Could not load 'nosuch-arch:openai': open_clip has no architecture 'nosuch-arch'", True),
    "hf-hub:nobody/nothing": (r"Could not load 'hf-hub:nobody/nothing': tried Hugging Face hub repo nobody/nothing "
                              r"\(config \+ weights\). HF_HUB_OFFLINE=1 is set, so nothing was downloaded", False),
    "!!!": ("'!!!' has no pretrained tag or checkpoint. Accepted forms:", True),
    "ViT-B-32:": ("'ViT-B-32:' needs an architecture before its ':' and a pretrained tag or checkpoint", True),
    "x" * 5000: ("is 5,000 characters long; the limit is 4,096", True),
}
PICKLE_REFUSED = (r"torch.load\(weights_only=True\) refused to unpickle it: doing so could run code stored in the "
                  r"file, which the lab never does. Use a .safetensors file")
DIFFERENT = ("are different architectures, so their weights cannot be interpolated: embed_dim 32 vs 48, "
             "vision_cfg.width 32 vs 48, text_cfg.width 32 vs 48")


@pytest.fixture(scope="module")
def app(tiny_checkpoints, tmp_path_factory):
    workspace = tmp_path_factory.mktemp("bad-models")
    good_image(workspace / "photo.png")
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec], workspace) as url:
        yield local_client(url), workspace_settings(workspace)


@pytest.fixture(scope="module")
def wide(app):
    return save_wider_model(app[1].workspace / "wide")


@pytest.fixture(scope="module")
def evil(app, tiny_checkpoints):
    """A pickled checkpoint of the tiny model's real weights whose payload would create `sentinel`."""
    folder = app[1].workspace
    state = load_file(tiny_checkpoints.directory / "tiny.safetensors")
    return f"{ARCH}:{pickled_checkpoint(folder / 'evil.pt', folder / 'code-ran', state)}", folder / "code-ran"


def probe(client, settings, models):
    return client.predict(handle_file(str(settings.workspace / "photo.png")), "a brown dog on the grass", models, [],
                          0, "-a green dog", api_name="/probe")


@pytest.mark.system
def test_the_probe_scores_with_the_models_that_load_and_names_each_that_does_not(app, tiny_checkpoints):
    client, settings = app
    summary, table, *_ = probe(client, settings, [tiny_checkpoints.dir_spec, *UNKNOWN_SPECS, "local-dir:/nonexistent"])
    assert "tiny-dir" in table["headers"] and len(table["data"]) == 2
    for message, _ in UNKNOWN_SPECS.values():
        assert re.search(f"- not loaded: .*{message}", summary), message
    assert "- not loaded: local model path '/nonexistent' is outside the allowed folders" in summary


@pytest.mark.system
def test_the_command_line_probe_warns_about_each_unknown_spec_and_scores_the_rest(app, tiny_checkpoints, capsys):
    _, settings = app
    image = str(settings.workspace / "photo.png")
    assert main(["probe", "--image", image, "--caption", "a dog", "--model", tiny_checkpoints.dir_spec,
                 *UNKNOWN_SPECS, "--families", "hard_positive", "--extra=-a green dog"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{tiny_checkpoints.dir_spec} (gelu, fp32)")
    for message, _ in UNKNOWN_SPECS.values():
        assert re.search(f"warning: .*{message}", err), message
    assert main(["probe", "--image", image, "--caption", "a dog", "--model", "local-dir:/nonexistent"]) == 2
    assert "No model could be loaded:\nCould not load 'local-dir:/nonexistent': tried directory /nonexistent" \
        in capsys.readouterr().err


@pytest.mark.parametrize("spec", list(UNKNOWN_SPECS))
def test_evaluate_names_an_unknown_spec_and_stores_nothing(tiny_checkpoints, tmp_path, capsys, spec):
    message, up_front = UNKNOWN_SPECS[spec]
    models = [tiny_checkpoints.dir_spec, spec] if up_front else [spec, tiny_checkpoints.dir_spec]
    assert main(["evaluate", "--model", *models, "--benchmarks", "toy-sugarcrepe", "--limit", "2",
                 "--db", str(tmp_path / "lab.db")]) == 2
    assert re.search(f"error: .*{message}", capsys.readouterr().err)
    assert results(Store(tmp_path / "lab.db")) == []  # a model listed before the bad one was not evaluated either


@pytest.mark.parametrize("base_model, message", [
    ("!!!", "'!!!' has no pretrained tag or checkpoint"),
    ("ViT-B-32:", "needs an architecture before its ':'"),
    ("local-dir:/nonexistent", "base model path '/nonexistent' is outside the allowed folders"),
])
@pytest.mark.system
def test_the_train_tab_refuses_a_bad_base_model_and_creates_no_job(app, base_model, message):
    client, settings = app
    before = Store(settings.db).list_jobs()
    with pytest.raises(Exception, match=re.escape(message)):
        client.predict(*train_form(base_model=base_model), api_name="/launch")
    assert Store(settings.db).list_jobs() == before


@pytest.mark.parametrize("base_model, message", [
    ("nosuch-arch:openai", UNKNOWN_SPECS["nosuch-arch:openai"][0]),
    ("hf-hub:nobody/nothing", UNKNOWN_SPECS["hf-hub:nobody/nothing"][0]),
])
def test_training_from_an_unknown_base_model_ends_with_what_was_tried(tmp_path, capsys, base_model, message):
    assert main(["train", "--set", f"base_model={base_model}", "data=toyworld-finetune", f"output_dir={tmp_path}",
                 "name=bad-base", "steps=1"]) == 2
    assert re.search(f"^error: {message}", capsys.readouterr().err, re.MULTILINE)


@pytest.mark.system
def test_a_pickled_checkpoint_is_refused_everywhere_and_its_code_never_runs(app, evil, tiny_checkpoints, capsys):
    client, settings = app
    spec, sentinel = evil
    summary, table, *_ = probe(client, settings, [tiny_checkpoints.dir_spec, spec])
    assert re.search(f"- not loaded: Refused '{re.escape(spec)}': .*{PICKLE_REFUSED}", summary)
    assert "tiny-dir" in table["headers"]
    models_dir = settings.workspace / "cli-models"
    for command in (["export-patched", "--alpha", "0.5", "--name", "from-pickle", "--models-dir", str(models_dir)],
                    ["sweep", "--alphas", "0", "1", "--limit", "2"]):
        assert main([command[0], "--pretrained", tiny_checkpoints.dir_spec, "--finetuned", spec, *command[1:]]) == 2
        assert re.search(f"error: Refused '{re.escape(spec)}': .*{PICKLE_REFUSED}", capsys.readouterr().err)
    assert not (models_dir / PATCHED_FOLDER / "from-pickle").exists()
    assert not sentinel.exists()


def sweep_form(pretrained, finetuned):
    return [pretrained, finetuned, "0, 0.5, 1", "toy-sugarcrepe/overall", "toy-zeroshot-shape/top1", 1.0, 2]


@pytest.mark.system
def test_the_sweep_tab_refuses_two_architectures_before_a_job_exists(app, wide, tiny_checkpoints):
    client, settings = app
    before = Store(settings.db).list_jobs()
    with pytest.raises(Exception, match=f"pretrained '{tiny_checkpoints.dir_spec}' and finetuned '{wide}' {DIFFERENT}"):
        client.predict(*sweep_form(tiny_checkpoints.dir_spec, wide), api_name="/launch_sweep")
    assert Store(settings.db).list_jobs() == before


@pytest.mark.system
@pytest.mark.parametrize("finetuned, message", [("wide", DIFFERENT), ("evil", PICKLE_REFUSED)])
def test_the_sweep_tab_export_refuses_a_bad_pair_and_exports_nothing(app, wide, evil, tiny_checkpoints, finetuned,
                                                                     message):
    """A sweep recorded with such a pair (launched before this check, or written by hand) cannot export either."""
    client, settings = app
    spec = {"wide": wide, "evil": evil[0]}[finetuned]
    job_id = Store(settings.db).create_job("sweep", {"pretrained": tiny_checkpoints.dir_spec, "finetuned": spec},
                                           name="recorded sweep")
    with pytest.raises(Exception, match=message):
        client.predict(job_id, f"patched-{finetuned}", 0.5, api_name="/export_patched")
    assert not (settings.models_dir / PATCHED_FOLDER / f"patched-{finetuned}").exists()
    assert not evil[1].exists()


@pytest.mark.system
def test_the_command_line_refuses_two_architectures_before_any_work(wide, tiny_checkpoints, tmp_path, capsys):
    models_dir = tmp_path / "models"
    for command in (["sweep", "--alphas", "0", "1", "--limit", "2"],
                    ["export-patched", "--alpha", "0.5", "--name", "mixed", "--models-dir", str(models_dir)]):
        assert main([command[0], "--pretrained", tiny_checkpoints.dir_spec, "--finetuned", wide, *command[1:]]) == 2
        assert f"and finetuned '{wide}' {DIFFERENT}" in capsys.readouterr().err
    assert not (models_dir / PATCHED_FOLDER / "mixed").exists()


@pytest.mark.system
def test_loaded_models_of_two_architectures_are_refused_with_the_tensors_named(wide, tiny_checkpoints):
    """The check on the loaded weights, for specs whose configs cannot be read without loading (a hub repo)."""
    pretrained, finetuned = (load_model(spec, device="cpu") for spec in (tiny_checkpoints.dir_spec, wide))
    with pytest.raises(PatchingError) as error:
        patched_model(pretrained, finetuned, 0.5)
    message = str(error.value)
    assert f"pretrained '{tiny_checkpoints.dir_spec}' ({ARCH}) and finetuned '{wide}' ({ARCH}-w48) are different " \
           "architectures" in message
    assert re.search(r"\d+ tensor\(s\) differ in shape \(pretrained vs finetuned\), e\.g\. .*"
                     r"\[32(, \d+)*\] vs \[48(, \d+)*\]", message)
