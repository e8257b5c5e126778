"""The images a participant is shown: opaque per-assignment names, fetched only while the task is held.

The red-team rebuild of issue 22 (the gold images' content hashes, which the public code can compute) is given
its best case here: the SHA-256 and the file name of every image file the campaign holds, as if it had been
rebuilt byte for byte. Not one of them may appear in what a participant's pages show."""
from __future__ import annotations

import hashlib

import httpx
import pytest

from backend.annotate import db, images
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.clients import local_client

pytestmark = pytest.mark.system
IMAGE_SUFFIXES = (".png", ".webp", ".jpg")


def shown_images(outputs) -> list[dict]:
    """The image references among the outputs of /start or /answer."""
    return [value for value in outputs if isinstance(value, dict) and "url" in value]


def token_of(outputs) -> str | None:
    """The task on screen (its assignment id), or None when the session is over."""
    tokens = [value for value in outputs if isinstance(value, str) and value.isdigit()]
    return tokens[-1] if tokens else None


def test_a_participant_sees_no_rebuildable_name_and_fetches_only_the_images_of_the_task_held(tmp_path):
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    config = CampaignConfig.from_dict({"gold_rate": 0.25, "tasks_per_session": 8, "overlap": 2})
    toy_campaign(settings.db, settings.data_dir, "study", 6, config)
    folder = settings.data_dir / "campaigns" / "study"
    files = [path for path in folder.rglob("*") if path.suffix in IMAGE_SUFFIXES]
    rebuilt = {hashlib.sha256(path.read_bytes()).hexdigest() for path in files} | {path.stem for path in files}
    gold_files = {row["path"] for row in db.rows(settings.db, "select c.path from candidates c join items i on "
                                                            "i.id = c.item_id where i.gold = 1")}
    assert gold_files and len(rebuilt) >= len(files)
    with annotate_app(settings) as url:
        alice, bob = (local_client(url, download_files=False) for _ in range(2))
        outputs, seen, answered_names, gold_tasks = alice.predict("study", "alice", api_name="/start"), [], [], 0
        bob_outputs = bob.predict("study", "bob", api_name="/start")
        while (token := token_of(outputs)) is not None:
            refs = shown_images(outputs)
            assert refs and all(ref["url"].startswith("/task-image/") for ref in refs)
            for ref in refs:  # alice fetches her task's images
                fetched = httpx.get(url.rstrip("/") + ref["url"])
                assert fetched.status_code == 200 and fetched.headers["cache-control"] == "private, no-store"
            held = db.rows(settings.db, "select i.gold, i.image from assignments a join items i on i.id = a.item_id "
                                        "where a.id = ?", (int(token),))[0]
            gold_tasks += held["gold"]
            # bob: the campaign files of alice's task by path (Gradio's file route) are refused
            for path in [folder / held["image"], *(folder / p for p in gold_files)]:
                assert httpx.get(f"{url}gradio_api/file={path}").status_code == 403
            seen += refs
            answered_names += [ref["path"] for ref in refs]
            outputs = alice.predict(token, "1", api_name="/answer")
        assert gold_tasks >= 1  # gold tasks came, and their names matched nothing either
        shown_text = " ".join(f"{ref['path']} {ref['url']} {ref['orig_name']}" for ref in seen)
        assert [name for name in rebuilt if name in shown_text] == []
        assert not any(word in shown_text for word in ("originals", "display", "images/", *IMAGE_SUFFIXES))
        assert len({ref["path"] for ref in seen}) == len(seen)  # one name per assignment and slot
        # once answered, a name serves nothing: not to alice, not to bob who got hold of it
        for name in answered_names:
            assert httpx.get(f"{url}task-image/{name}").status_code == 404
        # bob's own task is his to fetch; names bob could make up (without the campaign's secret) are not
        bob_refs = shown_images(bob_outputs)
        assert bob_refs and all(httpx.get(url.rstrip("/") + ref["url"]).status_code == 200 for ref in bob_refs)
        bob_token = int(token_of(bob_outputs))
        guesses = [images.image_name(b"\0" * 32, bob_token - 1, 0), hashlib.sha256(b"x").hexdigest()[:32],
                   "0" * 32, "../../lab.db", *(name[:32] for name in rebuilt)]
        assert all(httpx.get(f"{url}task-image/{guess}").status_code == 404 for guess in guesses)


def test_alices_held_image_is_not_fetched_from_bobs_page_by_any_name_bob_has(tmp_path):
    """While alice holds a task, bob's pages hold no name of its images, and nothing bob can compute opens them."""
    settings = workspace_settings(tmp_path)
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 4, CampaignConfig.from_dict({"gold_rate": 0, "overlap": 2}))
    with annotate_app(settings) as url:
        alice, bob = (local_client(url, download_files=False) for _ in range(2))
        alices = {ref["path"] for ref in shown_images(alice.predict("study", "alice", api_name="/start"))}
        bobs = {ref["path"] for ref in shown_images(bob.predict("study", "bob", api_name="/start"))}
        assert alices and bobs and not alices & bobs
        secret_free = [images.image_name(b"", int(token), slot) for token in range(1, 40) for slot in range(4)]
        assert not alices & set(secret_free)
        assert all(httpx.get(f"{url}task-image/{name}").status_code == 404 for name in secret_free)
