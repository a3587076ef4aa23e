# Entry points (see README): `make lab` for the course, `make test` for the whole test suite.
# Both build .venv from this project's own files, so a fresh clone needs only Python 3.10+ and
# make. `make lab` installs what the course needs (the package, MLX, JupyterLab and the notebook
# tools); `make test` adds the test tools (the `dev` extra) to the same .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
LAB_STAMP  := $(VENV)/.installed-lab
TEST_STAMP := $(VENV)/.installed-test

# `make lab LAB_DIR=student` opens the student edition that `make student` writes.
LAB_DIR ?= notebooks
# `make notebooks NB="07 08"` rebuilds those chapters; NB=all rebuilds every one.
NB ?=

.PHONY: lab test bench fuzz lint notebooks student grade clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(LAB_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[gpu,notebooks]"
	touch $(LAB_STAMP)

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,gpu,notebooks]"
	touch $(TEST_STAMP) $(LAB_STAMP)

# The kernels JupyterLab starts inherit one BLAS/OpenMP thread: on a busy machine NumPy's extra
# BLAS threads only fight the other processes (see KERNEL_ENV in notebooks/course.py, which
# `make notebooks` uses, and conftest.py, which `make test` uses).
KERNEL_ENV := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# Jupyter refuses to run as root unless told (containers, CI); ordinary users never need it.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

# Serves notebooks/ (or LAB_DIR) and opens the course's first page (tests/browser starts
# JupyterLab the same way). The notebooks are the project's own: trusting them lets JupyterLab
# show their stored pictures (SVG) and players before a cell is run again (untrusted outputs
# fall back to plain text). On the teacher edition autosave is off (notebooks/.lab/overrides.json):
# a long Run All must not write a half-run chapter into the repository; save with Ctrl+S.
LAB_SETTINGS := $(if $(filter notebooks notebooks/,$(LAB_DIR)),--LabApp.app_settings_dir=$(CURDIR)/notebooks/.lab,)
lab: $(LAB_STAMP)
	$(BIN)/jupyter trust $(LAB_DIR)/*.ipynb
	$(KERNEL_ENV) $(BIN)/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=$(LAB_DIR) $(LAB_SETTINGS) \
		--LabApp.default_url=/lab/tree/00_start_here.ipynb

# Regenerates notebooks/*.ipynb from their sources, notebooks/src/*.py, and executes them
# (stored with their outputs): the chapters whose source changed, or those NB names.
notebooks: $(LAB_STAMP)
	$(BIN)/python notebooks/course.py build $(if $(filter all,$(NB)),--all,$(NB))

# The student edition: every exercise's solution replaced by a stub, in student/ (git-ignored).
student: $(LAB_STAMP)
	$(BIN)/python notebooks/course.py student --out student
	@echo "open it with: make lab LAB_DIR=student"

# The students' notebooks graded: SUBMISSIONS=<folder of one folder per student> (see
# notebooks/README.md); writes grades.csv.
SUBMISSIONS ?= submitted
grade: $(LAB_STAMP)
	$(BIN)/python notebooks/course.py grade $(SUBMISSIONS) --out grades.csv

RUFF_PATHS := lucid lucid_viz tests benchmarks notebooks/src notebooks/course.py conftest.py

# Ends with the time each chapter took under nbval (conftest.py), slowest first.
test: $(TEST_STAMP)
	$(BIN)/python -m ruff check $(RUFF_PATHS)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

# The random-program suites of `make test` (programs, and the families: higher order, linalg,
# einsum, einops, index tensors, promotion, reductions, layers) with a large example budget.
fuzz: $(TEST_STAMP)
	LUCID_FUZZ_EXAMPLES=$${LUCID_FUZZ_EXAMPLES:-20000} $(BIN)/python -m pytest -q \
		tests/test_fuzz_programs.py tests/test_fuzz_families.py

bench: $(LAB_STAMP)
	$(BIN)/python -m benchmarks

lint: $(TEST_STAMP)
	$(BIN)/python -m ruff check $(RUFF_PATHS)
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache
