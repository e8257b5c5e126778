"""Every image an annotator fetches is a display copy in one format, and the images of one task share one size:
neither the bytes (a PNG or JPEG photo beside a WebP display copy) nor the shape (a 640x480 photo beside a square
generated image) tell the original of a pair from the generated image, as they did before (issue 22, item 5)."""
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
        conn.execute("insert or ignore into campaigns (name) values ('study')")
        campaign = conn.execute("select id from campaigns where name = 'study'").fetchone()[0]
        item = db.insert(conn, "insert into items (campaign_id, stage) values (?, 'ambiguity')", (campaign,))
        annotator = db.insert(conn, "insert into annotators (campaign_id, external_id) values (?, ?)",
                              (campaign, f"p{item}"))
        return db.insert(conn, "insert into assignments (campaign_id, item_id, stage, annotator_id, status) "
                               "values (?, ?, 'ambiguity', ?, ?)", (campaign, item, annotator, status))


def sideways_jpeg(path) -> None:
    """A 600x300 JPEG whose EXIF says it is shown turned 90 degrees (so a viewer shows it 300x600)."""
    exif = Image.Exif()
    exif[EXIF_ORIENTATION] = ROTATED_90_CW
    Image.new("RGB", (600, 300), "red").save(path, format="JPEG", exif=exif)


def campaign_folder(tmp_path):
    """A campaign folder with a 640x480 photo, a phone photo shown 300x600, and a generated 512x512 image stored as
    generation stores it (PNG + display copy)."""
    folder = tmp_path / "campaigns" / "study"
    (folder / "originals").mkdir(parents=True)
    photo = Image.new("RGB", (640, 480), "blue")
    photo.paste((255, 255, 0), (0, 0, 40, 480))  # a yellow band at the left edge: the photo is never cut
    photo.save(folder / "originals" / "photo.png")
    sideways_jpeg(folder / "originals" / "phone.jpg")
    generated = Image.new("RGB", (512, 512), "green")
    generated.paste((255, 0, 0), (0, 0, 512, 32))  # a red band at the top: cut away to fit a 4:3 photo
    _, generated_png, generated_display = store_image(folder, generated)
    return folder, generated_png, generated_display


def served(store, folder, task_paths):
    """Publish one held task of `task_paths`; what each of its names serves (all fetched)."""
    images = TaskImages(store)
    names = tuple(f"{slot:032x}" for slot in range(len(task_paths)))
    images.publish(held_assignment(store), folder, names, task_paths)
    return [images.open(name) for name in names]


def test_the_original_and_the_generated_image_of_a_pair_are_served_in_one_format_and_one_size(tmp_path):
    store = tmp_path / "lab.db"
    Store(store)
    folder, generated_png, generated_display = campaign_folder(tmp_path)
    fmt, suffix = display_format()
    for original, shown_size in (("originals/photo.png", (DISPLAY_MAX_SIDE, 384)),
                                 ("originals/phone.jpg", (256, DISPLAY_MAX_SIDE))):  # upright, as browsers show it
        for generated in (generated_display, generated_png):
            pair = served(store, folder, (original, generated))
            assert all(path.suffix == suffix and path.parent == folder / "display" for path in pair)
            assert {Image.open(io.BytesIO(path.read_bytes())).format for path in pair} == {fmt}
            with Image.open(pair[0]) as photo, Image.open(pair[1]) as image:
                assert photo.size == image.size == shown_size, (original, generated)
                if original.endswith("photo.png"):
                    assert photo.getpixel((2, 192))[:2] > (200, 200)  # the photo kept its left edge
                    assert image.getpixel((256, 2))[1] > 100  # the generated image lost its red top
    assert len(set(served(store, folder, ("originals/photo.png", generated_png)))) == 2  # made once, then reused


def test_a_task_of_generated_images_alone_is_served_its_display_copies_as_stored(tmp_path):
    store = tmp_path / "lab.db"
    Store(store)
    folder, generated_png, generated_display = campaign_folder(tmp_path)
    assert served(store, folder, (generated_display, generated_display)) == [folder / generated_display] * 2
    with Image.open(served(store, folder, ("originals/photo.png",))[0]) as alone:
        assert alone.size == (DISPLAY_MAX_SIDE, 384)  # a single image: its long side brought to the display size


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
