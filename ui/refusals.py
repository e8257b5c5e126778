"""A refused action leaves the page as it was: no "Error" badge over what the outputs showed.

When a handler raises `gr.Error` (a refusal with its reason: an empty caption, a launch over the limits, "pick a
campaign first"), Gradio shows the reason in a toast that fades after a few seconds, and marks every output of
the event "Error" until that output's next event. The badge covers what the output showed before (the Probe's
earlier results, a run's status) and outlives the toast, so a person was left with "Error" and no reason.

`keep_shown` follows every event that has outputs with a handler for its failure that leaves each output as it
was (`gr.skip()`), hidden and outside the API: the outputs' next event is then that one, which clears their
marks. The composition root (`app.py`) calls it once the Blocks are built, so every tab's events get it, the
annotation app's too.
"""
from __future__ import annotations

import gradio as gr
from gradio.block_function import BlockFunction
from gradio.components.api_component import Api
from gradio.events import EventListenerMethod


def _left_as_shown(count: int):
    def leave(*_):
        return gr.skip() if count == 1 else tuple(gr.skip() for _ in range(count))
    return leave


def _shows_outputs(function: BlockFunction) -> bool:
    """A page's event that runs Python and shows outputs: not a failure step itself, nor an API-only endpoint
    (`gr.api`: its one output is no component of a page)."""
    return (function.fn is not None and bool(function.outputs) and not function.trigger_only_on_failure
            and not any(isinstance(output, Api) for output in function.outputs))


def keep_shown(demo: gr.Blocks) -> None:
    """Add, to every event of `demo` that shows outputs (`_shows_outputs`), a failure step leaving those outputs
    as they were (see the module's docstring)."""
    for index, function in list(demo.fns.items()):
        if not _shows_outputs(function):
            continue
        follower, _ = demo.default_config.set_event_trigger(
            [EventListenerMethod(None, "failure")], _left_as_shown(len(function.outputs)), inputs=[],
            outputs=list(function.outputs), trigger_after=index, trigger_only_on_failure=True,
            show_progress="hidden", api_visibility="private", queue=False)
        follower.page = function.page  # a page's events are sent with that page (the study page is one)
