"""bench/perturb_report.py: the Wilson interval against known values, and refusal of files not fully judged.

The judged CSVs here are written by the tests themselves; the shared data folder does not exist on a user's machine.
"""
import csv
from pathlib import Path

import pytest

from tests.support.bench_scripts import load

COLUMNS = ("id", "subset", "original", "output", "kind", "family", "subtype", "label", "note")

report = load("perturb_report")


def _row(label: str, family: str = "replace", subtype: str = "object", kind: str = "negative") -> dict:
    """One row as bench/perturb_sample.py writes it, with a label filled in."""
    return {"id": "1", "subset": "replace_obj", "original": "a dog on a sofa", "output": "a cat on a sofa",
            "kind": kind, "family": family, "subtype": subtype, "label": label, "note": ""}


def _write(path: Path, rows: list[dict]) -> Path:
    """A judged CSV of our own, so the test never reads the shared data folder."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_wilson_with_no_errors_bounds_the_rate_at_about_six_percent():
    low, high = report.wilson(0, 60)
    assert low == 0.0
    assert high == pytest.approx(0.0602, abs=5e-4)


def test_wilson_three_of_sixty():
    low, high = report.wilson(3, 60)
    assert low == pytest.approx(0.0171, abs=5e-4)
    assert high == pytest.approx(0.1370, abs=5e-4)


def test_wilson_is_symmetric_and_rejects_empty_samples():
    low, high = report.wilson(60, 60)
    assert (low, high) == pytest.approx((1 - report.wilson(0, 60)[1], 1.0))
    with pytest.raises(ValueError):
        report.wilson(0, 0)


def test_unlabelled_rows_are_refused(tmp_path, capsys):
    path = _write(tmp_path / "judged.csv", [_row("ok"), _row(""), _row("err")])
    with pytest.raises(report.JudgedFileError, match="row 3 .*no label"):
        report.read_judged(path)
    assert report.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert "1 of 3 rows are not judged" in err and "no label" in err


def test_unknown_labels_and_impl_on_positives_are_refused(tmp_path):
    path = _write(tmp_path / "judged.csv", [_row("wrong"), _row("impl", "hard_positive", "synonym", "positive")])
    with pytest.raises(report.JudgedFileError) as refusal:
        report.read_judged(path)
    assert "'wrong' is not one of ok, impl, doubt, err" in str(refusal.value)
    assert "impl is a label for negatives" in str(refusal.value)


def test_table_has_family_and_subtype_rows(tmp_path, capsys):
    rows = [_row("err")] + [_row("ok")] * 57 + [_row(" Impl "), _row("doubt"), _row("ok", subtype="attribute")]
    assert report.main([str(_write(tmp_path / "judged.csv", rows))]) == 0
    table = capsys.readouterr().out
    assert "| **replace** | (all) | negative | 61 | 1 |" in table
    assert "| replace | object | negative | 60 | 1 | 1.7% [0.3, 8.9] | 1 (1.7%) | 1 (1.7%) |" in table
    assert "| replace | attribute | negative | 1 | 0 | 0.0% [0.0, 79.3] | 0 (0.0%) | 0 (0.0%) |" in table


def test_the_plausibility_label_is_scored_against_the_judged_absurd_ones():
    """4 judged absurd, the label flags 3 of them and 1 fluent one: recall 3/4, precision 3/4, and 1 absurd of
    the 6 it lets through; positives and rows without the engine's label are not counted."""
    rows = ([{**_row("impl"), "plausible": "no"}] * 3 + [{**_row("impl"), "plausible": "yes"}]
            + [{**_row("ok"), "plausible": "no"}] + [{**_row("ok"), "plausible": "yes"}] * 5
            + [{**_row("ok", kind="positive"), "plausible": "yes"}, _row("impl")])
    table = report.plausibility_markdown(rows)
    assert "| judged absurd among all judged negatives | 4/10 = 40.0% [" in table
    assert "| recall: absurd ones the label flags | 3/4 = 75.0% [" in table
    assert "| precision: flagged ones judged absurd | 3/4 = 75.0% [" in table
    assert "| judged absurd among those labelled plausible | 1/6 = 16.7% [" in table
