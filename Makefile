# The two README commands: `make lab` (open the course) and `make test` (every test).
# Both create .venv when absent and install torch==2.13.0 *first* (the machine's CPU wheel; an unpinned torch
# would pull several GB of CUDA packages), then the package. Stamp files make re-runs fast when nothing changed.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
TORCH_SPEC ?= torch==2.13.0
LAB_ARGS ?=
# Jupyter refuses to run as root without this flag (containers, CI machines, Binder-like images)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
PYTEST_ARGS ?=
# 2 workers fit CI's 2 cores; each runs single-threaded torch to avoid oversubscription
WORKERS ?= 2

.PHONY: lab test test-fast bench doctor strip clean help

help:
	@echo "make lab    - install (first time) and open the course in JupyterLab"
	@echo "make test   - install (first time) and run every test: unit, property, notebooks (quick), browser"
	@echo "make test-fast - unit and property tests only"
	@echo "make bench  - run the benchmarks (python -m unlearnkit bench)"
	@echo "make strip  - strip outputs and widget state from the notebooks"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.torch-installed: | $(PY)
	$(PIP) install --quiet "$(TORCH_SPEC)"
	@touch $@

$(VENV)/.lab-installed: pyproject.toml $(VENV)/.torch-installed
	$(PIP) install --quiet -e .
	$(PY) -m unlearnkit._labsettings
	@touch $@

$(VENV)/.test-installed: pyproject.toml $(VENV)/.lab-installed
	$(PIP) install --quiet -e ".[test]"
	@touch $@

# the repository is Lab's root (docs/ reachable), the welcome notebook open
lab: $(VENV)/.lab-installed
	$(VENV)/bin/jupyter lab --ServerApp.default_url=/lab/tree/notebooks/00_welcome.ipynb $(ROOT_FLAG) $(LAB_ARGS)

# unit, property and notebook tests in parallel; then the browser test on its own (a quiet machine keeps
# plotly's widget bundle inside anywidget's 2 s initialisation window)
test: $(VENV)/.test-installed
	UNLEARNKIT_QUICK=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -n $(WORKERS) --dist loadfile \
		tests notebooks --nbval-lax --nbval-current-env -m "not browser" $(PYTEST_ARGS)
	UNLEARNKIT_QUICK=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest tests/browser -m browser $(PYTEST_ARGS)

test-fast: $(VENV)/.test-installed
	UNLEARNKIT_QUICK=1 $(PY) -m pytest tests -m "not browser" -x -q $(PYTEST_ARGS)

bench: $(VENV)/.lab-installed
	$(PY) -m unlearnkit bench --out artifacts/bench.json

doctor: $(VENV)/.lab-installed
	$(PY) -m unlearnkit doctor

strip: $(VENV)/.lab-installed
	$(PY) -m unlearnkit._nbstrip notebooks/*.ipynb

clean:
	rm -rf $(VENV) artifacts .pytest_cache
