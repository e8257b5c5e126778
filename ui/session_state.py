"""A visitor's session state made from the app's own block configs, not by recomputing them (Gradio's SessionState).

Why: Gradio makes a `SessionState` on the first event of every session (a participant's /start, a Probe
visitor's first click), and its ``__init__`` computes the config of every block of the app (`config_for_block`:
``inspect.signature`` and the API info of each component) whether or not that session ever changes one. That is
18 ms of CPU per session for the annotation app's 111 blocks and 68 ms for the full app's 447 (gradio 6.31, this
machine), in the one process that answers the crowd: a wave of study-link arrivals paid it all at once (issue 22,
item 7: 200 participants starting in one second queued their first answers behind ~4 s of it; a public Space
paid it for every page a visitor opened).

Here each block's config is computed once per app (`template`) and a session holds a copy of an entry only once
it reads or changes it (`TemplateConfigs`; the copy is of what Gradio changes in place, `own_entry`); what Gradio
does with a session's configs (updates, deep links) and its other state are Gradio's own, unchanged
(`tests/test_session_state.py` compares them with Gradio's).
`install` makes Gradio's `StateHolder` build sessions this way; the composition root (`app.py`) calls it.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from gradio import state_holder
from gradio.blocks import Blocks

_templates: weakref.WeakKeyDictionary[Blocks, dict[int, dict]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_NO_BLOCKS = SimpleNamespace(default_config=SimpleNamespace(blocks={}), blocks={})


def template(blocks: Blocks) -> dict[int, dict]:
    """Every block's config as a new session starts with it (Gradio's `config_for_block` of the app's own
    blocks), computed once per app; again when the app's blocks changed (a reload)."""
    with _lock:
        cached = _templates.get(blocks)
    if cached is not None and cached.keys() == blocks.blocks.keys():
        return cached
    config = blocks.default_config
    made = {key: config.config_for_block(key, [], block) for key, block in blocks.blocks.items()}
    with _lock:
        _templates[blocks] = made
    return made


def own_entry(shared: dict) -> dict:
    """A session's own copy of a template entry: the entry and its ``props``, the one part Gradio changes in place
    (``state_holder.SessionState._update_value_in_config`` sets ``props["value"]``; everything else of a session's
    entry it replaces whole, with a config of its own). The rest is shared with the template, read only. A deep copy
    was ~1 ms per output a session's first event sends (~20 at a start: a fifth of its CPU)."""
    own = dict(shared)
    if isinstance(own.get("props"), dict):
        own["props"] = dict(own["props"])
    return own


class TemplateConfigs(dict):
    """A session's block configs: its own copy of an entry from the first time it is read or set, the app's
    template for the others. Reads as a dict holding every entry (``in``, iteration, ``items``)."""

    def __init__(self, shared: dict[int, dict]):
        super().__init__()
        self.shared = shared

    def __missing__(self, key: int) -> dict:
        own = self[key] = own_entry(self.shared[key])
        return own

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self.shared

    def __iter__(self) -> Iterator[int]:
        yield from dict.__iter__(self)
        yield from (key for key in self.shared if not dict.__contains__(self, key))

    def __len__(self) -> int:
        return len(set(dict.keys(self)) | self.shared.keys())

    def keys(self):
        return list(self)

    def items(self):
        return [(key, self[key]) for key in self]

    def values(self):
        return [self[key] for key in self]

    def get(self, key: int, default: Any = None) -> Any:
        return self[key] if key in self else default


class TemplateSessionState(state_holder.SessionState):
    """Gradio's `SessionState` whose block configs come from the app's template (`TemplateConfigs`)."""

    def __init__(self, blocks: Blocks):
        super().__init__(_NO_BLOCKS)  # type: ignore[arg-type]  # Gradio's own attributes, with no block config computed
        self.blocks_config = state_holder.copy(blocks.default_config)
        self.config_values = TemplateConfigs(template(blocks))


def install() -> None:
    """Make Gradio's `StateHolder` build every new session as a `TemplateSessionState`."""
    state_holder.SessionState = TemplateSessionState  # type: ignore[misc]
