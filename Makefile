# The two commands of the README. Both work on a fresh machine with Python 3.11:
#   make book   set-up + build the rendered book (executes every chapter) into _build/html
#   make test   set-up + every test: the package's tests and every chapter under nbval
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export MPLBACKEND := Agg
export ILLUSTRATED_CACHE ?= $(CURDIR)/_build/model-cache

.PHONY: setup test book clean

$(BIN)/activate: requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	touch $(BIN)/activate

setup: $(BIN)/activate

test: setup
	$(BIN)/python -m pytest -q tests chapters --nbval-lax

book: setup
	$(BIN)/jupyter-book build . -W -n --keep-going

clean:
	rm -rf _build
