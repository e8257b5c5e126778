"""Gradio's components without re-deriving their constructors' signatures on every update (issue 22, item 7).

Why: every property a handler sends (``gr.Column(visible=True)``, a value into a session's config) makes Gradio
build the component again in the visitor's session, and each build derives its class's ``__init__`` signature
with `inspect` three times or more: `component_meta`'s wrapper (``inspect.getfullargspec``, once per class in the
hierarchy) and `Block.get_config` (``inspect.signature``, twice: the session's ``__setitem__`` and
``_update_config``). A session's start sends ~35 properties: ~90 signatures, a third of the start's CPU in the one
process that answers the crowd (gradio 6.31; `bench/annotate_arrival.py` measures it).

A function's signature does not change once it is defined (nothing here sets ``__signature__`` later), so the
two `inspect` calls are remembered per function object, for plain functions only (a bound method is a new
object at every access), and forgotten with the function. What Gradio does with them is unchanged. `install`
points the two Gradio modules that derive them per update at the remembering version; the composition root
(`app.py`) calls it.
"""
from __future__ import annotations

import inspect
import threading
import weakref
from types import FunctionType, ModuleType
from typing import Any

from gradio import blocks, component_meta

_MODULES = (blocks, component_meta)  # the modules whose per-update code derives signatures


class RememberingInspect(ModuleType):
    """The `inspect` module with ``signature`` and ``getfullargspec`` of a plain function computed once."""

    def __init__(self) -> None:
        super().__init__("inspect", inspect.__doc__)
        self._signatures: weakref.WeakKeyDictionary[FunctionType, inspect.Signature] = weakref.WeakKeyDictionary()
        self._specs: weakref.WeakKeyDictionary[FunctionType, inspect.FullArgSpec] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()  # a WeakKeyDictionary's writes are not atomic under threads

    def __getattr__(self, name: str) -> Any:
        return getattr(inspect, name)

    def signature(self, obj: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        if args or kwargs or type(obj) is not FunctionType:
            return inspect.signature(obj, *args, **kwargs)
        return self._remembered(self._signatures, obj, inspect.signature)

    def getfullargspec(self, func: Any) -> inspect.FullArgSpec:
        if type(func) is not FunctionType:
            return inspect.getfullargspec(func)
        return self._remembered(self._specs, func, inspect.getfullargspec)

    def _remembered(self, memory: weakref.WeakKeyDictionary, func: FunctionType, derive: Any) -> Any:
        with self._lock:
            known = memory.get(func)
        if known is None:
            known = derive(func)
            with self._lock:
                memory[func] = known
        return known


def install() -> None:
    """Make Gradio's per-update code use `RememberingInspect` (once per process; the app may be built again)."""
    remembering = next((module.inspect for module in _MODULES if isinstance(module.inspect, RememberingInspect)),
                       None) or RememberingInspect()
    for module in _MODULES:
        module.inspect = remembering  # type: ignore[attr-defined]
