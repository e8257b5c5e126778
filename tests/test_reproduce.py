"""`python -m backend reproduce` on a planted "published" table: a tiny local model on toy benchmarks, the
printed differences checked exactly against the same evaluation done independently; a checkpoint that cannot
load and a benchmark without data are reported and do not stop the rest; the built-in tables are well formed."""
from __future__ import annotations

import csv
import io
import json

import pytest

from backend.benchmarks import get_benchmark
from backend.benchmarks.evaluator import evaluate_many
from backend.benchmarks.reference import PUBLISHED
from backend.benchmarks.reproduce import Line, compare, paper_rows, papers, plan, table
from backend.cli import main
from backend.models import catalog
from backend.models.loading import load_model

LIMIT = 6


def planted(spec: str) -> list[dict]:
    return [
        {"model": "Tiny (published)", "source": "Planted et al., Table 2", "paper": "planted", "checkpoint": spec,
         "toy-sugarcrepe/overall": 0.625, "toy-zeroshot-shape/top1": 0.25, "cifar100/top1": 0.5},
        {"model": "DAC-LLM (published)", "source": "Planted et al., Table 3", "paper": "planted",
         "checkpoint": "catalog:dac-llm", "toy-sugarcrepe/overall": 0.9},
        {"model": "Other paper", "source": "elsewhere", "paper": "other", "checkpoint": spec,
         "toy-sugarcrepe/overall": 0.1},
    ]


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["reproduce", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ours_beside_the_planted_numbers_with_the_exact_difference(tmp_path, capsys, tiny_checkpoints):
    spec = tiny_checkpoints.dir_spec
    table_file = tmp_path / "table.json"
    table_file.write_text(json.dumps(planted(spec)))
    code, out, _ = run_cli(capsys, "planted", "--table", str(table_file), "--limit", str(LIMIT), "--device", "cpu",
                           "--workers", "0", "--data-root", str(tmp_path / "data"), "--db", str(tmp_path / "lab.db"))
    assert code == 0
    ours = evaluate_many(["toy-sugarcrepe", "toy-zeroshot-shape"], load_model(spec, device="cpu"), limit=LIMIT)
    rows = {(row[0], row[1]): row for row in csv.reader(io.StringIO(out), dialect="excel-tab") if len(row) == 8}
    for metric, published in (("toy-sugarcrepe/overall", 0.625), ("toy-zeroshot-shape/top1", 0.25)):
        row = rows[(spec, metric)]
        assert row[2] == f"{100 * published:.2f}" and row[3] == f"{100 * ours[metric]:.2f}"
        assert row[5] == f"{100 * (ours[metric] - published):+.2f}"
        low, high = (float(v) for v in row[4].strip("[]").split(", "))
        assert low <= float(row[3]) <= high and row[6] == ("yes" if low <= 100 * published <= high else "no")
        assert row[7] == "Planted et al., Table 2"
    assert rows[(spec, "cifar100/top1")][3:7] == ["-", "-", "-", "-"]
    assert rows[("catalog:dac-llm", "toy-sugarcrepe/overall")][3:7] == ["-", "-", "-", "-"]
    assert (spec, "toy-sugarcrepe/overall") in rows and len(rows) == 1 + 4  # the header; the other paper left out
    assert "note: no data: cifar100" in out and "benchmarks --check" in out
    assert "note: catalog:dac-llm not evaluated:" in out and "dac-llm.pt" in out
    assert f"first {LIMIT} items per subset" in out


def test_the_evaluations_are_stored_for_the_leaderboard(tmp_path, capsys, tiny_checkpoints):
    from backend.benchmarks.results import results
    from backend.core.store import Store

    table_file = tmp_path / "table.json"
    table_file.write_text(json.dumps(planted(tiny_checkpoints.dir_spec)[:1]))
    run_cli(capsys, "planted", "--table", str(table_file), "--limit", str(LIMIT), "--device", "cpu",
            "--workers", "0", "--data-root", str(tmp_path / "data"), "--db", str(tmp_path / "lab.db"))
    stored = results(Store(tmp_path / "lab.db"))
    assert {(row["model"], row["benchmark"], row["item_limit"]) for row in stored} == {
        (tiny_checkpoints.dir_spec, "toy-sugarcrepe", LIMIT), (tiny_checkpoints.dir_spec, "toy-zeroshot-shape", LIMIT)}


def test_json_lines_carry_the_difference(tmp_path, capsys, tiny_checkpoints):
    table_file = tmp_path / "table.json"
    table_file.write_text(json.dumps(planted(tiny_checkpoints.dir_spec)[:1]))
    code, out, _ = run_cli(capsys, "planted", "--table", str(table_file), "--limit", str(LIMIT), "--device", "cpu",
                           "--workers", "0", "--data-root", str(tmp_path / "data"), "--db", str(tmp_path / "lab.db"),
                           "--json")
    lines = {line["metric"]: line for line in json.loads(out)}
    line = lines["toy-zeroshot-shape/top1"]
    assert code == 0 and line["difference"] == pytest.approx(line["ours"] - 0.25) and line["published"] == 0.25
    assert lines["cifar100/top1"]["ours"] is None and lines["cifar100/top1"]["note"].startswith("no data")


def test_compare_and_table_by_hand():
    rows = [{"model": "M", "source": "T1", "paper": "p", "checkpoint": "m", "b/acc": 0.5, "b/other": 0.25}]
    summaries = [{"model": "m", "benchmark": "b", "metrics": {"acc": 0.5625}, "intervals": {"acc": [0.51, 0.61]}}]
    lines = compare(rows, summaries)
    assert lines == [Line("m", "b/acc", 0.5, "T1", 0.5625, (0.51, 0.61)),
                     Line("m", "b/other", 0.25, "T1", note="b has no metric other")]
    assert table(lines)[1] == ["m", "b/acc", "50.00", "56.25", "[51.00, 61.00]", "+6.25", "no", "T1"]
    assert table(lines)[2] == ["m", "b/other", "25.00", "-", "-", "-", "-", "T1"]


@pytest.mark.parametrize("change, message", [
    ([{"model": "M", "source": "S", "paper": "p"}], "lacks checkpoint"),
    ([{"model": "M", "source": "S", "paper": "p", "checkpoint": "m", "b/acc": 76.5}], "fraction"),
    ({"not": "a list"}, "JSON list"),
])
def test_a_bad_table_file_is_refused_with_a_message(change, message, tmp_path, capsys):
    table_file = tmp_path / "table.json"
    table_file.write_text(json.dumps(change))
    code, _, err = run_cli(capsys, "p", "--table", str(table_file), "--db", str(tmp_path / "lab.db"))
    assert code == 2 and message in err


def test_an_unknown_paper_lists_the_papers_with_a_table(capsys, tmp_path):
    code, _, err = run_cli(capsys, "hard-positives", "--db", str(tmp_path / "lab.db"))
    assert code == 2 and "no published table" in err and "aro, bivlc, ce-clip" in err


def test_the_built_in_tables_name_loadable_checkpoints_and_known_metrics():
    assert {"aro", "ce-clip", "clove", "bivlc", "dac", "tsvlc"} <= set(papers())
    for paper in papers():
        for row in paper_rows(paper):
            checkpoint = row["checkpoint"]
            if checkpoint.startswith("catalog:"):
                catalog.get_entry(checkpoint.removeprefix("catalog:"))
            else:
                assert checkpoint in {entry.model_spec for entry in catalog.ENTRIES.values()}
            for metric, value in row.items():
                if "/" in metric:
                    benchmark = get_benchmark(metric.split("/")[0])
                    assert 0 <= value <= 1 and (metric.split("/", 1)[1] in benchmark.chance
                                                or metric.split("/", 1)[1] in benchmark.headline
                                                or "retrieval" in benchmark.name), metric
    benchmarks = ["aro-vg-relation", "aro-vg-attribution", "aro-coco-order", "aro-flickr30k-order", "sugarcrepe",
                  "winoground", "coco-retrieval", "flickr30k-retrieval"]
    assert plan(paper_rows("dac")) == {"catalog:dac-llm": benchmarks, "catalog:dac-sam": benchmarks}
    assert len([row for row in PUBLISHED if row.get("paper") == "clove"]) == 3
