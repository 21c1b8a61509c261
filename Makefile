# The two commands of the README. Both work on a fresh machine with Python 3.11 (and, for the
# book, Node 20 with npm):
#   make book   set-up + build the rendered book (executes every chapter) into _build/html
#   make test   set-up + ruff + every test: the package's tests, the site's checks and every
#               chapter under nbval
# and, after `make book`:
#   make serve          the built book on http://127.0.0.1:8000/ (how to read it locally)
#   make browser-test   the built pages in headless Chromium, offline (Debian: chromium chromium-driver)
# and, to remake the book's shipped models (src/illustrated/weights: weights + manifest.json):
#   make models         trains each corpus's default model once, on one thread
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
NPM ?= npm
export MPLBACKEND := Agg
# MathJax and jax-js (@jax-js/jax), from the npm registry
# (site/package-lock.json), served by the site itself from _vendor/ (html_extra_path in
# _config.yml); our own modules (site/js/) and the models (safetensors) from _illustrated/. No Jupyter
# widget manager: no page shows an ipywidget (site/no_widget_state.py).
SITE_ASSETS := _build/site-assets/_vendor/VERSIONS.json

.PHONY: setup site-assets test book serve browser-test models clean

$(BIN)/activate: requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	touch $(BIN)/activate

setup: $(BIN)/activate

$(SITE_ASSETS): site/package.json site/package-lock.json site/build.mjs $(wildcard site/js/*.js site/js/*/*.js)
	cd site && $(NPM) ci --ignore-scripts --no-audit --no-fund
	node site/build.mjs

# The shipped models as the pages' engine reads them (jax-js, site/js/engine/engine.js): safetensors,
# vocabularies, each corpus for training in the page, and recipe.json (the Recipe's schema).
WEB_MODELS := _build/site-assets/_illustrated/models/index.json
$(WEB_MODELS): $(BIN)/activate src/illustrated/commands/web_export.py src/illustrated/files/safetensors.py \
    src/illustrated/pretrained_models.py src/illustrated/recipe.py src/illustrated/training/referent.py \
    src/illustrated/weights/manifest.json
	rm -rf $(dir $(WEB_MODELS))
	$(BIN)/python -m illustrated.commands.web_export --out $(dir $(WEB_MODELS))

site-assets: $(SITE_ASSETS) $(WEB_MODELS)

# A pytest-xdist worker per core (TEST_WORKERS=0: one process), each on one thread, its notebooks'
# kernels too; --dist loadfile keeps a file's tests, and a notebook's cells in order, in one worker;
# --no-loadscope-reorder: the files in the order conftest.py gives them, the slowest first.
TEST_WORKERS ?= auto
test: setup site-assets  # tests/site run the page's jax-js from site/node_modules
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/python tools/check_conventions.py
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
	  tests chapters closing --nbval-lax --nbval-current-env --ignore=tests/browser

# The notebooks are executed first, a process per core, into an emptied jupyter-cache
# (site/execute_notebooks.py): the build then takes their outputs from it, and executes itself
# only what is not there (a page that failed, the MyST text pages). Each kernel on one thread,
# as under make test, so the pages show the checked outputs.
book: setup site-assets
	rm -rf _build/html/reports  # jupyter-book keeps a failed notebook's traceback there: only this build's
	rm -rf _build/.jupyter_cache  # never an earlier build's outputs
	ILLUSTRATED_BOOK_BUILD=1 OMP_NUM_THREADS=1 $(BIN)/python site/execute_notebooks.py
	ILLUSTRATED_BOOK_BUILD=1 OMP_NUM_THREADS=1 $(BIN)/jupyter-book build . -W -n --keep-going

# One thread, no ATen vector kernels and MKL's compatible code path: the choices that make the
# bits least dependent on the machine that trains. The manifest records what was used.
models: setup
	ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 $(BIN)/python -m illustrated.commands.shipped

# The built book over http on this machine only (browsers run no module of a page opened from
# file://, so its widgets would be dead): then open http://127.0.0.1:8000/
PORT ?= 8000
serve:
	@test -f _build/html/index.html || { echo "no built book: run make book first"; exit 1; }
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

# A Chromium per worker (its own profile, and its own server on a free port).
browser-test: setup
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
	  --confcutdir=tests/browser tests/browser

clean:
	rm -rf _build
