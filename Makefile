# Two entry points (see README): `make lab` and `make test`. Both build .venv from this
# project's own files, so a fresh clone needs only Python 3.10+ and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test bench fuzz lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,gpu,notebooks]"
	touch $(STAMP)

# Jupyter refuses to run as root unless told (containers, CI); ordinary users never need it.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

# Serves notebooks/ and opens the tour's first page (tests/browser starts JupyterLab the same way).
# The notebooks are the project's own: trusting them lets JupyterLab show their stored pictures
# (SVG) and players before a cell is run again (untrusted outputs fall back to plain text).
lab: $(STAMP)
	$(BIN)/jupyter trust notebooks/*.ipynb
	$(BIN)/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=notebooks \
		--LabApp.default_url=/lab/tree/00_start_here.ipynb

test: $(STAMP)
	$(BIN)/python -m ruff check lucid lucid_viz tests benchmarks notebooks/_build
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

# The random-program suite of `make test` with a large example budget, for long runs.
fuzz: $(STAMP)
	LUCID_FUZZ_EXAMPLES=$${LUCID_FUZZ_EXAMPLES:-20000} $(BIN)/python -m pytest -q \
		tests/test_fuzz_programs.py

bench: $(STAMP)
	$(BIN)/python -m benchmarks

lint: $(STAMP)
	$(BIN)/python -m ruff check lucid lucid_viz tests benchmarks notebooks/_build
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache
