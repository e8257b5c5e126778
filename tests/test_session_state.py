"""A new session's block configs from the app's template (`ui.session_state`) read as Gradio's own, and one
session's changes stay its own."""
from __future__ import annotations

import pytest
from gradio import state_holder

from tests.support.appserver import built_apps, workspace_settings
from ui import session_state

GRADIOS_OWN = session_state.TemplateSessionState.__mro__[1]  # gradio.state_holder.SessionState


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """The annotation app and the whole app, built as `app.py` builds them."""
    return built_apps(workspace_settings(tmp_path_factory.mktemp("workspace")))


def test_app_py_makes_gradio_build_sessions_from_the_template(apps):
    assert state_holder.SessionState is session_state.TemplateSessionState
    holder = state_holder.StateHolder()
    holder.set_blocks(apps[0])
    assert isinstance(holder["visitor"], session_state.TemplateSessionState)


@pytest.mark.parametrize("which", [0, 1], ids=["annotate", "full"])
def test_a_sessions_configs_and_state_read_as_gradios_own(apps, which):
    blocks = apps[which]
    own, ours = GRADIOS_OWN(blocks), session_state.TemplateSessionState(blocks)
    assert dict(ours.config_values.items()) == own.config_values
    assert len(ours.config_values) == len(own.config_values) and set(ours.config_values) == set(own.config_values)
    assert list(ours.components) == list(own.components)
    assert {k: v for k, v in vars(ours).items() if k != "config_values"}.keys() == vars(own).keys() - {"config_values"}
    assert ours.blocks_config.blocks == own.blocks_config.blocks and ours.blocks_config is not blocks.default_config


def test_what_one_session_changes_is_its_own(apps):
    blocks = apps[0]
    key = next(k for k, block in blocks.blocks.items() if "value" in session_state.template(blocks)[k].get("props", {}))
    before = session_state.template(blocks)[key]["props"]["value"]
    alice, bob = (session_state.TemplateSessionState(blocks) for _ in range(2))
    alice._update_value_in_config(key, "alice's value")
    assert alice.config_values[key]["props"]["value"] == "alice's value"
    assert bob.config_values[key]["props"]["value"] == before
    assert session_state.template(blocks)[key]["props"]["value"] == before
    assert session_state.TemplateSessionState(blocks).config_values.get(key)["props"]["value"] == before


def test_a_sessions_own_entry_copies_only_what_gradio_changes_in_place(apps):
    """`own_entry`: the entry and its props are the session's; what Gradio only reads stays the template's (a deep
    copy per output was a fifth of a start's CPU)."""
    blocks = apps[0]
    shared = session_state.template(blocks)
    key = next(k for k, entry in shared.items() if any(isinstance(v, (dict, list)) for v in entry.get("props", {})
                                                          .values()))
    alice = session_state.TemplateSessionState(blocks)
    alice._update_value_in_config(key, "alice's value")
    own = alice.config_values[key]
    assert own is not shared[key] and own["props"] is not shared[key]["props"]
    nested = next(name for name, value in shared[key]["props"].items() if isinstance(value, (dict, list)))
    assert own["props"][nested] is shared[key]["props"][nested]
