"""Validation campaigns (`backend.annotate.validation`) in the backend: sources, answers, resolution, gold, overrides,
exclusion, the export and the ``campaign:<name>`` benchmark that reads it. Real SQLite stores and image files; the
whole journey through the app is tests/test_validation_campaign.py."""
from __future__ import annotations

import dataclasses
import json

import pytest
from PIL import Image

from backend.annotate import assign, campaigns, db, exclusion, report, resolution, service, validation
from backend.annotate.tasks import TaskError, choice_of
from backend.core.auth import cli_actor
from backend.core.store import Store
from tests.support.appserver import workspace_settings

CAPTIONS = [("a red square above a blue circle", "a blue square above a red circle"),
            ("a dog on a sofa", "a cat on a sofa"),
            ("a man riding a horse", "a man riding a horse and a dog")]


@pytest.fixture
def lab(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    images = tmp_path / "images"
    images.mkdir()
    for k in range(len(CAPTIONS)):
        Image.new("RGB", (24, 24), (80 * k, 40, 200)).save(images / f"{k}.png")
    rows = {str(k): {"filename": f"{k}.png", "caption": c, "negative_caption": n} for k, (c, n) in enumerate(CAPTIONS)}
    (tmp_path / "swap_att.json").write_text(json.dumps(rows))
    return settings, tmp_path


def create(settings, folder, name="val", **config):
    return service.create_campaign(cli_actor(), name, "file", settings, path=str(folder / "swap_att.json"),
                                   images_dir=str(folder / "images"),
                                   config={"kind": "validate", "overlap": 2, "resolution": "majority",
                                           "gold_rate": 0, "tasks_per_session": 10, **config})


def answer_all(settings, name: str, person: str, answers: dict[str, str]) -> None:
    """`person` answers every task of their session: the answer planned for its negative, else "false"."""
    campaign_id = campaigns.get(settings.db, name)["id"]
    annotator = assign.join(settings.db, campaign_id, person)
    while isinstance(task := assign.serve(settings.db, annotator), assign.Task):
        assert task.task == "validate" and task.options == ("false", "true", "disfluent")
        assert len(task.images) == 1 and len(task.texts) == 1, "one image, its caption, one negative"
        assert assign.submit(settings.db, annotator, task.assignment_id, answers.get(task.text, "false")).recorded


def negative(k: int) -> str:
    return campaigns.normalise_caption(CAPTIONS[k][1])


def test_answers_are_read_from_words_and_keys_and_anything_else_is_refused():
    for said, meant in (("y", "false"), ("Yes", "false"), ("1", "false"), ("false", "false"), ("n", "true"),
                        ("2", "true"), ("f", "disfluent"), ("3", "disfluent"), (" DISFLUENT ", "disfluent")):
        assert choice_of("validate", {}, said, 0) == meant
    for bad in ("none", "left", "4", "x" * 500):
        with pytest.raises(TaskError, match="is not an answer to this validate task"):
            choice_of("validate", {}, bad, 0)
    assert choice_of("select", {}, "n", 4) == "none", "the other tasks keep their keys"


def test_items_are_ready_at_once_and_the_crowd_decides_each_by_the_rule(lab):
    settings, folder = lab
    assert create(settings, folder)["items"] == 3
    assert {row["stage"] for row in db.rows(settings.db, "select stage from items")} == {"ready"}
    plan = {negative(1): "true", negative(2): "disfluent"}
    answer_all(settings, "val", "ada", plan)
    answer_all(settings, "val", "bo", {**plan, negative(0): "true"})  # item 0: a 1-1 tie, no majority
    items = {row["negative_caption"]: row for row in db.rows(settings.db, "select * from items")}
    fates = {text: (row["stage"], json.loads(row["outcome"])["stage_reason"]) for text, row in items.items()}
    assert fates == {negative(0): ("dropped", "annotators disagreed on whether the negative is false"),
                     negative(1): ("dropped", "not a negative: still true of the image"),
                     negative(2): ("dropped", "not fluent")}
    agreement = report.status(settings.db, "val")["agreement"]["validate"]
    assert agreement["mean_kappa"] is not None and len(agreement["pairs"]) == 1
    with pytest.raises(ValueError, match="no validated negative yet"):
        service.export_campaign(cli_actor(), "val", settings)


def test_the_third_rule_calls_one_more_annotator_on_a_tie(lab):
    settings, folder = lab
    create(settings, folder, resolution="third")
    answer_all(settings, "val", "ada", {})
    answer_all(settings, "val", "bo", {negative(0): "true"})
    answer_all(settings, "val", "cy", {})  # only item 0 is open: its tie called a third answer
    outcome = db.rows(settings.db, "select stage, outcome from items where negative_caption = ?", (negative(0),))[0]
    assert outcome["stage"] == "done" and json.loads(outcome["outcome"])["validate"]["votes"] == {"false": 2, "true": 1}
    assert db.rows(settings.db, "select count(*) n from answers where annotator_id = "
                                "(select id from annotators where external_id = 'cy')")[0]["n"] == 1


def test_gold_items_come_from_the_worlds_oracle_and_the_caption_itself(lab):
    settings, folder = lab
    summary = create(settings, folder, gold_rate=0.5, gold_items=4, tasks_per_session=4)
    assert summary["gold_items"] == 4
    gold = db.rows(settings.db, "select * from items where gold = 1 order by position")
    assert [json.loads(row["truth"]) for row in gold] == [{"validate": "false"}, {"validate": "true"}] * 2
    assert all(row["stage"] == "ready" and row["image"] for row in gold)
    for row in gold:  # the caption itself is still true; the world's negative is another text
        assert (row["caption"] == row["negative_caption"]) == (json.loads(row["truth"])["validate"] == "true")
    answer_all(settings, "val", "careless", {})  # "false" to everything: the caption-as-negative gold fails
    marks = db.rows(settings.db, "select a.correct, i.truth from answers a join items i on i.id = a.item_id "
                                 "where i.gold = 1")
    assert marks and all(m["correct"] == (json.loads(m["truth"])["validate"] == "false") for m in marks)


def test_export_keeps_only_validated_negatives_and_campaign_benchmark_reads_them(lab, monkeypatch):
    settings, folder = lab
    create(settings, folder)
    answer_all(settings, "val", "ada", {negative(1): "true"})
    answer_all(settings, "val", "bo", {negative(1): "true"})
    exported = service.export_campaign(cli_actor(), "val", settings)
    assert (exported["rows"], exported["subsets"], exported["benchmark"]) == (2, {"swap_att": 2}, "campaign:val")
    target = settings.downloads_dir / "val" / validation.FOLDER
    rows = json.loads((target / "swap_att.json").read_text())
    assert sorted(r["negative_caption"] for r in rows.values()) == sorted([negative(0), negative(2)])
    assert all((target / "images" / r["filename"]).is_file() for r in rows.values())
    manifest = [json.loads(line) for line in (target / "manifest.jsonl").read_text().splitlines()]
    assert sorted(n for row in manifest for n in row["negatives"]) == sorted([negative(0), negative(2)])
    assert all((target / row["image"]).is_file() for row in manifest)

    from backend.benchmarks import campaign as benchmark
    from backend.core import settings as core_settings

    monkeypatch.setattr(core_settings, "get_settings", lambda: settings)
    made = benchmark.make("val")
    assert made.version.startswith("sha256:") and "Validation campaign" in made.description
    task = made.build(None, settings.benchmarks_dir)
    assert task.items.subtypes == ["swap_att", "swap_att"] and len(task.items.ids) == 2
    assert sorted(set(task.texts) - {campaigns.normalise_caption(c) for c, _ in CAPTIONS}) == \
        sorted([negative(0), negative(2)])
    assert "val" in benchmark.available(settings.benchmarks_dir)


def test_overrides_exclusion_and_refusals(lab):
    settings, folder = lab
    create(settings, folder, overlap=1)
    answer_all(settings, "val", "careless", {negative(k): "disfluent" for k in range(3)})
    first = db.rows(settings.db, "select id from items where negative_caption = ?", (negative(0),))[0]["id"]
    assert resolution.override(settings.db, first, "validate", "false", "admin") == "done"
    with pytest.raises(ValueError, match="validate is its task, not 'select'"):
        resolution.override(settings.db, first, "select", "1", "admin")
    done = exclusion.exclude(cli_actor(), settings.db, "val", ["careless"])
    assert len(done[0]["reopened"]) == 2, "the admin's decision stands; the careless answers' items reopen"
    assert {row["stage"] for row in db.rows(settings.db, "select stage from items where id != ?", (first,))} == \
        {"ready"}
    with pytest.raises(ValueError, match="no image to generate"):
        service.launch_generation(cli_actor(), "val", settings, Store(settings.db))
    with pytest.raises(ValueError, match="leave gold_from empty"):
        create(settings, folder, name="val2", gold_from="val")
    (folder / "no-images.csv").write_text("caption,negative_caption\na dog on a sofa,a cat on a sofa\n")
    with pytest.raises(ValueError, match="every item needs one"):
        service.create_campaign(cli_actor(), "val3", "file", settings, path=str(folder / "no-images.csv"),
                                config={"kind": "validate", "gold_rate": 0})
    assert [row["name"] for row in campaigns.list_campaigns(settings.db)] == ["val"], "nothing half-created"


def test_a_manifest_or_a_probe_gives_items(lab):
    settings, folder = lab
    (folder / "train.jsonl").write_text("\n".join(json.dumps(
        {"image": f"images/{k}.png", "caption": c, "negatives": [n, n.upper()]}) for k, (c, n) in
        enumerate(CAPTIONS)))
    made = service.create_campaign(cli_actor(), "from-manifest", "manifest", settings,
                                   path=str(folder / "train.jsonl"), config={"kind": "validate", "gold_rate": 0})
    assert made["items"] == 6
    probe = {"rows": [{"kind": "original", "text": CAPTIONS[0][0]},
                      {"kind": "negative", "text": CAPTIONS[0][1], "family": "binding_swap", "subtype": "att",
                       "toy verdict": "ok"},
                      {"kind": "negative", "text": "a red circle above a blue square", "family": "replace",
                       "subtype": "obj", "toy verdict": "FAIL"}]}
    (folder / "probe.json").write_text(json.dumps(probe))
    made = service.create_campaign(cli_actor(), "from-probe", "probe", settings, path=str(folder / "probe.json"),
                                   probe_image=str(folder / "images" / "0.png"),
                                   config={"kind": "validate", "gold_rate": 0})
    assert made["items"] == 2, "a validation campaign judges every negative, not only the ones a model failed"
    item = dict(db.rows(settings.db, "select * from items where negative_caption like 'A blue square%' and "
                                     "campaign_id = ?", (made["id"],))[0])
    assert validation.subset_of(item) == "binding-swap_att"


def test_sugarcrepe_summary_takes_a_campaigns_own_categories():
    from backend.metrics import sugarcrepe_summary

    summary = sugarcrepe_summary({"binding-swap_att": [1, 0], "replace_att": [1, 1]}, categories=None)
    assert summary["micro"] == {"binding-swap": 0.5, "replace": 1.0} and summary["overall"] == 0.75
    with pytest.raises(ValueError, match=r"is not replace_\*, swap_\*, add_\*"):
        sugarcrepe_summary({"binding-swap_att": [1, 0]})


def test_old_campaign_configs_get_the_validation_wording():
    stored = campaigns.CampaignConfig().to_dict()
    stored.pop("kind")
    stored["instructions"] = {task: stored["instructions"][task] for task in campaigns.TASKS}
    config = campaigns.CampaignConfig.from_dict(stored)
    assert config.kind == "bivlc" and "false" in config.instructions["validate"]
    with pytest.raises(ValueError, match="kind must be one of"):
        campaigns.CampaignConfig.from_dict({"kind": "rank"})
    assert dataclasses.asdict(config)["kind"] == "bivlc"
