# The two set-up commands of the README: `make serve` and `make test`; `make install-user`
# puts `live-memory` on PATH for a user (deploy/install-user.sh).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install install-dev test-deps install-user serve test lint typecheck unit bench clean

# Two stamps: `make serve` installs the package alone (its dependencies, no test tools and no
# Ray: about a third of the size), `make test` adds the dev and ray extras on top.
$(VENV)/.installed-base: pyproject.toml
	@echo "make: creating $(VENV) and installing live-memory (about a minute on a fresh machine)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The build backend first: upgrading it during the editable install left a broken mix of
	# the venv's setuptools 65 and the new one (the packaging test then failed).
	$(BIN)/python -m pip install --quiet --upgrade 'setuptools>=77' wheel
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The ray extra too: the Ray backend's tests run a real local Ray cluster (tests/ray).
$(VENV)/.installed-dev: $(VENV)/.installed-base
	@echo "make: installing the test tools and the ray extra into $(VENV)"
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $@

install: $(VENV)/.installed-base

install-dev: $(VENV)/.installed-dev

install-user:
	PYTHON=$(PYTHON) sh deploy/install-user.sh

serve: install
	$(BIN)/live-memory serve

lint: install-dev
	$(BIN)/ruff check live_memory tests bench plugin
	$(BIN)/ruff format --check live_memory tests bench plugin

typecheck: install-dev
	$(BIN)/mypy

# Bytecode on (PYTHONDONTWRITEBYTECODE emptied) for the suite: it starts many Python
# processes (servers, CLI commands, hooks), and without bytecode each one compiles live_memory
# (and pytest each worker's assertion-rewritten modules) from source again. tests/cli and
# tests/plugin: 49.3 -> 42.2 s of CPU. The .pyc files go to __pycache__ (git-ignored).
# Three workers on two cores: the workers were idle about a third of the time (a full run used
# 447-486 s of CPU; the quiet 2-core run took 340 s of wall, 680 core-seconds), waiting on
# what they started (servers, the CLIs, retry back-offs, quiet periods; Ray's own processes are
# not in that CPU figure). tests/e2e+plugin+cli back to back, shared machine at load ~4.7:
# -n 2 211.8 s -> -n 3 169.1 s of wall, CPU +6 % (the third collection).
unit: install-dev test-deps
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 3 --dist loadgroup

# What the suite needs beyond Python packages (headless Chromium for the dashboard's browser
# tests): installed here when missing, so `make test` runs every test, as CI does.
test-deps:
	@sh deploy/test-deps.sh

test: lint typecheck unit

bench: install-dev
	for b in bench/[!_]*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
