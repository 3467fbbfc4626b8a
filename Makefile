# Each target bootstraps .venv from the project's own files, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: docs serve test lint types catalogs tokenizers bench perf-page clean

$(STAMP): pyproject.toml tools/docs/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c tools/docs/constraints.txt -e '.[test,docs,bench]'
	touch $(STAMP)

catalogs: $(STAMP)
	$(PY) -m tools.i18n.catalogs compile

# The real tokenizers the token estimate is measured against (tests/test_tokens.py,
# benchmarks/bench_tokens.py): the files of one pinned wheel, downloaded without its dependencies
# into .cache/tokenizers once (tools/tokenizers.py).
tokenizers: $(STAMP)
	@$(PY) -m tools.tokenizers fetch >/dev/null

# The reference is regenerated from the code, then the three languages are built; any warning
# (a broken link or anchor included) fails the build.
docs: $(STAMP) catalogs
	$(PY) -m tools.docs.gen_sdk_reference render
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

serve: docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests tools benchmarks
	$(VENV)/bin/lint-imports

types: $(STAMP)
	$(VENV)/bin/mypy

# Every test, the slow ones included (browser, wheel, crash and framework end-to-end tests).
# While working, `.venv/bin/pytest -m "not slow"` runs the rest in a fraction of the time. The
# tokenizer files are fetched first, so a test that needs them may not skip here.
test: $(STAMP) catalogs tokenizers lint types
	CONTEXTWISE_REQUIRE_TOKENIZERS=1 $(VENV)/bin/pytest

# Every benchmarks/bench_*.py, after the machine and the versions; each script's output follows a
# "== script" line, so that tools/docs/perf_page.py can read it. A missed goal fails the target
# once every benchmark has run.
BENCHMARKS = $(sort $(wildcard benchmarks/bench_*.py))

bench: $(STAMP) catalogs tokenizers
	@$(PY) -m tools.docs.perf_page environment
	@status=0; for script in $(BENCHMARKS); do \
		echo "== $$script"; $(PY) $$script || status=$$?; \
	done; exit $$status

# Measure again, keep the output in benchmarks/results.txt and regenerate the Performance page.
perf-page: $(STAMP) catalogs tokenizers
	-$(MAKE) --no-print-directory --silent bench > benchmarks/results.txt
	$(PY) -m tools.docs.perf_page render benchmarks/results.txt

clean:
	rm -rf $(VENV) .cache site build dist .mypy_cache .pytest_cache .ruff_cache
