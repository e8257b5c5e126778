"""A campaign survives a Space restart: mirrored to a (fake) dataset repo, restored onto a fresh disk."""
from __future__ import annotations

from backend.annotate import assign, campaigns, db, report
from backend.annotate.campaigns import CampaignConfig, ItemSpec
from backend.core.store import Store
from tests.support.fake_hub import FakeHub, mirrored, space_settings

TABLES = ("campaigns", "items", "candidates", "annotators", "assignments", "answers")


def snapshot(path) -> dict:
    return {table: db.rows(path, f"select * from {table} where {'1' if table != 'assignments' else 'status = ?'} "
                                 "order by id", ("answered",) if table == "assignments" else ())
            for table in TABLES}


def test_campaign_answers_and_images_come_back_after_the_disk_is_lost(tmp_path):
    hub = FakeHub()
    settings = space_settings(tmp_path / "first-disk")
    Store(settings.db)
    with mirrored(settings, hub) as backup:
        folder = campaigns.campaign_dir(settings.data_dir, "c1")
        (folder / "display").mkdir(parents=True)
        campaign_id = campaigns.create(settings.db, "c1", [ItemSpec("a red circle", "a blue circle", image="x.png")],
                                       CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0}), "test")
        item_id = db.rows(settings.db, "select id from items")[0]["id"]
        for slot in range(4):
            (folder / "display" / f"{slot}.webp").write_bytes(b"image %d" % slot)
            campaigns.add_candidate(settings.db, item_id, slot, {"path": f"display/{slot}.webp", "seed": slot})
        me = assign.join(settings.db, campaign_id, "annotator-1")
        assign.submit(settings.db, me, assign.next_task(settings.db, me).assignment_id, "3")
        backup.flush()
    before = snapshot(settings.db)

    fresh = space_settings(tmp_path / "second-disk")  # the Space restarted on an empty disk
    Store(fresh.db)
    with mirrored(fresh, hub):
        pass
    assert snapshot(fresh.db) == before
    assert report.status(fresh.db, "c1")["stages"] == {"selected": 1}
    image = campaigns.campaign_dir(fresh.data_dir, "c1") / "display" / "2.webp"
    assert image.read_bytes() == b"image 2"
    me_again = assign.join(fresh.db, campaign_id, "annotator-1")
    assert me_again == me
    # their session (one task: all that was open when it began) is remembered as done: no repeat, no new session
    assert assign.serve(fresh.db, me) == assign.Ended("done", 1, 1)
    assert assign.next_task(fresh.db, assign.join(fresh.db, campaign_id, "annotator-2")).task == "ambiguity"
