"""The `evaluate` job kind under torchrun with 2 CPU ranks, and the in-place alpha sweep against a fresh
interpolated copy per alpha. The local target's `evaluate` and `sweep` jobs run from their tabs
(tests/test_benchmarks_tab.py, tests/test_sweep_tab.py)."""
import json

import pytest
import torch

from backend import jobs
from backend.benchmarks import evaluate_many
from backend.benchmarks.results import results
from backend.core.auth import Actor, PermissionDenied
from backend.core.paths import PathError
from backend.core.store import Store
from backend.models.checkpoint import save_checkpoint
from backend.models.loading import load_model
from backend.patching.sweep import apply_alpha, patched_model, recommend, sweep
from tests.support.appserver import workspace_settings
from tests.support.waiting import wait_for

ADMIN = Actor("alice", "admin", "password")
GUEST = Actor("visitor", "annotator", "password")
BENCHMARKS = ["toy-sugarcrepe", "toy-zeroshot-shape"]
LIMIT = 6
# The built-in world's sweep axes (a sweep names them; the defaults are CLOVe's, which need downloaded data).
TOY_AXES = {"compositional": "toy-sugarcrepe/overall", "object_centric": "toy-zeroshot-shape/top1"}


@pytest.fixture
def settings(tmp_path):
    return workspace_settings(tmp_path / "ws")


def settled(store, job_id, timeout=240.0):
    job = wait_for(lambda: (row := store.get_job(job_id))["status"] in jobs.FINAL and row, timeout,
                   f"job {job_id} to settle")
    assert job["status"] == "done", f"{job['error']}\n{jobs.log_tail(job['log_path'])}"
    return job


@pytest.fixture(scope="module")
def finetuned(tmp_path_factory):
    """The built-in model with every weight nudged, saved as a checkpoint folder (what a training run leaves)."""
    loaded = load_model("toyworld", device="cpu")
    torch.manual_seed(0)
    with torch.no_grad():
        for parameter in loaded.model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    folder = tmp_path_factory.mktemp("finetuned") / "nudged"
    save_checkpoint(folder, loaded.model, loaded.architecture, {"trained_from": "toyworld"})
    return f"local-dir:{folder}"


@pytest.fixture(scope="module")
def in_process():
    """The numbers an in-process run gives, computed once for both targets."""
    return evaluate_many(BENCHMARKS, load_model("toyworld", device="cpu"), limit=LIMIT)


@pytest.mark.system
def test_an_evaluate_job_under_torchrun_stores_the_same_numbers_as_an_in_process_run(settings, in_process):
    """Two CPU ranks share the encoding and rank 0 stores; the local target's job is checked against an in-process
    run by tests/test_benchmarks_tab.py (the tab's own job)."""
    store = Store(settings.db)
    config = {"models": ["toyworld"], "benchmarks": BENCHMARKS, "limit": LIMIT, "workers": 0}
    job_id = jobs.submit(ADMIN, "evaluate", config, "torchrun", {"nproc": 2}, store=store, settings=settings)
    job = settled(store, job_id)
    stored = {row["benchmark"]: row for row in results(store)}
    assert set(stored) == set(BENCHMARKS) and all(row["job_id"] == job_id for row in stored.values())
    for name, row in stored.items():
        for key, value in row["metrics"].items():
            assert value == pytest.approx(in_process[f"{name}/{key}"], abs=1e-9), key
        assert row["activation"] == "gelu" and row["item_limit"] == LIMIT and row["version"]
    assert job["progress"] == 1.0 and len(job["result"]["results"]) == 2


def test_only_an_admin_launches_and_a_bad_benchmark_is_refused(settings):
    store = Store(settings.db)
    with pytest.raises(PermissionDenied):
        jobs.submit(GUEST, "evaluate", {"models": ["toyworld"], "benchmarks": BENCHMARKS}, store=store,
                    settings=settings)
    with pytest.raises(ValueError, match="unknown benchmark 'sugar'"):
        jobs.submit(ADMIN, "evaluate", {"models": ["toyworld"], "benchmarks": ["sugar"]}, store=store,
                    settings=settings)
    assert store.list_jobs() == []


def test_in_place_sweep_equals_a_fresh_interpolated_copy_per_alpha(finetuned):
    pretrained, end = load_model("toyworld", device="cpu"), load_model(finetuned, device="cpu")
    alphas = [0.0, 0.5, 1.0]
    copies = [{"alpha": a, **evaluate_many(BENCHMARKS, patched_model(pretrained, end, a), limit=LIMIT)}
              for a in alphas]
    model_id = id(pretrained.model)
    rows = sweep(pretrained, end, alphas, BENCHMARKS, limit=LIMIT)
    assert id(pretrained.model) == model_id  # one instance throughout
    assert rows == copies
    assert rows[0] != rows[2]  # the nudge changed something, so the comparison means something


def test_apply_alpha_writes_the_interpolation_into_the_model(finetuned):
    pretrained, end = load_model("toyworld", device="cpu"), load_model(finetuned, device="cpu")
    start_state = {k: v.clone() for k, v in pretrained.model.state_dict().items()}
    end_state = end.model.state_dict()
    apply_alpha(pretrained.model, start_state, end_state, 0.25)
    for key, value in pretrained.model.state_dict().items():
        if value.is_floating_point():
            assert torch.allclose(value, 0.75 * start_state[key] + 0.25 * end_state[key], atol=1e-6), key


def test_recommendation_keeps_object_centric_within_tolerance():
    rows = [{"alpha": 0.0, "c": 0.60, "o": 0.80}, {"alpha": 0.5, "c": 0.70, "o": 0.795},
            {"alpha": 0.8, "c": 0.75, "o": 0.78}, {"alpha": 1.0, "c": 0.80, "o": 0.60}]
    best = recommend(rows, "c", "o", tolerance=0.01)
    assert best["alpha"] == 0.5 and "1 points below the pretrained model's (80.0)" in best["criterion"]
    assert recommend(rows, "c", "o", tolerance=0.05)["alpha"] == 0.8


def test_a_sweep_of_a_checkpoint_outside_the_allowed_folders_is_refused(tmp_path, finetuned):
    """The sweep job itself (each alpha reported, the export loading back) runs in tests/test_sweep_tab.py."""
    with pytest.raises(PathError, match="outside the allowed folders"):
        jobs.submit(ADMIN, "sweep", {"pretrained": "toyworld", "finetuned": finetuned}, store=Store(tmp_path / "x.db"),
                    settings=workspace_settings(tmp_path / "closed"))


def test_results_of_a_hugging_face_evaluate_job_reach_the_local_leaderboard(settings, monkeypatch):
    """The container's store is lost with it; the results it logged are stored here when it completes."""
    from backend.benchmarks.job import RESULT_MARK
    from backend.jobs import hf
    from tests.support.fake_hf_jobs import FakeHfApi

    monkeypatch.setattr(hf, "POLL_S", 0.05)
    settings = workspace_settings(settings.workspace, COMPLAB_HF_IMAGE="ghcr.io/me/complab:1", HF_TOKEN="hf_x")
    store = Store(settings.db)
    summary = {"model": "ViT-B-32-quickgelu:openai", "activation": "quickgelu", "precision": "bf16",
               "benchmark": "toy-sugarcrepe", "version": "toyworld-bench-1", "limit": None,
               "metrics": {"overall": 0.75}, "seconds": 3.0, "notes": []}
    api = FakeHfApi([("RUNNING", None), ("COMPLETED", None)],
                    ["[12:00:00] loading", f"[12:00:03] {RESULT_MARK}{json.dumps(summary)}"])
    job_id = jobs.submit(ADMIN, "evaluate", {"models": ["toyworld"], "benchmarks": ["toy-sugarcrepe"]}, "hf",
                         store=store, settings=settings, api=api)
    settled(store, job_id, timeout=20)
    (row,) = results(store)
    assert (row["model"], row["activation"], row["precision"], row["job_id"]) == (
        "ViT-B-32-quickgelu:openai", "quickgelu", "bf16", job_id)
    assert row["metrics"] == {"overall": 0.75} and "item scores not kept" in row["notes"][-1]
