# Two entry points, both self-contained on a machine with only Python 3:
#   make quiz   create .venv, install kvdrill, start today's quiz
#   make test   create .venv, install kvdrill with test extras and CPU torch, run the suite
#   make typecheck   mypy over drill/ (not part of `make test`)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# A CPU build of torch for the engine_check tests. Elsewhere, point pip at the CPU index:
#   make test TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_SPEC     ?= torch==2.13.0
TORCH_PIP_ARGS ?=

.PHONY: quiz test typecheck clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install -q --disable-pip-version-check $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q --disable-pip-version-check -e ".[test]"
	touch $@

quiz: $(VENV)/.installed
	$(BIN)/kvdrill quiz

test: $(VENV)/.installed-test
	$(BIN)/ruff check drill engine_check tests benchmarks
	$(BIN)/python -m pytest

typecheck: $(VENV)/.installed-test
	$(BIN)/python -m pip install -q --disable-pip-version-check -e ".[typecheck]"
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
