# elman: `make demo` and `make test` each bootstrap .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export TF_CPP_MIN_LOG_LEVEL ?= 3
export PYTHONHASHSEED ?= 0
# test processes (pytest-xdist, one test file per process at a time): the cores this
# process may use, at most 4; TensorFlow's tracing and Python work are single-threaded,
# so two processes on two cores take about half the wall time of one
JOBS ?= $(shell $(PYTHON) -c "import os; print(min(4, len(os.sched_getaffinity(0))))")

.PHONY: demo test test-all bench venv clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/elman demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m '' -n $(JOBS) --dist loadfile

bench: $(STAMP)
	$(BIN)/elman bench

clean:
	rm -rf runs build *.egg-info
