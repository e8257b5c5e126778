"""The layout's promises: plug-ins reach generic code only through their hooks, light modules stay light, shared
helpers answer one way, shared state is locked, and bad training values are refused before a run starts."""
from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from backend import plugins
from backend.core import env
from backend.core.errors import first_line, last_line
from backend.models import checkpoint, choices
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
TOY_RUN = {"base_model": "toyworld", "data": "toyworld-finetune"}


def test_generic_code_names_the_built_in_world_only_where_plug_ins_are_registered():
    """What `grep -rln toyworld backend --include=*.py` finds, outside backend/toyworld/."""
    found = [path.relative_to(ROOT).as_posix() for path in (ROOT / "backend").rglob("*.py")
             if "toyworld" in path.read_text(encoding="utf-8", errors="replace")]
    assert sorted(path for path in found if not path.startswith("backend/toyworld/")) == ["backend/plugins.py"]
    assert "backend.toyworld.plugin" in plugins.BUILTIN


def test_the_built_in_world_registers_through_every_hook():
    hooks = plugins.hooks()
    assert hooks.models["toyworld"].folder.name == "toyclip-v1"
    assert set(hooks.model_builders) == {"toyworld:random"} and "toyclip-v1" in hooks.tokenizers
    assert set(hooks.data_sources) == {"toyworld-finetune", "toyworld-pretrain"}
    assert "built-in world: negclip" in hooks.recipes and hooks.benchmark_modules == ["backend.toyworld.tasks"]
    assert [p.name for p in hooks.generators["toyworld"].presets] == ["toyworld"]
    assert set(hooks.campaign_sources) == {"toyworld"} and hooks.gold_generator == "toyworld"
    assert hooks.examples and hooks.commands
    for target in [*hooks.model_builders.values(), *hooks.tokenizers.values(), hooks.gold_items, *hooks.examples,
                   *hooks.commands, *(s.build for s in hooks.data_sources.values()),
                   *(g.draw for g in hooks.generators.values()), *(g.regenerate for g in hooks.generators.values()),
                   *(s.build for s in hooks.campaign_sources.values())]:
        assert callable(plugins.resolve(target)), target


def test_an_installed_plug_in_is_found_through_its_entry_point(monkeypatch):
    class Entry:
        value = "tests.test_layout"

    monkeypatch.setattr(plugins, "entry_points", lambda group: [Entry()] if group == "complab.plugins" else [])
    assert plugins.plugin_modules() == [*plugins.BUILTIN, "tests.test_layout"]


def test_a_neutral_training_config_names_its_model_and_data():
    with pytest.raises(ValueError, match="base_model is required") as refused:
        TrainConfig.from_dict({})
    assert "data 'manifest' needs a manifest path" in str(refused.value)
    assert TrainConfig().eval_benchmarks == [] and TrainConfig().data == "manifest"


@pytest.mark.parametrize("values, message", [
    ({"eval_every": 0}, "eval_every must be a whole number of at least 1"),
    ({"max_logit_scale": 0}, "max_logit_scale must be positive"),
    ({"max_logit_scale": -3.0}, "max_logit_scale must be positive"),
    ({"warmup_steps": -1}, "warmup_steps must be 0 or more"),
    ({"dataset_size": 0}, "dataset_size must be a whole number of at least 1"),
])
def test_values_that_would_crash_a_run_are_refused_at_submit(values, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig.from_dict({**TOY_RUN, **values})


def test_the_first_eval_benchmark_picks_best_by_its_headline_metric():
    from backend.train.loop import config_select_metric

    assert config_select_metric(TrainConfig(**TOY_RUN)) == ""
    assert config_select_metric(TrainConfig(**TOY_RUN, eval_benchmarks=["toy-sugarcrepe"])) == "toy-sugarcrepe/overall"
    assert config_select_metric(TrainConfig(**TOY_RUN, eval_benchmarks=["sugarcrepe"])) == "sugarcrepe/micro"


@pytest.mark.parametrize("value, offline", [
    ("1", True), ("true", True), ("ON", True), ("yes", True), ("0", False), ("", False), ("false", False),
    ("no", False), ("off", False)])
def test_the_offline_flag_reads_as_huggingface_hub_reads_it(value, offline):
    from huggingface_hub.constants import _is_true

    assert env.hub_offline({"HF_HUB_OFFLINE": value}) is offline is _is_true(value)
    assert env.hub_offline({"COMPLAB_OFFLINE": value}) is offline


def test_rank_world_size_and_a_bare_cuda_device_follow_torchrun():
    torchrun = {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4"}
    assert (env.rank(torchrun), env.local_rank(torchrun), env.world_size(torchrun), env.distributed(torchrun)) == \
        (3, 1, 4, True)
    assert (env.rank({}), env.world_size({}), env.distributed({})) == (0, 1, False)
    assert env.pick_device("cpu") == "cpu" and env.pick_device("cuda:2") == "cuda:2"


def test_torchrun_ranks_beyond_the_gpus_are_told_what_to_do(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert env.pick_device() == "cuda:0" and env.pick_device("cuda") == "cuda:0"
    monkeypatch.setenv("LOCAL_RANK", "1")
    with pytest.raises(RuntimeError, match=r"local rank 1, but this machine shows 1 GPU.*--nproc_per_node 1"):
        env.pick_device()
    assert env.pick_device("cpu") == "cpu"


@pytest.mark.parametrize("device, backend", [("cuda:0", "nccl"), ("cpu", "gloo")])
def test_the_process_group_follows_the_ranks_device_not_the_machine(monkeypatch, device, backend):
    """A CPU run under torchrun on a GPU machine must use gloo: NCCL cannot reduce CPU tensors."""
    joined = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.distributed, "init_process_group", joined.append)
    monkeypatch.setattr(torch.distributed, "get_rank", lambda: 1)
    monkeypatch.setattr(torch.distributed, "get_world_size", lambda: 2)
    monkeypatch.setenv("RANK", "1")
    assert env.join_process_group(device) == (1, 2) and joined == [backend]


def test_an_error_without_a_message_reads_as_its_type():
    assert first_line(KeyError()) == "KeyError" and last_line(RuntimeError("")) == "RuntimeError"
    assert first_line(ValueError("\n  first\nsecond")) == "first" and last_line("a\nb\n\n") == "b"
    assert first_line(ValueError("x" * 500), limit=10) == "x" * 10


def test_two_requests_for_one_model_load_it_once(monkeypatch):
    loads = []

    def slow_load(spec, *args):
        loads.append(spec)
        time.sleep(0.2)
        return f"model {spec}"

    monkeypatch.setattr("backend.models.loading.load_model", slow_load)
    registry = ModelRegistry(max_models=2)
    results = []
    threads = [threading.Thread(target=lambda: results.append(registry.get(" a "))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == ["a"] and results == ["model a"] * 4
    registry.get("b"), registry.get("c")
    assert registry.loaded() == ["b", "c"]


def test_a_failed_load_leaves_nothing_behind(monkeypatch):
    def failing(spec, *args):
        raise ValueError(f"cannot load {spec}")

    monkeypatch.setattr("backend.models.loading.load_model", failing)
    registry = ModelRegistry()
    with pytest.raises(ValueError, match="cannot load x"):
        registry.get("x")
    assert registry.loaded() == [] and registry._loading == {}


def test_the_embedding_cache_stays_bounded_under_concurrent_writers():
    cache = EmbeddingCache(max_items=50)

    def write(offset: int) -> None:
        for index in range(500):
            cache.put((offset, index), index)
            cache.get((offset, index // 2))

    threads = [threading.Thread(target=write, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50


def test_versions_of_two_checkpoints_whose_names_share_a_prefix_never_mix(tmp_path):
    import torch

    weights = {"w": torch.zeros(2)}
    checkpoint.save_checkpoint(tmp_path / "clove-unpatched", weights, {"architecture": "t"}, {})
    checkpoint.save_checkpoint(tmp_path / "clove", weights, {"architecture": "t"}, {})
    checkpoint.save_checkpoint(tmp_path / "clove", weights, {"architecture": "t"}, {"step": 2})
    assert (tmp_path / "clove-unpatched").resolve().is_dir() and (tmp_path / "clove").resolve().is_dir()
    assert len([path for path in tmp_path.iterdir() if "@" in path.name]) == 2
    checkpoint.remove_checkpoint(tmp_path / "clove")
    assert sorted(path.name for path in tmp_path.iterdir())[0] == "clove-unpatched"
    assert len(list(tmp_path.iterdir())) == 2


def test_the_offered_tags_repos_are_open_clips_own():
    import open_clip

    for spec, repo in choices.TAG_REPOS.items():
        architecture, tag = spec.split(":")
        assert (open_clip.get_pretrained_cfg(architecture.replace("-quickgelu", ""), tag)["hf_hub"].strip("/")
                == repo)
    assert set(choices.PRETRAINED_CHOICES) <= set(choices.TAG_REPOS)


LIGHT_IMPORTS = ["backend.cli", "backend.core.settings", "backend.core.store", "backend.models.spec",
                 "backend.models.choices", "backend.models.catalog", "backend.perturb", "backend.plugins",
                 "backend.train.config", "backend.patching.config", "backend.benchmarks.job", "backend.jobs",
                 "app"]


@pytest.mark.system
def test_light_modules_import_no_heavy_library():
    """What the app's page and `--help` need imports no torch, open_clip, spaCy or diffusers (seconds each)."""
    script = (f"import sys\nfor name in {LIGHT_IMPORTS!r}: __import__(name)\n"
              "from backend.benchmarks import available_benchmarks\navailable_benchmarks()\n"
              "print(sorted(m for m in ('torch', 'open_clip', 'spacy', 'diffusers', 'sqlite_utils') "
              "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "[]"


def test_every_subcommand_answers_help():
    from backend.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert {"probe", "evaluate", "sweep", "train", "jobs", "campaign", "settings", "toyworld"} <= set(commands)
    for name, sub in commands.items():
        assert sub.format_help().startswith(f"usage: python -m backend {sub.prog.split()[-1]}"), name
        nested = [action for action in sub._actions if action.__class__.__name__ == "_SubParsersAction"]
        for action in nested:
            for inner in action.choices.values():
                assert re.match(r"usage: python -m backend \S+ \S+", inner.format_help())


def test_probe_help_names_every_family():
    from backend.cli import build_parser
    from backend.perturb import FAMILIES

    probe = build_parser()._subparsers._group_actions[0].choices["probe"]
    shown = " ".join(probe.format_help().split())  # argparse wraps the text
    assert all(name in shown for name in FAMILIES), shown  # "addition" was missing from a list typed by hand
