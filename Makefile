# rslab: build the book, run the tests, open the chapters, run the benchmarks.
#   make book   the book at RSLAB_SCALE=book (default), executing every page (two at a time
#               on two cores: rslab.bookbuild --jobs)
#   make test   ruff + pytest + the book at quick (every page executed) + the browser tests
#   make book-student  the same book without the solutions (_build/student/_build/html)
#   make lab    Jupyter Lab on book/, chapters open as notebooks, read-only to disk, at quick
#               scale (installs only the package and its book extra, not the test stack)
#   make lab-student  the same on the students' pages (no solution, no answer cell)
#   make leak-test  both books at quick scale; the students' searched for the full book's answers
#   make fuzz   the property tests' long profile (many thousands of random inputs)
#   make sweep-full  the full design-space sweep on Dask (rslab sweep --scale full)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RSLAB_SCALE ?= book
CHROMIUM := /usr/bin/chromium
# JupyterLab reads settings overrides from <prefix>/share/jupyter/lab/settings: the venv's own.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
READER := $(VENV)/.reader-installed

.PHONY: all venv book book-student test lint pytest book-quick browser-test chromium web-assets lab lab-settings \
        lab-screenshot live-test bench fuzz sweep-full test-heavy test-pages clean lab-student \
        book-student-quick leak-test

all: test

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

# require.js, the ipywidgets html-manager and MathJax from the npm registry (pinned
# checksums) into book/_static/vendor, so the rendered book needs no CDN.
web-assets:
	bash tools/fetch_web_assets.sh

book: $(STAMP) web-assets
	RSLAB_SCALE=$(RSLAB_SCALE) $(BIN)/python -m rslab.bookbuild --strict

# What an instructor hands to students: every page, every exercise, no solution and no cell
# tagged `solution` (neither in the HTML nor in the .ipynb/.md downloads): rslab/student.py.
book-student: $(STAMP) web-assets
	RSLAB_SCALE=$(RSLAB_SCALE) $(BIN)/python -m rslab.bookbuild --strict --student

book-student-quick: $(STAMP) web-assets
	RSLAB_SCALE=quick $(BIN)/python -m rslab.bookbuild --strict --student

# Every published file of the students' book searched for the full book's solution sentences,
# numbers of 3+ significant digits and answer cells (claims, definitions): both books at quick
# scale (about two book-quick builds), then the search (rslab/student.py, ~20 s).
leak-test: book-quick book-student-quick
	RSLAB_REQUIRE_BOOK=1 $(BIN)/python -m pytest -q -m leaks tests/test_student_book.py

lint: $(STAMP)
	$(BIN)/ruff check rslab tests _ext

# pytest-xdist: TEST_JOBS workers, each taking whole test files (a module's fixtures are
# built once, in one worker).
TEST_JOBS ?= 2
pytest: $(STAMP)
	RSLAB_SCALE=quick $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile \
		-m "not browser and not heavy and not pages and not leaks"

# Each page executed on its own at quick scale, a test per page (make test's book build
# executes them all at once).
test-pages: $(STAMP)
	RSLAB_SCALE=quick $(BIN)/python -m pytest -q -n $(TEST_JOBS) -m pages tests/test_book_pages.py

# The exhaustive checks make test leaves out (the inverse CDF's law against brute force).
test-heavy: $(STAMP)
	RSLAB_SCALE=quick $(BIN)/python -m pytest -q -m heavy

# `make book` as a reader types it, at the reader's scale.
book-quick:
	$(MAKE) book RSLAB_SCALE=quick

# Debian's chromium for the browser test (CI runs as root on a machine without it).
chromium:
	test -x $(CHROMIUM) || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# Two workers, each taking whole files: the live notebooks in one, the built pages and make lab
# in the other.
browser-test: $(STAMP) chromium lab-settings
	RSLAB_REQUIRE_BOOK=1 $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile \
		-m "browser and not live_extra" tests/browser

test: lint pytest book-quick browser-test

# A reader's install: the package and its `book` and `fast` extras (what a notebook reader needs) at the
# lock's versions (requirements.txt as constraints), not the test stack; and jupytext's
# notebook view as the default viewer of .md files in this venv's JupyterLab (never in the
# user's home).
$(READER): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.txt -e '.[book,fast]'
	touch $(READER)

$(LAB_SETTINGS): $(READER)
	$(BIN)/jupytext-config --settings-file $(LAB_SETTINGS) set-default-viewer markdown myst

lab-settings: $(LAB_SETTINGS)

# rslab.lab: the chapters read-only to disk, RSLAB_SCALE=quick unless set, --allow-root as root.
# Jupyter's own JUPYTER_PORT and JUPYTER_TOKEN choose the port and token; LAB_ARGS reach jupyter lab.
lab: lab-settings
	$(BIN)/python -m rslab.lab book $(LAB_ARGS)

lab-student: lab-settings
	$(BIN)/python -m rslab.lab book --student

# The live-notebook test on every chapter it covers (make test runs three with the rest of the
# browser stage), and make lab-screenshot's test (in a copy of the checkout).
live-test: lab-settings chromium
	RSLAB_REQUIRE_BOOK=1 $(BIN)/python -m pytest -q -m browser tests/browser/test_live_notebooks.py \
		tests/browser/test_make_lab.py

# Refresh the how-to-run page's screenshot of Jupyter Lab from the live-notebook test.
lab-screenshot: lab-settings chromium
	RSLAB_LAB_SCREENSHOT=book/_static/lab/machine_live.png $(BIN)/python -m pytest -q -m browser \
		tests/browser/test_live_notebooks.py -k machine

# BENCH_ARGS="--only machine" runs one benchmark.
bench: $(STAMP)
	$(BIN)/python -m rslab bench $(BENCH_ARGS)

# The property tests' long profile (tests/fuzzing.py): 20,000 random programs, 5,000 random
# sampler inputs, 5,000 random loop bodies through rslab pipeline (the share of valid ones
# refused is printed and held to 5 %), ...; the seed is FUZZ_SEED, the example counts are
# printed per test.
FUZZ_SEED ?= 15
fuzz: $(STAMP)
	RSLAB_FUZZ=long RSLAB_SCALE=quick $(BIN)/python -m pytest -q -p no:cacheprovider \
		--hypothesis-seed=$(FUZZ_SEED) --hypothesis-show-statistics tests/test_fuzz.py \
		tests/test_schedule_differential.py tests/test_pipeline_contract.py

clean:
	rm -rf _build

# The full design-space sweep (fast-log designs x divisors, exact), on a Dask LocalCluster.
sweep-full: $(STAMP)
	$(BIN)/python -m rslab sweep --scale full --dask local
