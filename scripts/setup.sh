#!/usr/bin/env bash
# Create or update everything the app and tests need, idempotently:
# the runtime Debian packages (packages.txt, through the shared install script) and Chromium for the browser
# tests, a local venv with the pinned requirements (requirements-dev.txt: the runtime pins plus test tools),
# and a project-local NLTK data dir for WordNet.
# Re-runs are cheap: each step is skipped when its stamp is current.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

scripts/install_runtime.sh apt
if ! dpkg -s chromium >/dev/null 2>&1; then  # the browser tests only; not a runtime package
  echo "[setup] installing Debian package: chromium"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.requirements.sha
want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing Python requirements into .venv (first run downloads torch: a few minutes)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements-dev.txt
  # pip skips byte-compiling where PYTHONDONTWRITEBYTECODE is set (CI images often set it): every process would
  # then compile gradio, spaCy and nltk from source at each start (gradio's import: ~9 s instead of ~3 s).
  .venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null || true  # a few packages ship non-Python .py templates
  echo "$want" > "$stamp"
fi

scripts/install_runtime.sh --python .venv/bin/python wordnet
