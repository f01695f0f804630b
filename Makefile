# The README's two commands. `make study` runs the default study and prints its report path;
# `make test` runs the whole test suite. Both do all the set-up on a fresh machine first.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup server study test lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Python packages (benchkit and its test tools), then the build tools llama.cpp needs.
setup: $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@./scripts/apt-deps.sh

# Build (or reuse from ~/.cache/benchkit) llama-server for the CPU backend.
server: setup
	$(BIN)/python -m benchkit.provide cpu

study: server
	$(BIN)/python -m benchkit

test: server
	$(BIN)/python -m pytest -m "slow or not slow" -q

lint: setup
	$(BIN)/ruff check benchkit tests
	$(BIN)/ruff format --check benchkit tests
	$(BIN)/mypy

clean:
	rm -rf outputs
