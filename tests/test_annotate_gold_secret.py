"""Gold items and their images come from the campaign's secret: the public code and the campaign's public
parameters (source, size, seed, config) cannot rebuild them, and the secret (kept with the campaign, restored
from its backup) gives the same gold again."""
from __future__ import annotations

import hashlib
import io

from backend.annotate import campaigns, db, service
from backend.core.auth import cli_actor
from backend.core.settings import Settings
from backend.core.store import Store
from backend.generate.job import GenerateConfig, run_job
from backend.generate.seeds import image_seed
from backend.jobs.reporter import Reporter
from backend.toyworld.campaign import gold_items
from tests.support.fake_hub import FakeHub, mirrored, space_settings

ADMIN = cli_actor()
PUBLIC = {"config": {"gold_rate": 0.2, "gold_items": 5, "overlap": 1, "tasks_per_session": 10},
          "n_items": 3, "seed": 0}  # seed: the default of `campaign create` and of the generate job


def create_and_draw(settings: Settings, name: str) -> None:
    """The campaign as `campaign create` makes it, its images drawn by the generate job with its default seed."""
    service.create_campaign(ADMIN, name, "toyworld", settings, **PUBLIC)
    draw(settings, name)


def draw(settings: Settings, name: str) -> None:
    run_job(GenerateConfig.from_dict({"campaign": name, "preset": "toyworld", "db": str(settings.db),
                                      "data_dir": str(settings.data_dir)}), Reporter(out=io.StringIO()))


def gold_of(settings: Settings, name: str) -> dict:
    """What a gold answer key is made of: the gold items' captions and truth, their images' SHA-256 per slot."""
    campaign_id = campaigns.get(settings.db, name)["id"]
    items = db.rows(settings.db, "select id, caption, negative_caption, image, truth from items where campaign_id = ? "
                                 "and gold = 1 order by position", (campaign_id,))
    images = db.rows(settings.db, "select c.item_id, c.slot, c.sha256 from candidates c join items i on "
                                  "i.id = c.item_id where i.campaign_id = ? and i.gold = 1 order by c.item_id, c.slot",
                     (campaign_id,))
    folder = campaigns.campaign_dir(settings.data_dir, name)
    originals = [hashlib.sha256((folder / item["image"]).read_bytes()).hexdigest() for item in items]
    return {"items": [(i["caption"], i["negative_caption"], i["truth"]) for i in items], "originals": originals,
            "images": [(i["slot"], i["sha256"]) for i in images]}


def test_two_campaigns_with_the_same_public_parameters_get_different_gold(tmp_path):
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path / "lab")})
    Store(settings.db)
    create_and_draw(settings, "first")
    create_and_draw(settings, "second")
    first, second = gold_of(settings, "first"), gold_of(settings, "second")
    assert len(first["items"]) == 5 and len(first["images"]) == 5 * 4
    assert first["items"] != second["items"]
    assert not set(first["originals"]) & set(second["originals"])
    assert not {sha for _, sha in first["images"]} & {sha for _, sha in second["images"]}
    # the red-team's rebuild from the public code (the gold hook at the old public seed, seed + 1): no match
    rebuilt = gold_items(5, PUBLIC["seed"] + 1, tmp_path / "rebuild")
    rebuilt_originals = {hashlib.sha256((tmp_path / "rebuild" / item.image).read_bytes()).hexdigest()
                         for item in rebuilt}
    assert not rebuilt_originals & set(first["originals"] + second["originals"])
    assert not {(item.caption, item.negative_caption) for item in rebuilt} >= \
        {(caption, negative) for caption, negative, _ in first["items"]}
    # nor the job's public seed: no gold image was drawn from image_seed(seed, item, slot)
    drawn = db.rows(settings.db, "select c.item_id, c.slot, c.seed from candidates c join items i on i.id = c.item_id "
                                 "where i.gold = 1")
    assert drawn and not [row for row in drawn if row["seed"] == image_seed(0, row["item_id"], row["slot"])]
    secrets = db.rows(settings.db, "select secret from campaigns order by id")
    assert all(len(row["secret"]) == 64 for row in secrets) and secrets[0] != secrets[1]


def test_a_campaign_restored_from_its_backup_keeps_its_gold_and_redraws_the_same_gold_images(tmp_path):
    hub = FakeHub()
    settings = space_settings(tmp_path / "first-disk")
    Store(settings.db)
    with mirrored(settings, hub) as backup:
        create_and_draw(settings, "study")  # the secret is made with the campaign: nobody joined yet
        backup.flush()
    before = gold_of(settings, "study")
    secret = db.rows(settings.db, "select secret from campaigns")[0]["secret"]

    fresh = space_settings(tmp_path / "second-disk")  # the Space restarted on an empty disk
    Store(fresh.db)
    with mirrored(fresh, hub):  # restores the campaign
        pass
    assert db.rows(fresh.db, "select secret from campaigns")[0]["secret"] == secret
    assert gold_of(fresh, "study") == before
    # the gold images lost (rows and files), the generate job draws them again from the restored secret: the same
    lost = db.rows(fresh.db, "select c.id, c.path, c.display_path from candidates c join items i on i.id = c.item_id "
                             "where i.gold = 1")
    folder = campaigns.campaign_dir(fresh.data_dir, "study")
    for row in lost:
        (folder / row["path"]).unlink(missing_ok=True)
        (folder / row["display_path"]).unlink(missing_ok=True)
    with db.write(fresh.db) as conn:
        conn.executemany("delete from candidates where id = ?", [(row["id"],) for row in lost])
    draw(fresh, "study")
    assert gold_of(fresh, "study") == before
