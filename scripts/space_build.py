#!/usr/bin/env python3
"""Reproduce the Hugging Face Space (Gradio SDK) build of this repo here, in a fresh directory, and check it.

Phases (each timed): copy the repo's files into a temporary folder (the working tree's tracked and untracked,
not ignored, files: what a push would send once committed; ``--ref REF`` takes a commit instead); create a fresh
venv with the card's ``python_version``; run ``scripts/install_runtime.sh`` the way the builder installs (apt
``packages.txt``, then the builder's pip steps with the card's ``sdk_version``; no WordNet step, which a Space
never runs); check the environment (``pip check``, no test-only package); start ``app.py`` with the environment
variables a Space sets, OAuth pointed at a fake OpenID provider on loopback (there is no network here); check
that the app answers, shows "Sign in with Hugging Face", that ``/login/huggingface`` redirects to the provider
(the real OAuth path, not Gradio's local mock) and that WordNet was laid out on first use.

Exit status 0 when every check passes; otherwise 1 with the failed check named. Stdlib only: runs on any python3.
Usage: python3 scripts/space_build.py [--ref REF] [--keep] [--timeout SECONDS]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV_ONLY = ("pytest", "playwright", "crowdkit")  # must not be importable in the Space's environment
LOGIN_TEXT = "Sign in with Hugging Face"
SPACE = {"SPACE_AUTHOR_NAME": "complab", "SPACE_REPO_NAME": "space-check", "SPACE_TITLE": "Compositionality Lab"}
CLIENT_ID, CLIENT_SECRET = "space-check-client", "space-check-secret"


class CheckFailed(Exception):
    """A check of the build failed; the message says which and what was seen."""


def card() -> dict[str, str | list[str]]:
    """The README card's top-level keys (strings, or lists of strings): enough for this script, stdlib only."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not match:
        raise CheckFailed("README.md has no front matter (the Space card)")
    values: dict[str, str | list[str]] = {}
    key = None
    for line in match.group(1).splitlines():
        if item := re.match(r"\s+-\s+(.*)", line):
            values.setdefault(key, [])
            values[key].append(item.group(1).strip().strip("\"'"))
        elif pair := re.match(r"(\w+):\s*(.*)", line):
            key, value = pair.groups()
            if value:
                values[key] = value.strip().strip("\"'")
    return values


class Timer:
    """Wall-clock time of each phase, printed as a table at the end."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, float]] = []

    @contextmanager
    def phase(self, name: str):
        print(f"[space-build] {name} ...", flush=True)
        start = time.monotonic()
        try:
            yield
        finally:
            self.phases.append((name, time.monotonic() - start))
            print(f"[space-build] {name}: {self.phases[-1][1]:.1f} s", flush=True)

    def report(self) -> None:
        print("\n[space-build] phase                      seconds")
        for name, seconds in self.phases:
            print(f"[space-build] {name:<26} {seconds:8.1f}")
        print(f"[space-build] {'total':<26} {sum(s for _, s in self.phases):8.1f}")


def copy_repo(dest: Path, ref: str | None) -> int:
    """The files a push would send: a commit's (``ref``), else the working tree's tracked and unignored files."""
    dest.mkdir(parents=True)
    if ref:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return sum(1 for path in dest.rglob("*") if path.is_file())
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.split("\0")
    files = [name for name in listed if name and (ROOT / name).is_file()]  # deleted but not yet committed: gone
    for name in files:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)
    return len(files)


def interpreter(version: str) -> str:
    """A ``python3.X`` on PATH matching the card's ``python_version`` (the builder's base image)."""
    minor = ".".join(version.split(".")[:2])
    found = shutil.which(f"python{minor}")
    if not found:
        raise CheckFailed(f"no python{minor} on PATH: the card's python_version is {version}")
    return found


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, what: str = "") -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise CheckFailed(f"{what or command[0]} failed ({result.returncode}):\n{result.stdout[-3000:]}"
                          f"{result.stderr[-3000:]}")
    return result.stdout


def install_env() -> dict[str, str]:
    """The caller's environment (package index settings, PATH) without what would leak this checkout's set-up."""
    leaks = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "NLTK_DATA", "PIP_REQUIRE_VIRTUALENV", "PIP_USER")
    return {key: value for key, value in os.environ.items() if key not in leaks}


def check_environment(python: Path, app_dir: Path) -> None:
    run([str(python), "-m", "pip", "check"], app_dir, what="pip check (conflicting requirements)")
    probe = "import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m)))"
    present = run([str(python), "-c", probe, *DEV_ONLY], app_dir).split()
    if present:
        raise CheckFailed(f"test-only packages are installed by requirements.txt: {', '.join(present)}")


class FakeProvider(ThreadingHTTPServer):
    """A stand-in for huggingface.co's OpenID provider: its metadata only (nothing signs in here)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ProviderHandler)
        self.requests: list[str] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.authorize = self.url + "/oauth/authorize"
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()  # quick to shut down

    def metadata(self) -> dict:
        return {"issuer": self.url, "authorization_endpoint": self.authorize,
                "token_endpoint": self.url + "/oauth/token", "userinfo_endpoint": self.url + "/oauth/userinfo",
                "jwks_uri": self.url + "/oauth/jwks", "response_types_supported": ["code"],
                "scopes_supported": ["openid", "profile"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"]}


class _ProviderHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # http.server's name
        self.server.requests.append(self.path)
        if self.path != "/.well-known/openid-configuration":
            self.send_error(404)
            return
        body = json.dumps(self.server.metadata()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet: the checks report what matters
        pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def space_env(python: Path, home: Path, port: int, provider: FakeProvider, scopes: list[str]) -> dict[str, str]:
    """What a Gradio Space's container sets (plus our admins setting), built from nothing: no caller leaks."""
    space_id = f"{SPACE['SPACE_AUTHOR_NAME']}/{SPACE['SPACE_REPO_NAME']}"
    return {"PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1", "SYSTEM": "spaces", "SPACE_ID": space_id, **SPACE,
            "SPACE_HOST": f"{SPACE['SPACE_AUTHOR_NAME']}-{SPACE['SPACE_REPO_NAME']}.hf.space",
            "ACCELERATOR": "none", "CPU_CORES": "2", "MEMORY": "16Gi",
            "GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": str(port),
            "OAUTH_CLIENT_ID": CLIENT_ID, "OAUTH_CLIENT_SECRET": CLIENT_SECRET,
            "OAUTH_SCOPES": " ".join(["openid", "profile", *scopes]), "OPENID_PROVIDER_URL": provider.url,
            "COMPLAB_ADMINS": "complab-admins", "HF_HUB_OFFLINE": "1"}


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str, timeout: float = 10) -> tuple[int, dict[str, str], str]:
    """Status, headers and body of a GET, redirects not followed."""
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8", "replace")


def wait_until_up(app: subprocess.Popen, url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise CheckFailed(f"app.py exited with status {app.returncode} before answering:\n{tail(log)}")
        try:
            if get(url, timeout=5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(1)
    raise CheckFailed(f"app.py did not answer on {url} within {timeout:.0f} s:\n{tail(log)}")


def tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def check_page(base: str) -> str:
    """The page answers, and its config (what the browser renders) has our title and the Hugging Face sign-in."""
    status, _, html = get(base + "/")
    if status != 200 or "<html" not in html:
        raise CheckFailed(f"GET / gave {status}, not the app's page")
    status, _, body = get(base + "/config")
    config = json.loads(body) if status == 200 else {}
    if config.get("title") != "Compositionality Lab":
        raise CheckFailed(f"GET /config gave {status} with page title {config.get('title')!r}")
    if not any(c.get("props", {}).get("value") == LOGIN_TEXT for c in config.get("components", [])):
        raise CheckFailed(f"the page has no '{LOGIN_TEXT}' button: the hf-oauth sign-in policy was not taken")
    return config["title"]


def check_oauth(base: str, env: dict[str, str], provider: FakeProvider) -> str:
    status, headers, _ = get(base + "/login/huggingface")
    location = headers.get("location") or headers.get("Location") or ""
    target = urllib.parse.urlsplit(location)
    query = urllib.parse.parse_qs(target.query)
    expected_callback = f"https://{env['SPACE_HOST']}/login/callback"
    problems = [
        status not in (302, 307) and f"status {status} (a redirect was expected)",
        f"{target.scheme}://{target.netloc}{target.path}" != provider.authorize
        and f"redirects to {location!r}, not the provider's authorization endpoint {provider.authorize}",
        query.get("client_id") != [CLIENT_ID] and f"client_id {query.get('client_id')}",
        not (query.get("redirect_uri") or [""])[0].startswith(expected_callback)
        and f"redirect_uri {query.get('redirect_uri')} (expected {expected_callback}...)",
        query.get("scope") != [env["OAUTH_SCOPES"]] and f"scope {query.get('scope')}",
        "/.well-known/openid-configuration" not in provider.requests
        and "the app never read the provider's /.well-known/openid-configuration",
    ]
    problems = [problem for problem in problems if problem]
    if problems:
        raise CheckFailed("GET /login/huggingface did not take the OAuth path: " + "; ".join(problems))
    return location


def check_wordnet(app_dir: Path, timeout: float) -> Path:
    lexnames = app_dir / ".cache" / "nltk_data" / "corpora" / "wordnet" / "lexnames"
    deadline = time.monotonic() + timeout
    while not lexnames.is_file():
        if time.monotonic() > deadline:
            raise CheckFailed(f"WordNet was not laid out on first use ({lexnames} missing after {timeout:.0f} s)")
        time.sleep(1)
    return lexnames.parent


@contextmanager
def running_app(python: Path, app_dir: Path, env: dict[str, str], log: Path, timer: Timer):
    """`python app.py` as the Space's container starts it; stopped (and timed) on the way out, whatever happened."""
    with log.open("w") as out:
        app = subprocess.Popen([str(python), "app.py"], cwd=app_dir, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield app
    finally:
        with timer.phase("stop app.py"):
            app.terminate()
            try:
                app.wait(timeout=20)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait()


def build_and_check(work: Path, args: argparse.Namespace, timer: Timer) -> None:
    space = card()
    app_dir, venv, home = work / "app", work / "venv", work / "home"
    with timer.phase("copy repository"):
        print(f"[space-build] {copy_repo(app_dir, args.ref)} files into {app_dir}")
    with timer.phase("fresh venv"):
        run([interpreter(str(space["python_version"])), "-m", "venv", str(venv)], work, what="python -m venv")
    python = venv / "bin" / "python"
    with timer.phase("install (apt + pip)"):
        run(["bash", "scripts/install_runtime.sh", "--python", str(python), "--sdk-version",
             str(space["sdk_version"]), "apt", "pip"], app_dir, install_env(), what="scripts/install_runtime.sh")
    with timer.phase("check environment"):
        check_environment(python, app_dir)
    home.mkdir()
    provider = FakeProvider()
    env = space_env(python, home, free_port(), provider, list(space.get("hf_oauth_scopes") or []))
    base = f"http://127.0.0.1:{env['GRADIO_SERVER_PORT']}"
    try:
        with running_app(python, app_dir, env, work / "app.log", timer) as app:
            with timer.phase("start app.py"):
                wait_until_up(app, base + "/", work / "app.log", args.timeout)
            with timer.phase("checks"):
                print(f"[space-build] ok: GET / is 200, title {check_page(base)!r}, '{LOGIN_TEXT}' shown")
                print(f"[space-build] ok: /login/huggingface redirects to {check_oauth(base, env, provider)}")
                print(f"[space-build] ok: WordNet laid out on first use in {check_wordnet(app_dir, args.timeout)}")
    finally:
        provider.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", help="build this commit (git archive) instead of the working tree's files")
    parser.add_argument("--keep", action="store_true", help="keep the build folder (its path is printed)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds the app may take to answer")
    args = parser.parse_args(argv)
    timer = Timer()
    work = Path(tempfile.mkdtemp(prefix="complab-space-build-"))
    failure = None
    try:
        build_and_check(work, args, timer)
    except CheckFailed as error:
        failure = error
    finally:
        if args.keep:
            print(f"[space-build] build kept in {work}")
        else:  # in the background: removing the venv's ~5 GB took 26 s that CI's next step waited for
            subprocess.Popen(["rm", "-rf", str(work)], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"[space-build] removing {work} in the background")
    timer.report()
    if failure:
        print(f"\n[space-build] FAILED: {failure}", file=sys.stderr)
        return 1
    print("[space-build] all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
