# Two commands for a fresh Debian machine with Python 3.11:
#   make run   — set up, initialise the store with the bundled data, start the studio
#   make test  — set up, then run the quality gates and the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8501

.PHONY: setup run test lint typecheck pytest bench clean browser

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

run: setup
	$(BIN)/driftbench init
	$(BIN)/python -m pages.common.launch --server.port $(PORT)

browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy core

pytest: setup browser
	$(BIN)/pytest -q

# Every gate runs (so one report shows all problems); the target fails if any gate failed.
test: setup browser
	@status=0; \
	$(BIN)/ruff check . || status=1; \
	$(BIN)/ruff format --check . || status=1; \
	$(BIN)/mypy core || status=1; \
	$(BIN)/pytest -q || status=1; \
	exit $$status

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache
