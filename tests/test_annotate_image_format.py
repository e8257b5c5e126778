"""Every image an annotator fetches is a display copy in one format: the bytes do not tell the original of a pair
(a PNG or JPEG photo) from the generated image (a WebP display copy), as they did before (issue 22, item 5)."""
from __future__ import annotations

import io

from PIL import Image

from backend.annotate import db
from backend.annotate.images import TaskImages
from backend.core.store import Store
from backend.generate.storage import DISPLAY_MAX_SIDE, display_format, store_image

EXIF_ORIENTATION = 0x0112
ROTATED_90_CW = 6  # a phone photo stored sideways: viewers turn it upright


def held_assignment(store_path, status: str = "held") -> int:
    """One assignment row with `status` (its campaign, item and annotator made for it)."""
    with db.write(store_path) as conn:
        campaign = db.insert(conn, "insert into campaigns (name) values ('study')", ())
        item = db.insert(conn, "insert into items (campaign_id, stage) values (?, 'ambiguity')", (campaign,))
        annotator = db.insert(conn, "insert into annotators (campaign_id, external_id) values (?, 'p')", (campaign,))
        return db.insert(conn, "insert into assignments (campaign_id, item_id, stage, annotator_id, status) "
                               "values (?, ?, 'ambiguity', ?, ?)", (campaign, item, annotator, status))


def sideways_jpeg(path) -> None:
    """A 600x300 JPEG whose EXIF says it is shown turned 90 degrees (so a viewer shows it 300x600)."""
    exif = Image.Exif()
    exif[EXIF_ORIENTATION] = ROTATED_90_CW
    Image.new("RGB", (600, 300), "red").save(path, format="JPEG", exif=exif)


def test_the_original_and_the_generated_image_of_a_pair_are_served_in_the_same_format(tmp_path):
    store = tmp_path / "lab.db"
    Store(store)
    folder = tmp_path / "campaigns" / "study"
    (folder / "originals").mkdir(parents=True)
    Image.new("RGB", (640, 480), "blue").save(folder / "originals" / "photo.png")
    sideways_jpeg(folder / "originals" / "phone.jpg")
    _, generated_png, generated_display = store_image(folder, Image.new("RGB", (512, 512), "green"))
    assignment = held_assignment(store)
    images = TaskImages(store)
    names = ("a" * 32, "b" * 32, "c" * 32, "d" * 32)
    images.publish(assignment, folder, names,
                   ("originals/photo.png", "originals/phone.jpg", generated_display, generated_png))

    served = [images.open(name) for name in names]
    fmt, suffix = display_format()
    assert all(path is not None and path.suffix == suffix and path.parent == folder / "display" for path in served)
    assert {Image.open(io.BytesIO(path.read_bytes())).format for path in served} == {fmt}
    assert served[2] == folder / generated_display  # a display copy is served as it is
    with Image.open(served[0]) as photo, Image.open(served[1]) as phone:
        assert photo.size == (DISPLAY_MAX_SIDE, 384)  # the long side brought to the display size
        assert phone.size == (256, DISPLAY_MAX_SIDE)  # upright (300x600), as the browser showed the JPEG
    assert images.open(names[0]) == served[0]  # made once, then served from disk


def test_no_display_copy_is_made_for_a_task_not_held(tmp_path):
    store = tmp_path / "lab.db"
    Store(store)
    folder = tmp_path / "study"
    (folder / "originals").mkdir(parents=True)
    Image.new("RGB", (64, 64), "blue").save(folder / "originals" / "photo.png")
    images = TaskImages(store)
    images.publish(held_assignment(store, status="answered"), folder, ("a" * 32,), ("originals/photo.png",))
    assert images.open("a" * 32) is None
    assert not (folder / "display").exists()
