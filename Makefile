# rslab: build the book, run the tests, open the chapters, run the benchmarks.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RSLAB_SCALE ?= book
export MPLBACKEND := Agg

.PHONY: all book test lint pytest lab bench clean

all: test

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

book: $(STAMP)
	RSLAB_SCALE=$(RSLAB_SCALE) $(BIN)/python -m rslab.bookbuild --strict

lint: $(STAMP)
	$(BIN)/ruff check rslab tests

pytest: $(STAMP)
	RSLAB_SCALE=quick $(BIN)/python -m pytest -q

test: lint pytest

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.contents_manager_class=jupytext.TextFileContentsManager book/

bench: $(STAMP)
	$(BIN)/python -m rslab bench

clean:
	rm -rf _build
