# Two entry points, both self-contained on a machine with only Python 3:
#   make quiz   create .venv, install kvdrill, start today's quiz
#   make test   create .venv, install kvdrill with test extras and CPU torch, run the suite
#   make typecheck   mypy over drill/ (not part of `make test`)
#   make mutate      mutation testing of the core modules, score per module (not part of `make test`)
#   make bench       every speed and memory target beside its floor (BENCH_ARGS=--quick: a smoke test)
#   make deck        validate the built-in deck into question_bank/validated_deck.pickle (after editing it)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# A CPU build of torch for the engine_check tests. Elsewhere, point pip at the CPU index:
#   make test TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_SPEC     ?= torch==2.13.0
TORCH_PIP_ARGS ?=
# workers for `make mutate` (each runs one mutant's tests)
MUTATE_JOBS ?= 2

BENCH_ARGS ?=

.PHONY: quiz test typecheck mutate bench deck clean

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

# the copy of the built-in deck a first start reads instead of validating the YAML; the
# hash seed keeps the bytes the same from one run to the next, so git stores small deltas
deck: $(VENV)/.installed
	PYTHONHASHSEED=0 $(BIN)/python -m drill.bank.make_deck

typecheck: $(VENV)/.installed-test
	$(BIN)/python -m pip install -q --disable-pip-version-check -e ".[typecheck]"
	$(BIN)/mypy

# mutmut mutates the modules listed in pyproject.toml's [tool.mutmut] in a copy of the tree
# (mutants/, rebuilt on every run so no verdict is stale) and tries each mutant against
# those modules' unit tests. A mutant is killed when a test fails or it times out.
mutate: $(VENV)/.installed-test
	$(BIN)/python -m pip install -q --disable-pip-version-check -e ".[mutate]"
	rm -rf mutants
	$(BIN)/mutmut run --max-children $(MUTATE_JOBS)
	@echo
	@$(BIN)/mutmut results --all true | awk -F': ' ' \
	    { mod = $$1; sub(/^ +/, "", mod); sub(/\.[^.]*$$/, "", mod); total[mod]++; all++; \
	      if ($$2 == "killed" || $$2 == "timeout") { killed[mod]++; dead++ } \
	      else if ($$2 == "survived") survived[mod]++; else other[mod]++ } \
	    END { for (m in total) printf "%-28s %5d / %-5d killed %5.1f%%   %4d survived  %3d not tested\n", \
	            m, killed[m], total[m], 100 * killed[m] / total[m], survived[m], other[m] | "sort"; \
	          close("sort"); printf "%-28s %5d / %-5d killed %5.1f%%\n", "all", dead, all, 100 * dead / all }'
	@echo "survivors: $(BIN)/mutmut results; one mutant's diff: $(BIN)/mutmut show NAME"

# one benchmark after another (two at once would time each other); a table of every target
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
