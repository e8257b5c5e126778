"""Checkpoints: a complete `last` at every moment, and loud refusal of damaged ones."""
import json
import os

import pytest
import torch

from backend.models import checkpoint
from backend.models.checkpoint import CheckpointError, committed, load_for_resume, save_checkpoint


def _model(value: float) -> torch.nn.Module:
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        for param in model.parameters():
            param.fill_(value)
    return model


def _save(directory, step: int, value: float | None = None):
    value = float(step) if value is None else value
    return save_checkpoint(directory, _model(value), {"architecture": "test"}, {"step": step},
                           {"step": step, "note": torch.tensor([value])})


def _versions(directory):
    return sorted(p.name for p in directory.parent.iterdir() if p.name.startswith(f"{directory.name}@"))


def test_last_is_a_relative_link_to_one_complete_version(tmp_path):
    last = tmp_path / "checkpoints" / "last"
    _save(last, 1)
    _save(last, 2)
    assert last.is_symlink() and not os.path.isabs(os.readlink(last))
    assert _versions(last) == [os.readlink(last)] and os.readlink(last).startswith("last@step2-")
    assert json.loads((last / checkpoint.CONFIG).read_text()) == {"architecture": "test", "step": 2}
    model = _model(0.0)
    assert load_for_resume(last, model)["step"] == 2
    assert torch.equal(model.weight, torch.full((2, 3), 2.0))


def test_a_crash_before_the_switch_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    last = tmp_path / "last"
    _save(last, 1)

    def crash(link, version):
        raise OSError("power cut")

    monkeypatch.setattr(checkpoint, "_switch", crash)
    with pytest.raises(OSError):
        _save(last, 2)
    assert len(_versions(last)) == 2  # the new version was written, but nothing points to it
    model = _model(0.0)
    assert load_for_resume(last, model)["step"] == 1
    assert torch.equal(model.bias, torch.full((2,), 1.0))
    monkeypatch.undo()
    _save(last, 3)
    assert _versions(last) == [os.readlink(last)]  # the next save clears the interrupted one


def test_no_checkpoint_means_a_fresh_start(tmp_path):
    assert load_for_resume(tmp_path / "last", _model(0.0)) is None


def _truncate(path):
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])


def _garble(path):
    path.write_bytes(b"\x00garbage" * 8)


@pytest.mark.parametrize("damage, problem", [
    (lambda last: _truncate(last / checkpoint.WEIGHTS), f"{checkpoint.WEIGHTS} is unreadable"),
    (lambda last: _garble(last / checkpoint.WEIGHTS), f"{checkpoint.WEIGHTS} is unreadable"),
    (lambda last: _garble(last / checkpoint.STATE), f"{checkpoint.STATE} is unreadable"),
    (lambda last: (last / checkpoint.WEIGHTS).unlink(), f"{checkpoint.WEIGHTS} is missing"),
    (lambda last: (last / checkpoint.CONFIG).unlink(), f"{checkpoint.CONFIG} is missing"),
    (lambda last: _garble(last / checkpoint.CONFIG), f"{checkpoint.CONFIG} is not valid JSON"),
])
def test_a_damaged_checkpoint_is_refused_with_what_is_wrong_and_what_to_do(tmp_path, damage, problem):
    last = tmp_path / "run" / "checkpoints" / "last"
    _save(last, 1)
    damage(last)
    model = _model(0.0)
    with pytest.raises(CheckpointError) as error:
        load_for_resume(last, model)
    message = str(error.value)
    assert problem in message and str(last) in message
    assert f"delete {tmp_path / 'run'}" in message and "another run name" in message
    assert isinstance(error.value, ValueError)
    assert torch.equal(model.weight, torch.zeros(2, 3))  # nothing half-loaded


def test_weights_of_another_model_are_refused(tmp_path):
    _save(tmp_path / "last", 1)
    with pytest.raises(CheckpointError, match="do not fit this run's model"):
        load_for_resume(tmp_path / "last", torch.nn.Linear(4, 2))


def test_a_link_to_a_deleted_version_is_an_error_not_a_fresh_start(tmp_path):
    last = tmp_path / "last"
    _save(last, 1)
    for path in (tmp_path / os.readlink(last)).iterdir():
        path.unlink()
    (tmp_path / os.readlink(last)).rmdir()
    with pytest.raises(CheckpointError, match="does not exist"):
        committed(last)


def test_a_checkpoint_folder_from_before_links_is_read_then_replaced(tmp_path, monkeypatch):
    """Runs saved by the previous scheme have a real `last` directory."""
    last = tmp_path / "last"
    _save(tmp_path / "old", 1)
    os.rename((tmp_path / os.readlink(tmp_path / "old")), last)
    assert load_for_resume(last, _model(0.0))["step"] == 1

    def crash(link, version):  # between moving the old folder aside and linking the new version
        raise OSError("power cut")

    monkeypatch.setattr(checkpoint, "_switch", crash)
    with pytest.raises(OSError):
        _save(last, 2)
    assert not last.exists() and load_for_resume(last, _model(0.0))["step"] == 1  # found aside
    monkeypatch.undo()
    _save(last, 3)
    assert last.is_symlink() and load_for_resume(last, _model(0.0))["step"] == 3
    assert _versions(last) == [os.readlink(last)]
