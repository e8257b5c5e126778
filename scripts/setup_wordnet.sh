#!/usr/bin/env bash
# Lay out Debian's WordNet 3.0 as an NLTK corpus: a wrapper for backend/core/wordnet_data.py (the one implementation,
# which the app also runs on first use where no set-up ran, e.g. on a Space).
# Usage: scripts/setup_wordnet.sh [NLTK_DATA_DIR]   (PYTHON picks the interpreter; default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-.venv/bin/python}" -m backend.core.wordnet_data "$@"
