# gatespec: every target does its own set-up on a fresh machine (through `install`).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install generate check-generated lint test test-slow bench run report clean

install: $(STAMP)

$(STAMP): pyproject.toml package.json package-lock.json
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e ".[dev]"
	npm ci --no-audit --no-fund --loglevel=error
	touch $(STAMP)

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

test: install
	$(VENV)/bin/pytest -q -m "not slow"

test-slow: install
	$(VENV)/bin/pytest -q -m slow

BENCH_STAMP := $(VENV)/.bench-installed

# The bench-only dependencies (FastMCP, the peer proxy) stay out of `make install`.
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(PY) bench/run.py

run: install
	$(VENV)/bin/gatespec serve --demo

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache .hypothesis
