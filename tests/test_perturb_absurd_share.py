"""bench/perturb_absurd_share.py: the stratified share of absurd negatives, on a hand-made case."""
from collections import Counter

import pytest

from tests.support.bench_scripts import load

share_script = load("perturb_absurd_share")


def rows(family: str, absurd: int, ok: int, flagged_absurd: int = 0) -> list[dict]:
    return ([{"family": family, "label": "impl", "plausible": "yes"}] * absurd
            + [{"family": family, "label": "ok", "plausible": "yes"}] * ok
            + [{"family": family, "label": "impl", "plausible": "no"}] * flagged_absurd)


def test_each_familys_rate_is_weighted_by_what_the_probe_shows_and_flagged_rows_are_left_out():
    # replace: 3 of the 4 it lets through are absurd (0.75), shown 30 times; addition: 1 of 4 (0.25), shown 10 times
    judged = rows("replace", 3, 1, flagged_absurd=5) + rows("addition", 1, 3)
    share, low, high, lines = share_script.absurd_share(Counter(replace=30, addition=10), judged)
    assert share == pytest.approx(0.75 * 0.75 + 0.25 * 0.25)
    half = 1.959963984540054 * (0.75 ** 2 * 0.75 * 0.25 / 4 + 0.25 ** 2 * 0.25 * 0.75 / 4) ** 0.5
    assert (low, high) == pytest.approx((share - half, min(1.0, share + half)))
    assert any("replace" in line and "3/4" in line for line in lines)


def test_a_shown_family_without_judged_rows_is_refused_by_name():
    with pytest.raises(SystemExit, match="ce_clip"):
        share_script.absurd_share(Counter(replace=30, ce_clip=5), rows("replace", 1, 1))


def test_a_family_judged_twice_is_read_from_its_newest_sample(tmp_path):
    columns = ("id", "original", "output", "kind", "family", "subtype", "plausible", "label")
    files = []
    for name, labels in (("old.csv", {"ce_clip": "impl", "addition": "ok"}), ("new.csv", {"ce_clip": "ok"})):
        path = tmp_path / name
        lines = [",".join(columns)] + [f"1,a cat,a {family} {name},negative,{family},object,yes,{label}"
                                       for family, label in labels.items()]
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    rows = share_script.newest_per_family(files)
    assert sorted((row["family"], row["label"]) for row in rows) == [("addition", "ok"), ("ce_clip", "ok")]
