#!/usr/bin/env bash
# Install what the app needs at run time, the way the Hugging Face Space (Gradio SDK) builder does it. The one
# install script: the Dockerfile runs it, and so does scripts/space_build.py (CI), so the two cannot drift.
#
# Usage: scripts/install_runtime.sh [--python PY] [--sdk-version V] [STEP...]
#   STEP is any of: apt pip wordnet (default: all three, in that order)
#   apt      the Debian packages of packages.txt (apt-get; root, or sudo)
#   pip      what the Space builder installs into PY (default python3): first its own base packages, then
#            requirements.txt together with gradio[oauth,mcp]==V, uvicorn, websockets and spaces.
#            V defaults to the gradio pin of requirements.txt (README.md's sdk_version equals it: tests/test_deploy.py).
#   wordnet  Debian's WordNet laid out as NLTK's corpus in .cache/nltk_data (python -m backend.core.wordnet_data).
#            A Space runs no such step: the app does it on first use.
# Run from anywhere; it works in the checkout that holds it.
set -euo pipefail
cd "$(dirname "$0")/.."

py=python3
sdk_version=""
steps=()
while [ $# -gt 0 ]; do
  case "$1" in
    --python) py=$2; shift 2;;
    --sdk-version) sdk_version=$2; shift 2;;
    apt|pip|wordnet) steps+=("$1"); shift;;
    *) echo "install_runtime.sh: unknown argument '$1' (see the usage at the top of the script)" >&2; exit 2;;
  esac
done
[ ${#steps[@]} -gt 0 ] || steps=(apt pip wordnet)

say() { echo "[install_runtime] $*"; }

install_apt() {
  local wanted missing="" p
  wanted=$(sed -e 's/#.*//' packages.txt | xargs)
  for p in $wanted; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -z "$missing" ]; then say "Debian packages already installed: $wanted"; return; fi
  say "installing Debian packages:$missing"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  $sudo rm -rf /var/lib/apt/lists/*
}

install_pip() {
  if [ -z "$sdk_version" ]; then
    sdk_version=$(sed -n 's/^gradio\(\[[^]]*\]\)\{0,1\}==\([^ #]*\).*/\2/p' requirements.txt)
    [ -n "$sdk_version" ] || { echo "install_runtime.sh: no gradio==VERSION pin in requirements.txt" >&2; exit 1; }
  fi
  say "pip: the Space builder's base packages, into $py"
  "$py" -m pip install -q --upgrade pip
  "$py" -m pip install -q datasets "huggingface-hub>=0.30" "hf-transfer>=0.1.4" "protobuf<4" "click<8.1"
  say "pip: requirements.txt with gradio[oauth,mcp]==$sdk_version, uvicorn, websockets, spaces"
  "$py" -m pip install -q -r requirements.txt "gradio[oauth,mcp]==$sdk_version" "uvicorn>=0.14.0" "websockets>=10.4" spaces
}

install_wordnet() {
  say "WordNet: $("$py" -m backend.core.wordnet_data .cache/nltk_data)"
}

for step in "${steps[@]}"; do "install_$step"; done
