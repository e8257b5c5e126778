"""Gradio's constructor signatures remembered (`ui.signatures`): the same answers as `inspect`, and a visitor's
/start through Gradio's own event path derives none once the app has served one."""
from __future__ import annotations

import asyncio
import inspect
from concurrent.futures import ThreadPoolExecutor

import gradio as gr
import pytest
from gradio import blocks as gradio_blocks
from gradio import component_meta

from tests.support.appserver import workspace_settings
from ui import session_state, signatures


@pytest.fixture(scope="module")
def annotate_app(tmp_path_factory):
    """The annotation app as `app.py` builds it, over a store with a toy campaign "toys"."""
    import app
    from backend.annotate.campaigns import CampaignConfig
    from backend.core.store import Store
    from backend.models.registry import EmbeddingCache, ModelRegistry
    from tests.support.annotate_fixtures import toy_campaign
    from ui.context import AppContext

    settings = workspace_settings(tmp_path_factory.mktemp("workspace"))
    store = Store(settings.db)
    toy_campaign(store.path, settings.data_dir, "toys", 12, CampaignConfig.from_dict({"overlap": 3}))
    ctx = AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                     model_choices=[], default_models=[], store=store, examples=[])
    return app.build_annotate_app(ctx)


class Counting:
    """Counts the signatures `inspect` derives (every public way in goes through `_signature_from_callable`)."""

    def __init__(self, monkeypatch):
        self.calls, real = 0, inspect._signature_from_callable

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(inspect, "_signature_from_callable", counted)


def start(blocks: gr.Blocks, name: str) -> list:
    """/start as Gradio runs it for a new visitor (a new session state, preprocess, handler, postprocess)."""
    fn = next(fn for fn in blocks.fns.values() if fn.api_name == "start")
    state = session_state.TemplateSessionState(blocks)
    called = blocks.process_api(fn, ["toys", name, "", None], state=state)
    with ThreadPoolExecutor(1) as thread:  # a loop of its own: a browser test's sync API runs one in this thread
        return thread.submit(asyncio.run, called).result()["data"]


@pytest.mark.parametrize("component", [gr.Button, gr.Column, gr.Markdown, gr.Image, gr.Dropdown, gr.Timer])
def test_the_remembered_answers_are_inspects(component):
    remembering = signatures.RememberingInspect()
    for _ in range(2):  # derived, then remembered
        assert remembering.signature(component.__init__) == inspect.signature(component.__init__)
        assert remembering.getfullargspec(component.__init__) == inspect.getfullargspec(component.__init__)
    assert remembering.signature(component.__init__) is remembering.signature(component.__init__)


def test_what_is_not_a_plain_function_is_asked_of_inspect_each_time(monkeypatch):
    remembering, counting = signatures.RememberingInspect(), Counting(monkeypatch)
    button = gr.Button(render=False)
    asked = [lambda: remembering.signature(button.get_config),  # a bound method: a new object at every access
             lambda: remembering.signature(gr.Button),  # a class
             lambda: remembering.signature(gr.Button.__init__, follow_wrapped=False),  # options
             lambda: remembering.getfullargspec(button.get_config)]
    for ask in asked:
        first = ask()
        counting.calls = 0
        assert ask() == first and counting.calls > 0
    assert remembering.signature(button.get_config) == inspect.signature(button.get_config)
    assert remembering.isfunction is inspect.isfunction  # the rest of `inspect` as it is


def test_app_py_makes_gradios_updates_remember_signatures(annotate_app):
    assert isinstance(gradio_blocks.inspect, signatures.RememberingInspect)
    assert component_meta.inspect is gradio_blocks.inspect
    signatures.install()  # again (the app built twice in one process): still the one memory
    assert component_meta.inspect is gradio_blocks.inspect


def test_a_visitors_start_derives_no_signature_once_one_was_served(annotate_app, monkeypatch):
    start(annotate_app, "first")
    counting = Counting(monkeypatch)
    shown = start(annotate_app, "second")
    remembered = counting.calls
    assert shown[1] == {"visible": False, "__type__": "update"}  # the start form hidden: a task is on screen
    for module in (gradio_blocks, component_meta):  # Gradio as it is: the same start derives them all again
        monkeypatch.setattr(module, "inspect", inspect)
    counting.calls = 0
    plain = start(annotate_app, "third")
    assert plain[1] == shown[1] and len(plain) == len(shown)
    assert remembered <= 5 < 30 <= counting.calls, (remembered, counting.calls)
