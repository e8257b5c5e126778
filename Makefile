# Two entry points for a fresh machine: `make run` and `make test`.
# Both create the environment first (scripts/setup.sh is idempotent).
export NLTK_DATA := $(CURDIR)/.cache/nltk_data
export GRADIO_ANALYTICS_ENABLED := False
unexport PYTHONDONTWRITEBYTECODE  # the project's own modules are compiled once, not at every start
PY := .venv/bin/python

.PHONY: setup run test test-unit test-all lint bench space-check
# Tiers (docs/TESTING.md): unit tests start no process, server or browser; `system` ones do; `slow` ones train or
# measure for minutes. `make test` (what CI runs) is unit + system; `make test-unit` is the inner loop.
# --dist loadfile: a file's tests run in one worker, so a module-scoped fixture (an app, a finished sweep, a Space's
# process: 5 to 27 s each) is built once, not in each worker that drew one of its tests; --no-loadscope-reorder
# keeps the order tests/support/tiers.py sets (files with system tests first, the short unit files last).
XDIST := -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder
setup:
	@scripts/setup.sh

run: setup
	$(PY) app.py

test: setup
	$(PY) -m pytest $(XDIST) -m "not slow"

test-unit: setup
	$(PY) -m pytest $(XDIST) -m "not system and not slow"

test-all: setup
	$(PY) -m pytest $(XDIST)

# The rule set ruff enforces, and mypy's settings, are in pyproject.toml (CI runs this before the tests).
lint: setup
	.venv/bin/ruff check backend ui app.py
	.venv/bin/mypy

bench: setup
	$(PY) bench/probe_latency.py
	$(PY) bench/annotate_load.py
	$(PY) bench/annotate_load.py --crash-after-answers 400

# Reproduce the Hugging Face Space build in a fresh folder and venv, start it as a Space would, check it (CI runs it).
space-check:
	python3 scripts/space_build.py
