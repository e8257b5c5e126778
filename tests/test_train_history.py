"""A run's numbers against its base model's (evaluated at step 0) and a resumed run's whole history, on hand-made
numbers and on real (tiny) runs of the training loop reporting to a real store."""
import io
import json

from backend.cli import main
from backend.core.store import Store
from backend.jobs.reporter import Reporter
from backend.train import history
from backend.train.config import TrainConfig
from backend.train.loop import train

# toyworld:random trains from scratch: a few steps change its numbers. Checkpoints at 2 and 4.
RUN = dict(base_model="toyworld:random", data="toyworld-finetune", loss="negclip", steps=4, batch_size=8,
           dataset_size=24, eval_every=2, eval_benchmarks=["toy-aro-order"], warmup_steps=1, lr=1e-3, workers=0)


def test_against_base_pairs_each_final_metric_with_the_base_models_and_marks_regressions():
    rows = history.against_base({"sc/overall": 0.708, "sc/add_obj": 0.825, "other": 0.5},
                                {"sc/overall": 0.668, "sc/add_obj": 0.565, "sc/new": 0.9})
    assert [(r["metric"], r["base"], r["final"]) for r in rows] == [("sc/overall", 0.708, 0.668),
                                                                    ("sc/add_obj", 0.825, 0.565)]
    assert history.summary_lines(rows) == [
        "sc/overall\t70.8 -> 66.8 (-4.0 points, worse than the base model)",
        "sc/add_obj\t82.5 -> 56.5 (-26.0 points, worse than the base model)"]
    assert history.summary_lines(history.against_base({"a": 0.5}, {"a": 0.75})) == ["a\t50.0 -> 75.0 (+25.0 points)"]


def test_carry_over_reports_the_history_up_to_the_checkpoint_and_drops_what_came_after(tmp_path):
    lines = [{"step": 0, "split": "baseline", "b/x": 0.5}, {"step": 1, "split": "train", "loss": 2.0},
             {"step": 2, "split": "eval", "b/x": 0.6}, {"step": 3, "split": "train", "loss": 1.5}]
    (tmp_path / history.METRICS_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = Store(tmp_path / "lab.db")
    job = store.create_job("train", {})
    assert history.carry_over(tmp_path, 2, Reporter(store, job)) == {"b/x": 0.5}
    assert [(r["step"], r["split"], r["name"], r["value"]) for r in store.metrics(job)] == [
        (0, "baseline", "b/x", 0.5), (1, "train", "loss", 2.0), (2, "eval", "b/x", 0.6)]
    assert [json.loads(line)["step"] for line in (tmp_path / history.METRICS_FILE).read_text().splitlines()] == [0, 1, 2]


def test_a_run_keeps_its_base_models_numbers_and_a_resumed_run_its_whole_history(tmp_path, capsys):
    store = Store(tmp_path / "lab.db")
    config = TrainConfig.from_dict({**RUN, "output_dir": str(tmp_path), "name": "resumed"})
    first, second = store.create_job("train", {}, name="resumed"), store.create_job("train", {}, name="resumed")
    assert train(config, Reporter(store, first, out=io.StringIO()), stop_after=3) == {"stopped_at": 3}
    baseline = store.latest_metrics(first, "baseline")
    assert set(baseline) == {"toy-aro-order/accuracy"} and store.metrics(first, "baseline")[0]["step"] == 0

    result = train(config, Reporter(store, second, out=io.StringIO()))
    assert result["baseline_metrics"] == baseline  # carried over with the history, not evaluated again
    losses = [row["step"] for row in store.metrics(second, "train") if row["name"] == "loss"]
    assert losses[0] == 1 and losses[-1] == 4 and sorted(set(losses)) == losses  # from the start, once each
    assert [row["step"] for row in store.metrics(second, "eval")] == [2, 4]
    run_lines = [json.loads(line) for line in (config.run_dir / history.METRICS_FILE).read_text().splitlines()]
    assert [(line["step"], line["split"]) for line in run_lines if line["split"] != "train"] == [
        (0, "baseline"), (2, "eval"), (4, "eval")]

    store.update_job(second, status="done", result=result)
    assert main(["jobs", "show", str(second), "--db", str(store.path)]) == 0
    final = result["final_metrics"]["toy-aro-order/accuracy"]
    before = baseline["toy-aro-order/accuracy"]
    assert (f"against the base model (evaluated at step 0; percent):\n  toy-aro-order/accuracy\t{100 * before:.1f} "
            f"-> {100 * final:.1f} ({100 * (final - before):+.1f} points") in capsys.readouterr().out
