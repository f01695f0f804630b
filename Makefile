# The README's two commands. `make study` runs the default study and prints its report path;
# `make test` runs the whole test suite. Both do all the set-up on a fresh machine first.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup server server-vulkan study test lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Python packages (benchkit and its test tools), then the build tools llama.cpp needs
# (apt-deps.sh does nothing when they are all there; Vulkan's are optional).
setup: $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@./scripts/apt-deps.sh

# Build (or reuse from ~/.cache/benchkit) llama-server for the CPU backend.
server: setup
	$(BIN)/python -m benchkit.provide cpu

# The Vulkan build too, where this machine can have it (exit 3: unavailable, with the reason
# printed; the Vulkan tests then skip with that reason). Any other failure stops `make`.
server-vulkan: server
	@$(BIN)/python -m benchkit.provide vulkan || [ $$? -eq 3 ]

study: server
	$(BIN)/python -m benchkit

# Every test: the real llama-server sweeps (-m slow) and the sweeps through a real scheduler
# (-m cluster: a one-node SLURM cluster started by the tests, scripts/slurm-local.sh).
test: server-vulkan
	$(BIN)/python -m pytest -m "slow or cluster or not slow" -q

lint: setup
	$(BIN)/ruff check benchkit tests
	$(BIN)/ruff format --check benchkit tests
	$(BIN)/mypy

clean:
	rm -rf outputs
