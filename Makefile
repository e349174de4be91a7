# The two commands of the README. `make` builds .venv/ in the clone when it is missing.
# torch/torchvision are pinned through constraints.txt (see ../shared/ENVIRONMENT.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test install clean

demo: $(STAMP)
	$(BIN)/h2h demo

test: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev,ray]"
	touch $(STAMP)

clean:
	rm -rf $(VENV) runs .pytest_cache
