"""Plug-ins: packages that add models, training data, recipes, benchmarks, generators, campaign sources, Probe
examples and commands through one set of hooks, so that generic code never names them.

A plug-in is a module with ``register(hooks: Hooks) -> None``. The built-in world (`backend.toyworld.plugin`) is
one, listed in `BUILTIN`; an installed package adds its own through the ``complab.plugins`` entry-point group
(``[project.entry-points."complab.plugins"] mine = "mypackage.plugin"``). Every hook names what it adds as a
``"module:attribute"`` string, imported only when used: registering must stay cheap, because listing the
choices of a form or answering ``python -m backend --help`` loads every plug-in and must not import torch.

What each hook is for, and who reads it:

| hook | registered with | read by |
|---|---|---|
| a built-in model (an alias for a checkpoint folder shipped with the plug-in) | `add_model` | `backend.models` |
| a model built from scratch (``NAME:random``, for pretraining) | `add_model_builder` | `backend.train.loop` |
| a tokenizer for a non-BPE model | `add_tokenizer` | `backend.models.loading` |
| a training data source (``TrainConfig.data``) | `add_data_source` | `backend.train` |
| a named training recipe (the Train tab's menu) | `add_recipe` | `backend.train.recipes` |
| modules that register benchmarks on import | `add_benchmarks` | `backend.benchmarks` |
| a patching sweep's axes that need no downloaded data | `add_sweep_axes` | `backend.patching.config` |
| an image generator and its presets | `add_generator` | `backend.generate` |
| a campaign source, and where gold items come from | `add_campaign_source`, `set_gold_items` | `backend.annotate` |
| example images for the Probe tab | `add_examples` | `app.py` |
| a subcommand of ``python -m backend`` | `add_command` | `backend.cli` |
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

BUILTIN = ("backend.toyworld.plugin",)
ENTRY_POINT_GROUP = "complab.plugins"


def resolve(target: str) -> Any:
    """The object named by ``"package.module:attribute"``."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class BuiltinModel:
    """A model that ships with a plug-in: its spec alias, its checkpoint folder (open_clip_config.json +
    weights), and one line for lists."""

    alias: str
    folder: Path
    summary: str


@dataclass(frozen=True)
class DataSource:
    """Training data a plug-in generates: ``build(config, loaded, augment) -> TrainData``."""

    name: str
    build: str
    summary: str


@dataclass(frozen=True)
class Generator:
    """A way to draw campaign images besides diffusers: ``draw(caption, negative, item_seed, slots, slot, seed,
    p_none) -> (PIL.Image, record)`` draws image `slot` of an item, ``regenerate(record) -> PIL.Image`` draws a
    stored one again; `presets` are the `backend.generate.presets.Preset`s that use it."""

    name: str
    draw: str
    regenerate: str
    presets: tuple = ()


@dataclass(frozen=True)
class CampaignSource:
    """Where a campaign's items come from: ``build(n_items, seed, folder) -> list[ItemSpec]``, and the
    generator preset such campaigns use unless the admin picks another."""

    name: str
    label: str
    build: str
    generator: str = ""


@dataclass
class Hooks:
    """Everything every plug-in registered, by hook."""

    models: dict[str, BuiltinModel] = field(default_factory=dict)
    model_builders: dict[str, str] = field(default_factory=dict)
    tokenizers: dict[str, str] = field(default_factory=dict)
    data_sources: dict[str, DataSource] = field(default_factory=dict)
    recipes: dict[str, dict] = field(default_factory=dict)
    benchmark_modules: list[str] = field(default_factory=list)
    generators: dict[str, Generator] = field(default_factory=dict)
    campaign_sources: dict[str, CampaignSource] = field(default_factory=dict)
    gold_items: str = ""
    gold_generator: str = "diffusers"
    examples: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    sweep_axes: list[tuple[str, str]] = field(default_factory=list)

    def add_model(self, alias: str, folder: Path, summary: str) -> None:
        self.models[alias] = BuiltinModel(alias, Path(folder), summary)

    def add_model_builder(self, spec: str, build: str) -> None:
        """``build(seed: int) -> (model, preprocess, tokenizer, architecture)``: a freshly initialised model."""
        self.model_builders[spec] = build

    def add_tokenizer(self, name: str, factory: str) -> None:
        """`name` is an architecture or a checkpoint's ``tokenizer`` key; the factory takes ``context_length``."""
        self.tokenizers[name] = factory

    def add_data_source(self, name: str, build: str, summary: str) -> None:
        self.data_sources[name] = DataSource(name, build, summary)

    def add_recipe(self, label: str, values: dict) -> None:
        self.recipes[label] = dict(values)

    def add_benchmarks(self, module: str) -> None:
        self.benchmark_modules.append(module)

    def add_generator(self, name: str, draw: str, regenerate: str, presets: tuple = ()) -> None:
        self.generators[name] = Generator(name, draw, regenerate, tuple(presets))

    def add_campaign_source(self, name: str, label: str, build: str, generator: str = "") -> None:
        self.campaign_sources[name] = CampaignSource(name, label, build, generator)

    def set_gold_items(self, build: str, generator: str) -> None:
        """``build(n, seed, folder) -> list[ItemSpec]``: items whose right answers are known, and the generator
        that draws their images (the one that knows what each image shows)."""
        self.gold_items, self.gold_generator = build, generator

    def add_sweep_axes(self, compositional: str, object_centric: str) -> None:
        """A pair of ``<benchmark>/<metric>`` names a sweep can plot at once, with the plug-in's own data: each with
        spread between a pretrained model and its finetune (an axis at 100% at every alpha draws a line)."""
        self.sweep_axes.append((compositional, object_centric))

    def add_examples(self, build: str) -> None:
        """``build(folder: Path) -> [[image path, caption], ...]``."""
        self.examples.append(build)

    def add_command(self, add_parsers: str) -> None:
        """``add_parsers(subparsers)`` adds subcommands to ``python -m backend``."""
        self.commands.append(add_parsers)


_LOCK = threading.Lock()
_HOOKS: Hooks | None = None


def hooks() -> Hooks:
    """The hooks of every plug-in, registered once per process (the built-in ones first)."""
    global _HOOKS
    with _LOCK:
        if _HOOKS is None:
            registered = Hooks()
            for module in plugin_modules():
                importlib.import_module(module).register(registered)
            _HOOKS = registered
    return _HOOKS


def plugin_modules() -> list[str]:
    """The built-in plug-ins, then those installed packages declare."""
    installed = [entry.value for entry in entry_points(group=ENTRY_POINT_GROUP)]
    return list(dict.fromkeys([*BUILTIN, *installed]))
