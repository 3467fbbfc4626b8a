# Each target bootstraps .venv from the project's own files, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: docs serve test lint types catalogs bench clean

$(STAMP): pyproject.toml tools/docs/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c tools/docs/constraints.txt -e '.[test,docs,bench]'
	touch $(STAMP)

catalogs: $(STAMP)
	$(PY) -m tools.i18n.catalogs compile

# The reference is regenerated from the code, then the three languages are built; any warning
# (a broken link or anchor included) fails the build.
docs: $(STAMP) catalogs
	$(PY) -m tools.docs.gen_sdk_reference render
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

serve: docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests tools benchmarks

types: $(STAMP)
	$(VENV)/bin/mypy

test: $(STAMP) catalogs lint types
	$(VENV)/bin/pytest

bench: $(STAMP) catalogs
	$(PY) benchmarks/bench_plan.py
	$(PY) benchmarks/bench_trim.py
	$(PY) benchmarks/bench_route.py
	$(PY) benchmarks/bench_session.py

clean:
	rm -rf $(VENV) site build dist .mypy_cache .pytest_cache .ruff_cache
