"""The admin's campaign actions: who may act, which paths they may name, what each source becomes."""
from __future__ import annotations

import json

import pytest

from backend.annotate import db, service, sources
from backend.core.auth import ADMIN, Actor, PermissionDenied
from backend.core.paths import PathError
from backend.core.store import Store
from tests.support.appserver import workspace_settings
from tests.support.tiny import solid_image

WEB_ADMIN = Actor("admin", ADMIN, "password")  # signed in through the page: paths stay inside the allowed roots
GUEST = Actor("guest")


def sugarcrepe_file(folder, name="swap_att.json"):
    path = folder / name
    path.write_text(json.dumps({"0": {"filename": "000000565045.jpg", "caption": "blue bathroom with two white towels",
                                      "negative_caption": "white bathroom with two blue towels"}}))
    return path


def test_a_sugarcrepe_file_becomes_normalised_items_typed_by_its_name(tmp_path):
    settings = workspace_settings(tmp_path)
    path = sugarcrepe_file(settings.workspace)
    (settings.workspace / "coco").mkdir()
    solid_image((20, 90, 200)).save(settings.workspace / "coco" / "000000565045.jpg")  # the items' images must open
    summary = service.create_campaign(WEB_ADMIN, "sc", "file", settings, path=str(path), images_dir="coco",
                                      config={"gold_items": 2})
    assert (summary["items"], summary["gold_items"]) == (1, 5)  # at least one session's gold tasks (50 x 0.1)
    item = db.rows(settings.db, "select * from items where gold = 0")[0]
    assert (item["caption"], item["negative_caption"]) == ("Blue bathroom with two white towels.",
                                                            "White bathroom with two blue towels.")
    assert (item["type"], item["subtype"]) == ("swap", "att")
    assert item["image"] == str(settings.workspace / "coco" / "000000565045.jpg")  # confined, then resolved


def test_guests_cannot_create_and_web_admins_cannot_name_files_outside_the_allowed_roots(tmp_path):
    settings = workspace_settings(tmp_path / "ws")
    outside = sugarcrepe_file(tmp_path)
    with pytest.raises(PermissionDenied, match="needs an admin"):
        service.create_campaign(GUEST, "c", "toyworld", settings, n_items=2)
    with pytest.raises(PathError, match="outside the allowed folders"):
        service.create_campaign(WEB_ADMIN, "c", "file", settings, path=str(outside))
    assert not Store(settings.db).db["campaigns"].count


def test_generation_refuses_hf_jobs_and_a_model_folder_outside_the_roots(tmp_path):
    settings = workspace_settings(tmp_path / "ws")
    store = Store(settings.db)
    service.create_campaign(WEB_ADMIN, "c", "toyworld", settings, n_items=2, config={"generator": "custom"})
    with pytest.raises(ValueError, match="cannot run on Hugging Face Jobs"):
        service.launch_generation(WEB_ADMIN, "c", settings, store, target="hf", model="stabilityai/sd-turbo")
    (tmp_path / "weights").mkdir()
    with pytest.raises(PathError, match="outside the allowed folders"):
        service.launch_generation(WEB_ADMIN, "c", settings, store, model=str(tmp_path / "weights"))
    with pytest.raises(PathError, match="neither a Hugging Face repo id"):
        service.launch_generation(WEB_ADMIN, "c", settings, store, model="no/such/folder")
    assert store.list_jobs() == []


def test_a_probe_result_gives_one_item_per_negative_the_model_failed_on():
    result = {"rows": [
        {"text": "a dog on a bench", "kind": "original", "m verdict": ""},
        {"text": "a bench on a dog", "kind": "negative", "family": "binding_swap", "subtype": "rel",
         "m verdict": "FAIL: not below original"},
        {"text": "a cat on a bench", "kind": "negative", "family": "replace", "m verdict": "ok"}]}
    items = sources.items_from_probe(result, "dog.jpg")
    assert [(i.caption, i.negative_caption, i.type, i.image) for i in items] == [
        ("a dog on a bench", "a bench on a dog", "binding_swap", "dog.jpg")]
    with pytest.raises(ValueError, match="failed on no negative"):
        sources.items_from_probe({"rows": result["rows"][::2]}, "dog.jpg")
