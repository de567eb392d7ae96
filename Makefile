# gatespec: every target does its own set-up on a fresh machine (through `install`).
# `make -C DIR run` must not announce the directory on stdout (the MCP channel).
MAKEFLAGS += --no-print-directory
PYTHON ?= python3
NPM    ?= npm
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install generate check-generated lint test test-slow ts-build ts-test bench bench-check bench-fuzz run report dist clean train-ranker

install: $(STAMP)

# generated/ is the project folder of the surface's own distribution (gatespec-surface).
# Each long step says so on stderr first (never stdout: `make run`'s is the MCP channel), so
# a client that started `make run` on a fresh clone shows why it waits.
$(STAMP): pyproject.toml generated/pyproject.toml package.json package-lock.json
	@test -x $(PY) || { echo "gatespec: creating the virtual environment $(VENV)" >&2; $(PYTHON) -m venv $(VENV); }
	@echo "gatespec: installing Python packages into $(VENV) (pip; 1-3 minutes the first time)" >&2
	$(PY) -m pip install --quiet -e ./generated -e ".[dev]"
	@echo "gatespec: installing the npm test servers into node_modules (npm ci)" >&2
	$(NPM) ci --no-audit --no-fund --loglevel=error
	@touch $(STAMP)
	@echo "gatespec: installed" >&2

generate: install
	$(PY) -m generator

check-generated: install
	$(PY) -m generator --check
	$(PY) -m generator version-check

report: install
	$(PY) -m generator report
	$(PY) -m generator mutations

lint: install
	$(VENV)/bin/ruff check src generator generated tests bench
	$(VENV)/bin/ruff format --check src generator tests bench
	$(VENV)/bin/mypy src generator generated/gatespec_surface

# The TypeScript surface (generated-ts/, issue 25): compiled with tsc --strict, then the same
# language-neutral vectors under Node's own test runner.
TSC := node_modules/.bin/tsc
NODE ?= node

ts-build: install
	$(TSC) -p generated-ts

ts-test: ts-build
	$(NODE) --test generated-ts/dist/test/*.test.js

test: install ts-test
	$(VENV)/bin/pytest -q -m "not slow"

test-slow: install ts-build
	$(VENV)/bin/pytest -q -m slow

BENCH_STAMP := $(VENV)/.bench-installed

# The bench-only dependencies (FastMCP, the peer proxies) stay out of `make install`.
# Peers that need another mcp than ours (bench/peers.txt) get a venv each under $(VENV)/peers.
$(BENCH_STAMP): $(STAMP) bench/peers.txt
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	@test -x $(VENV)/peers/mcp-proxy/bin/python || $(PYTHON) -m venv $(VENV)/peers/mcp-proxy
	$(VENV)/peers/mcp-proxy/bin/python -m pip install --quiet -r bench/peers.txt
	touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(PY) bench/run.py

# Fails when bench/results/REPORT.md was measured before src/'s last change (bench/stamp.py).
bench-check:
	$(PY) bench/stamp.py

# 100,000 generated invalid inputs per meta-tool (23 min on 2 quiet cores, an hour loaded); `make bench`
# reports the last run.
bench-fuzz: install
	$(PY) bench/fuzz.py --out bench/results/fuzz.json
	$(PY) bench/run.py --only none

TRAIN_STAMP := $(VENV)/.train-installed

# The training-time dependencies (torch, transformers, onnx) stay out of `make install`.
$(TRAIN_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[train]"
	touch $(TRAIN_STAMP)

# Fine-tune the ranker's query tower on the dev data (python -m gatespec.ranking.train: the
# choices by cross-validation, by-server folds deciding whether it ships) and write it with its
# fold figures into ranker/gatespec_ranker (the gatespec-ranker distribution). <= 30 min on 2
# cores; at the lowest priority, the machine being shared.
train-ranker: install $(TRAIN_STAMP)
	GATESPEC_TRAIN_THREADS=2 nice -n 19 $(PY) -m gatespec.ranking.train --out ranker/gatespec_ranker

# sdists and wheels of gatespec-surface and gatespec, built twice and compared, twine-checked,
# and smoke-tested in fresh venvs (tools/dist.py). DIST_PYTHONS="/path/python3.12 …" smoke-tests
# with those interpreters too.
DIST_PYTHONS ?=
dist: install ts-build
	$(PY) tools/dist.py $(foreach p,$(DIST_PYTHONS),--python $(p))

# The gateway in front of real servers (tools/run.json), over stdio. stdout is the MCP channel:
# nothing but the gateway may write to it, so the set-up is silent or goes to stderr, and the
# gateway replaces the shell (exec). Test servers' scratch files live in $(RUN_DIR).
RUN_DIR := $(VENV)/run

run:
	@$(MAKE) -s --no-print-directory install >&2
	@mkdir -p $(RUN_DIR)
	@test -e $(RUN_DIR)/hello.txt || echo "Hello from the filesystem server behind gatespec." > $(RUN_DIR)/hello.txt
	@GATESPEC_ROOT="$(CURDIR)" GATESPEC_RUN_DIR="$(CURDIR)/$(RUN_DIR)" exec $(VENV)/bin/gatespec serve --config tools/run.json

clean:
	rm -rf $(VENV) node_modules dist generated-ts/dist .pytest_cache .mypy_cache .ruff_cache .hypothesis
