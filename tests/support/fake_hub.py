"""A fake Hugging Face Hub at the API boundary: the HfApi methods CommitScheduler and `backup.restore` call.

The "remote repo" is a dict of bytes, so tests see exactly what was committed. A hub can be kept in a file
(`save`, `load`) for the app in a process of its own (`CHILD`: its real entry point, backed up to that file).
"""
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx2
from huggingface_hub.errors import RepositoryNotFoundError
from huggingface_hub.utils import filter_repo_objects

TOKEN = "hf_test"


def space_settings(disk: Path):
    """Settings of a Space whose campaigns are backed up to the fake hub's ``lab/backup``, on `disk`."""
    from backend.core.settings import Settings

    return Settings.load(env={"COMPLAB_WORKSPACE": str(disk), "COMPLAB_BACKUP_REPO": "lab/backup", "HF_TOKEN": TOKEN})


@contextmanager
def mirrored(settings, hub: "FakeHub"):
    """The campaign backup of `settings` running against `hub` (restoring first, as at a Space's start), stopped
    at the end."""
    from backend.annotate import mirror

    backup = mirror.start(settings, api=FakeHfApi(hub), every_minutes=0.002)
    try:
        yield backup
    finally:
        mirror.stop(backup)


class FakeHub:
    """The remote side: repos and their files, shared by every fake client (every "process")."""

    def __init__(self):
        self.repos: dict[str, dict] = {}
        self.lock = threading.Lock()
        self.torn_uploads = 0  # uploaded blobs that end in the middle of a line


class FakeHfApi:
    """Exactly the HfApi methods CommitScheduler (create_repo, run_as_future, create_commit)
    and restore (snapshot_download) call, with the real signatures' keywords."""

    def __init__(self, hub: FakeHub):
        self.hub = hub
        self.pool = ThreadPoolExecutor(max_workers=1)  # HfApi runs futures one at a time too
        self.calls: list[str] = []

    def create_repo(self, repo_id, *, private=None, repo_type=None, exist_ok=False, token=None):
        self.calls.append("create_repo")
        assert repo_type == "dataset" and exist_ok
        with self.hub.lock:
            self.hub.repos.setdefault(repo_id, {"private": private, "files": {}, "commits": 0})
        return SimpleNamespace(repo_id=repo_id)

    def run_as_future(self, fn, *args, **kwargs):
        return self.pool.submit(fn, *args, **kwargs)

    def create_commit(self, repo_id, operations, *, commit_message, repo_type=None, revision=None):
        self.calls.append("create_commit")
        assert repo_type == "dataset"
        blobs = {}
        for operation in operations:
            with operation.as_file() as handle:
                blobs[operation.path_in_repo] = handle.read()
        with self.hub.lock:
            repo = self.hub.repos[repo_id]
            for name, blob in blobs.items():
                self.hub.torn_uploads += bool(blob) and not blob.endswith(b"\n")
                repo["files"][name] = blob
            repo["commits"] += 1
        return SimpleNamespace(commit_message=commit_message)

    def snapshot_download(self, repo_id, *, repo_type=None, allow_patterns=None, local_dir=None, token=None):
        self.calls.append("snapshot_download")
        assert repo_type == "dataset" and token == TOKEN
        with self.hub.lock:
            if repo_id not in self.hub.repos:
                url = f"https://huggingface.co/api/datasets/{repo_id}"
                raise RepositoryNotFoundError("404 Repository Not Found", response=httpx2.Response(
                    404, request=httpx2.Request("GET", url)))
            files = dict(self.hub.repos[repo_id]["files"])
        for name in filter_repo_objects(files, allow_patterns=allow_patterns):
            target = os.path.join(local_dir, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(files[name])
        return str(local_dir)


# The child: the real entry point, its backup talking to a fake Hub kept in a file (bytes as latin-1 text, `save`
# and `load`) that the test names in TEST_HUB_FILE, saved there at each commit.
CHILD = """
    import json, os, sys
    from pathlib import Path
    from tests.support.fake_hub import FakeHfApi, FakeHub
    import app
    from backend.annotate import mirror

    HUB = Path(os.environ["TEST_HUB_FILE"])
    hub = FakeHub()
    hub.repos.update({name: {**repo, "files": {k: v.encode("latin-1") for k, v in repo["files"].items()}}
                      for name, repo in json.loads(HUB.read_text()).items()})

    class SavedApi(FakeHfApi):
        def create_commit(self, *args, **kwargs):
            result = super().create_commit(*args, **kwargs)
            with self.hub.lock:
                text = json.dumps({name: {**repo, "files": {k: v.decode("latin-1") for k, v in repo["files"].items()}}
                                   for name, repo in self.hub.repos.items()})
            HUB.with_suffix(".tmp").write_text(text)
            os.replace(HUB.with_suffix(".tmp"), HUB)
            return result

    start = mirror.start
    mirror.start = lambda settings, api=None, every_minutes=5: start(settings, api=SavedApi(hub), every_minutes=60)
    app.main(["--mode", "annotate"])
"""


def save(hub: FakeHub, path: Path) -> None:
    path.write_text(json.dumps({name: {**repo, "files": {k: v.decode("latin-1") for k, v in repo["files"].items()}}
                                for name, repo in hub.repos.items()}))


def load(path: Path) -> FakeHub:
    hub = FakeHub()
    hub.repos.update({name: {**repo, "files": {k: v.encode("latin-1") for k, v in repo["files"].items()}}
                      for name, repo in json.loads(path.read_text()).items()})
    return hub
