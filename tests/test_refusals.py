"""Every event of both apps is followed, on failure, by a step that leaves its outputs as they were
(`ui.refusals.keep_shown`), so no refusal leaves an "Error" badge over what a page showed. What a person sees is
checked in a browser by `tests/test_browser.py` (a refused probe keeps the results shown before it)."""
from __future__ import annotations

import gradio as gr
import pytest
from gradio.components.api_component import Api

from tests.support.appserver import built_apps, workspace_settings


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return built_apps(workspace_settings(tmp_path_factory.mktemp("workspace")))


@pytest.mark.parametrize("which", [0, 1], ids=["annotate app", "whole app"])
def test_every_event_with_outputs_has_a_failure_step_over_the_same_outputs(apps, which):
    fns = apps[which].fns
    followers = {function.trigger_after: function for function in fns.values() if function.trigger_only_on_failure}
    events = [(index, function) for index, function in fns.items()
              if function.fn is not None and function.outputs and not function.trigger_only_on_failure
              and not isinstance(function.outputs[0], Api)]  # API-only endpoints show nothing
    assert len(events) > 5 and any(function.page for _, function in events)  # the study page's too
    for index, function in events:
        follower = followers.get(index)
        assert follower is not None, f"event {index} ({function.name}) has no failure step"
        assert [o._id for o in follower.outputs] == [o._id for o in function.outputs]
        assert follower.api_visibility == "private" and follower.show_progress == "hidden"
        assert follower.page == function.page


def test_the_failure_step_leaves_each_output_as_it_was(apps):
    fns = apps[1].fns
    followers = [function for function in fns.values() if function.trigger_only_on_failure]
    one = next(f for f in followers if len(f.outputs) == 1)
    many = next(f for f in followers if len(f.outputs) > 1)
    assert isinstance(one.fn(), type(gr.skip()))
    assert len(many.fn()) == len(many.outputs) and all(isinstance(value, type(gr.skip())) for value in many.fn())
