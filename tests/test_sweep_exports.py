"""A sweep's results as files (CSV, PNG, SVG), the default axes a sweep form opens on, and the one list of models
every tab offers, on hand-made results and real stores and folders."""
import csv
import json
import re

import pytest
from PIL import Image

from backend.cli import main
from backend.core.store import Store
from backend.models import choices
from backend.patching import exports, figure
from backend.patching.config import SweepConfig, default_axes

RESULT = {"object_centric": "ret/t2i_R@1", "compositional": "sc/overall", "recommended": {"alpha": 0.5},
          "rows": [{"alpha": 0.0, "ret/t2i_R@1": 0.8, "sc/overall": 0.7, "sc/add_obj": 0.825},
                   {"alpha": 0.5, "ret/t2i_R@1": 0.7, "sc/overall": 0.75, "sc/add_obj": 0.6},
                   {"alpha": 1.0, "ret/t2i_R@1": 0.65, "sc/overall": 0.64, "sc/add_obj": 0.565}]}


def test_the_table_has_every_metric_per_alpha_in_percent_and_marks_the_recommended_alpha(tmp_path):
    rows = list(csv.reader(exports.write_csv(RESULT, tmp_path / "s.csv").open()))
    assert rows[0] == ["alpha", "recommended", "ret/t2i_R@1 (%)", "sc/overall (%)", "sc/add_obj (%)"]
    assert rows[1:] == [["0", "", "80.0000", "70.0000", "82.5000"], ["0.5", "yes", "70.0000", "75.0000", "60.0000"],
                        ["1", "", "65.0000", "64.0000", "56.5000"]]


def test_the_svg_file_is_the_tabs_figure_sized_in_pixels(tmp_path):
    svg = exports.write_figure(RESULT, tmp_path / "s.svg").read_text()
    shown = figure.tradeoff_svg(exports.points(RESULT), "object-centric: ret/t2i_R@1 (%)",
                                "compositional: sc/overall (%)", 0.5)
    assert svg.split(">", 1)[1] == shown.split(">", 1)[1]  # the same marks; only the <svg> sizing differs
    assert 'width="620" height="400"' in svg and svg.count('class="sweep-point"') == 3
    assert [float(v) for v in re.findall(r'data-alpha="([\d.]+)"', svg)] == [0, 0.5, 1]
    assert svg.count('class="sweep-recommended"') == 1 and ">α=0.5</text>" in svg


def test_the_png_paints_the_points_where_the_svg_puts_them(tmp_path):
    image = Image.open(exports.write_figure(RESULT, tmp_path / "s.png")).convert("RGB")
    assert image.size == (figure.WIDTH * figure.PNG_SCALE, figure.HEIGHT * figure.PNG_SCALE)
    point = tuple(int(figure.POINT[i:i + 2], 16) for i in (1, 3, 5))
    for mark in figure.layout(exports.points(RESULT), "x", "y", 0.5):
        if mark.attrs.get("class") == "sweep-point":
            centre = (round(mark.attrs["cx"] * figure.PNG_SCALE), round(mark.attrs["cy"] * figure.PNG_SCALE))
            assert image.getpixel(centre) == point
    assert image.getpixel((2, 2)) == (255, 255, 255)


def test_a_figure_must_be_png_or_svg(tmp_path):
    with pytest.raises(ValueError, match="name a .png or .svg file"):
        exports.write_figure(RESULT, tmp_path / "s.pdf")
    assert not (tmp_path / "s.pdf").exists()


def test_sweep_export_writes_a_done_sweeps_files_and_refuses_the_rest(tmp_path, capsys):
    store = Store(tmp_path / "lab.db")
    done = store.create_job("sweep", {}, name="sweep")
    store.update_job(done, status="done", result=RESULT)
    running = store.create_job("sweep", {}, name="sweep")
    train = store.create_job("train", {}, name="run")
    db = ["--db", str(store.path)]
    out = tmp_path / "out"
    out.mkdir()
    assert main(["sweep-export", str(done), "--csv", str(out / "s.csv"), "--figure", str(out / "s.png"),
                 str(out / "s.svg"), *db]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["s.csv", "s.png", "s.svg"]
    assert f"wrote {out / 's.png'}" in capsys.readouterr().err
    for job, message in ((running, f"sweep {running} is queued: its results export once it is done"),
                         (train, f"job {train} is a train job, not a sweep")):
        assert main(["sweep-export", str(job), "--csv", str(tmp_path / "x.csv"), *db]) == 2
        assert message in capsys.readouterr().err
    assert main(["sweep-export", str(done), "--figure", str(tmp_path / "x.jpg"), *db]) == 2
    assert "--figure" in capsys.readouterr().err and not (tmp_path / "x.jpg").exists()


def test_default_axes_are_clove_where_its_benchmarks_ran_else_the_plugins_pair():
    clove = (SweepConfig.compositional, SweepConfig.object_centric)
    assert default_axes({"sugarcrepe", "imagenet", "toy-sugarcrepe"}) == clove
    assert default_axes({"sugarcrepe"}) == ("toy-sugarcrepe/overall", "toy-pretrain-retrieval/t2i_R@1")


def test_every_list_offers_finished_runs_and_patched_models_as_they_appear(tmp_path):
    store, models_dir = Store(tmp_path / "lab.db"), tmp_path / "models"
    assert choices.offered(["toyworld"], store, models_dir) == [("toyworld", "toyworld")]
    job = store.create_job("train", {}, name="negclip-run")
    (tmp_path / "run" / "best").mkdir(parents=True)
    store.update_job(job, status="done", result={"best": str(tmp_path / "run" / "best")})
    version = models_dir / choices.PATCHED_FOLDER / "v1"
    version.mkdir(parents=True)
    (version / "open_clip_config.json").write_text(json.dumps({"patched_from": {"alpha": 0.3}}))
    (models_dir / choices.PATCHED_FOLDER / "half").symlink_to(version)
    assert choices.offered(["toyworld"], store, models_dir) == [
        ("toyworld", "toyworld"), ("negclip-run (best)", f"local-dir:{tmp_path / 'run' / 'best'}"),
        ("half (patched, alpha 0.3)", f"local-dir:{models_dir / choices.PATCHED_FOLDER / 'half'}")]
