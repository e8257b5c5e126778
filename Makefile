# Two entry points for a fresh machine: `make run` and `make test`.
# Both create the environment first (scripts/setup.sh is idempotent).
export NLTK_DATA := $(CURDIR)/.cache/nltk_data
export GRADIO_ANALYTICS_ENABLED := False
PY := .venv/bin/python

.PHONY: setup run test test-all bench space-check
setup:
	@scripts/setup.sh

run: setup
	$(PY) app.py

test: setup
	$(PY) -m pytest -m "not slow"

test-all: setup
	$(PY) -m pytest

bench: setup
	$(PY) bench/probe_latency.py
	$(PY) bench/annotate_load.py
	$(PY) bench/annotate_load.py --crash-after-answers 400

# Reproduce the Hugging Face Space build in a fresh folder and venv, start it as a Space would, check it (CI runs it).
space-check:
	python3 scripts/space_build.py
