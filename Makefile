# The two set-up commands of the README: `make serve` and `make test`; `make install-user`
# puts `live-memory` on PATH for a user (deploy/install-user.sh).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install install-user serve test lint typecheck unit bench clean

$(BIN)/live-memory: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The build backend first: upgrading it during the editable install left a broken mix of
	# the venv's setuptools 65 and the new one (the packaging test then failed).
	$(BIN)/python -m pip install --quiet --upgrade 'setuptools>=77' wheel
	# The ray extra too: the Ray backend's tests run a real local Ray cluster (tests/ray).
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $@

install: $(BIN)/live-memory

install-user:
	PYTHON=$(PYTHON) sh deploy/install-user.sh

serve: install
	$(BIN)/live-memory serve

lint: install
	$(BIN)/ruff check live_memory tests bench plugin
	$(BIN)/ruff format --check live_memory tests bench plugin

typecheck: install
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
unit: install
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 3 --dist loadgroup

test: lint typecheck unit

bench: install
	for b in bench/[!_]*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
