#!/usr/bin/env bash
# Create or update everything the app and tests need, idempotently:
# Debian packages (WordNet data, Chromium for browser tests), a local venv with
# the pinned requirements, and a project-local NLTK data dir for WordNet.
# Re-runs are cheap: each step is skipped when its stamp is current.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

apt_packages="wordnet-base wordnet-sense-index chromium"
missing=""
for p in $apt_packages; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "[setup] installing Debian packages:$missing"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.requirements.sha
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing Python requirements into .venv (first run downloads torch: a few minutes)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.txt
  echo "$want" > "$stamp"
fi

scripts/setup_wordnet.sh .cache/nltk_data
