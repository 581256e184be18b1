# leash: the two commands a user needs are `make reproduce` and `make test`.
# Both create a virtual environment in .venv (with python3) on first use and install the
# package with its dependencies from pyproject.toml. To use an existing interpreter or conda
# environment instead, pass PYTHON=/path/to/python (the package is then installed into it).

PYTHON3 ?= python3
VENV    := .venv
ifdef PYTHON
PY      := $(PYTHON)
STAMP   := build/.installed-external
else
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
endif
EXTRAS  ?= dev,verify,gym,site
# `leash generate` on the CPU and `--cluster` on Dask and Ray (tests/test_ray.py):
# EXTRAS=dev,verify,gym,site,cpu-generate,cluster,ray (CI does). llama-cpp-python
# compiles llama.cpp where no wheel fits (5-10 min on two cores, once: pip keeps the wheel);
# these flags make that build portable (no -march=native; any x86-64 CPU with AVX2) and
# without OpenMP.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DLLAVA_BUILD=OFF -DLLAMA_CURL=OFF
# `make reproduce` options: DATA=embedded (the runs of notebooks/runs.yaml, the paper's printed
# numbers and the simulated demo, into figures/) or a study file (into build/<study>/);
# ONLY=01 (notebooks, by number or name); PARAMS=params.yaml (parameters of those notebooks;
# the artifacts then go to build/figures/); OUTDIR=dir; JOBS=2 notebooks at a time (the
# default; the outputs do not depend on it, JOBS=1 runs them in order).
DATA    ?= embedded
ONLY    ?=
PARAMS  ?=
OUTDIR  ?=
JOBS    ?= 2
# Extra flags for `make lab` (JupyterLab); --allow-root is added when running as root.
LAB_ARGS ?=
# Local mirror of the real public datasets (data/manifest.yaml): used before the network. By
# default the shared data folder beside the repository, when there is one; set it to your own
# mirror, or leave it empty to download (`leash fetch NAME`) or skip the real-data case study.
LEASH_DATA_MIRROR ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),)
export LEASH_DATA_MIRROR

.PHONY: help install test test-fast test-browser reproduce site bench lint lab explore lines clean

help:
	@echo "make reproduce   regenerate every table and figure into figures/ (DATA=embedded|<study.yaml>,"
	@echo "                 ONLY=01, PARAMS=params.yaml, OUTDIR=dir, JOBS=2)"
	@echo "make test        run the test suite (creates .venv on first use)"
	@echo "make site        the offline site of every result: build/site/index.html (DATA=<study.yaml>:"
	@echo "                 build/site-<study>/; runs make reproduce first if needed)"
	@echo "make test-browser a double-click on a notebook's .md in JupyterLab (three ways started),"
	@echo "                 Run All Cells of notebooks 00 and 01 in JupyterLab, every page of the"
	@echo "                 site and the explorer in Voila, in headless Chromium (needs chromium +"
	@echo "                 chromedriver; screenshots in build/browser/)"
	@echo "make bench       run the speed and memory benchmarks (ratios measured in one run)"
	@echo "make lint        ruff over src/, tests/ and benchmarks/, and the import contracts (part of make test)"
	@echo "make lab         JupyterLab on the notebooks (installs the lab extra); a double-click"
	@echo "                 on a notebook's .md opens it as a notebook, as in a plain jupyter lab"
	@echo "make lines       lines of Python of the metric core, the rest of leash and the toolkit"
	@echo "make explore     the live explorer (notebooks/12_explore) as an app on"
	@echo "                 http://127.0.0.1:8866 (Voila; STUDY=demo|paper|<study.yaml>, PORT=8866)"

$(STAMP): pyproject.toml
	@if [ -z "$(PYTHON)" ] && [ ! -x $(VENV)/bin/python ]; then \
	    echo "creating $(VENV) with $(PYTHON3)" >&2; $(PYTHON3) -m venv $(VENV); fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	@$(PY) -m leash_eval.run.lab
	@mkdir -p $(dir $@) && touch $@

# Notebooks stay clean whatever runs them: each is committed as jupytext Markdown
# (notebooks/<stem>.md, no outputs) and paired with an .ipynb that git ignores
# (notebooks/jupytext.toml). This writes the .ipynb of each Markdown newer than it (the cells
# from the Markdown, the outputs the .ipynb had kept), for JupyterLab, nbconvert and papermill.
NOTEBOOK_PAIRS := $(patsubst %.md,%.ipynb,$(wildcard notebooks/[0-9]*.md))
notebooks/%.ipynb: notebooks/%.md | $(STAMP)
	@$(PY) -m jupytext --quiet --to ipynb --update $<

install: $(STAMP) $(NOTEBOOK_PAIRS)

# Two pytest-xdist workers, whole files per worker (--dist loadfile): the notebook run of
# tests/test_notebooks.py happens once, in one worker, while the other takes the rest.
PYTEST  ?= $(PY) -m pytest -q -n 2 --dist loadfile

# ruff first (a lint error fails `make test`), then the tests and the doctests of src/leash.
test: lint
	$(PYTEST)

test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

# JupyterLab "Run All Cells", the site and the explorer in Voila, in headless Chromium through
# the system chromedriver (never a download); not part of `make test`. Screenshots and the
# server logs go to build/browser/.
test-browser: $(STAMP) $(NOTEBOOK_PAIRS)
	$(PY) -m pip install --quiet -e ".[browser,site,explore]"
	$(PY) -m pytest -q -s --tb=short -p no:xdist tests/browser

reproduce: $(STAMP) $(NOTEBOOK_PAIRS)
	$(PY) -m leash_eval.run.reproduce --data "$(DATA)" $(if $(ONLY),--only $(ONLY)) \
	    $(if $(PARAMS),-f "$(PARAMS)") $(if $(OUTDIR),--outdir "$(OUTDIR)") \
	    $(if $(JOBS),--jobs $(JOBS))

# The offline static site of the last `make reproduce` (of DATA's study; it runs first when its
# executed notebooks are absent): build/site/ (build/site-<study>/), see src/leash_eval/run/site.py.
site: $(STAMP)
	$(PY) -m pip install --quiet -e ".[site]"
	$(PY) -m leash_eval.run.site --data "$(DATA)"

bench: $(STAMP)
	$(PY) benchmarks/run.py

# ruff, then the layer contracts of pyproject.toml (import-linter; no console script needed, so
# that PYTHON=... works too).
lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks
	$(PY) -c "import sys; from importlinter.cli import lint_imports_command as c; sys.argv[0] = 'lint-imports'; sys.exit(c())"

# JupyterLab reads its configuration for this environment from <environment>/etc/jupyter/,
# which the set-up above writes (python -m leash_eval.run.lab): a double-click on a notebook's
# Markdown opens it as a notebook, the file browser lists each notebook once, no news toast or
# update check. A plain `jupyter lab` of this environment, started anywhere, reads the same.
lab: $(STAMP) $(NOTEBOOK_PAIRS)
	$(PY) -m pip install --quiet -e ".[lab]"
	$(PY) -m jupyterlab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root) \
	    $(LAB_ARGS)

# The live explorer as an app: notebooks/12_explore with its study set (papermill
# --prepare-only, into build/explore/), served by Voila on 127.0.0.1 only, no browser opened;
# its template (src/leash_eval/run/voila/templates/leash) leaves out the lab template's CDN links.
STUDY   ?= demo
PORT    ?= 8866
explore: $(STAMP) $(NOTEBOOK_PAIRS)
	$(PY) -m pip install --quiet -e ".[explore]"
	@mkdir -p build/explore
	$(PY) -m papermill --prepare-only -k python3 notebooks/12_explore.ipynb \
	    build/explore/12_explore.ipynb -p study "$(if $(wildcard $(STUDY)),$(abspath $(STUDY)),$(STUDY))"
	JUPYTER_PATH=$(abspath src/leash_eval/run)$(if $(JUPYTER_PATH),:$(JUPYTER_PATH)) \
	    $(PY) -m voila build/explore/12_explore.ipynb --no-browser --Voila.ip=127.0.0.1 \
	    --port=$(PORT) --template=leash

# The size of each part (lines of Python): the metric core (leash.core + leash.analysis), the
# rest of leash (the paper's glue for the notebooks), and the toolkit beside it.
lines:
	@printf '%-50s %6s\n' "metric core (src/leash/core, src/leash/analysis)" \
	    "$$(cat src/leash/core/*.py src/leash/analysis/*.py | wc -l)"
	@printf '%-50s %6s\n' "the rest of leash (the paper's glue)" \
	    "$$(find src/leash -name '*.py' -not -path '*/core/*' -not -path '*/analysis/*' \
	        -exec cat {} + | wc -l)"
	@printf '%-50s %6s\n' "leash_eval (the toolkit)" "$$(find src/leash_eval -name '*.py' -exec cat {} + | wc -l)"

clean:
	rm -rf build .pytest_cache .hypothesis
