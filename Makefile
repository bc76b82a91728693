# The only entry points: `make demo`, `make test` (CI runs it through .ci/run), `make bench`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_RUN  := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
STAMP_BENCH := $(VENV)/.installed-bench
DEMO_VAULT := examples/vault
DEMO_DB    := $(VENV)/demo-index.sqlite

CHROMIUM   := /usr/bin/chromium
# pytest workers (pytest-xdist): one per core and one more, each with its own PostgreSQL for
# the session. The suite waits on subprocesses, servers and PostgreSQL much of the time, so a
# third worker keeps 2 cores busy: 232 s with 2 workers, 203 s with 3 (quiet machine, #14).
# worksteal: each worker starts on its own part of the suite (module-scoped fixtures built
# once, not on every worker) and an idle worker takes tests from the others' queues, so no
# worker ends alone on a long tail.
PYTEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1); echo $$((n + 1)))
PYTEST_DIST ?= worksteal

.PHONY: demo test lint typecheck pytest bench clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(STAMP_RUN)

$(STAMP_BENCH): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@ $(STAMP_RUN) $(STAMP_TEST)

demo: $(STAMP_RUN)
	@rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	@echo "== lore index $(DEMO_VAULT)"
	@$(BIN)/lore index $(DEMO_VAULT) --db $(DEMO_DB)
	@for q in "去重" "客户去重规则 v2" "JIRA-1234" "reciprocal rank fusion" \
	          "那个 GMV 到底算不算退款来着" "Zhang San 负责什么"; do \
		echo; echo "== lore search \"$$q\""; \
		$(BIN)/lore search "$$q" --vault $(DEMO_VAULT) --db $(DEMO_DB) --limit 3 || exit 1; \
	done
	@echo; echo "== lore lookup zs"
	@$(BIN)/lore lookup zs --vault $(DEMO_VAULT) --db $(DEMO_DB) --limit 3
	@echo; echo "== lore snapshot"
	@$(BIN)/lore snapshot --vault $(DEMO_VAULT) --db $(DEMO_DB)

lint: $(STAMP_TEST)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP_TEST)
	$(BIN)/mypy

# The browser tests (tests/serve/test_serve_browser.py) drive the system Chromium; Playwright
# cannot download a browser of its own here. As root (CI) it is installed from Debian, with
# the CJK fonts the pages need; elsewhere the tests say why they are skipped.
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "== installing chromium and fonts-noto-cjk for the browser tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; \
		else \
			echo "note: $(CHROMIUM) is missing and this is not root: the browser tests are skipped"; \
		fi; \
	fi

# The suite starts hundreds of Python processes (the workers, `lore` subprocesses): they
# share compiled bytecode and pytest's rewritten test modules through __pycache__ (git
# ignores it), even where the shell asks Python not to write it (PYTHONDONTWRITEBYTECODE):
# else each process compiles lore again, and each worker every test module (~10 s).
pytest: $(STAMP_TEST) browser
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(PYTEST_JOBS) --dist $(PYTEST_DIST)

test: lint typecheck pytest

bench: $(STAMP_BENCH)
	$(BIN)/python -m bench.retrieval
	$(BIN)/python -m bench.scale
	$(BIN)/python -m bench.semantic
	$(BIN)/python -m bench.interest
	$(BIN)/python -m bench.reliability
	$(BIN)/python -m bench.mcp_latency
	$(BIN)/python -m bench.memory
	$(BIN)/python -m bench.realvault
	$(BIN)/python -m bench.serve_load
	$(BIN)/python -m bench.serve_screens
	$(BIN)/python -m bench.pg_parity

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
