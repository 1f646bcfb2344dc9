# hmlkit: two commands do everything.
#   make studies   set up .venv if missing, run the studies whose results are not up to date
#                  (PROFILE=quick|standard|paper; standard writes results/ and figures/, others
#                  results/PROFILE/, figures/PROFILE/; FORCE=1 runs them all, DRY_RUN=1 only lists
#                  them with their estimated cost; LOCAL_CLUSTER=N or SCHEDULER=ADDRESS runs their
#                  cells on a Dask cluster, docs/cluster.md)
#   make test      set up .venv if missing, run the test suite (its end lists each skipped
#                  test and what enables it)
#   make test-browser  optional, as root: Debian's chromium and chromium-driver, then the
#                  explore panel's browser test (`make test` skips it without them)
#   make docs      the documentation site, offline, into docs/_build/html (serve it with
#                  `python -m http.server -d docs/_build/html`)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PROFILE ?= standard
JOBS   ?= 2
# torch for DCCA / DCCAE, optional. From plain PyPI on Linux this is the CUDA build (GBs):
# for the CPU build, set PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu first.
TORCH_SPEC ?= torch==2.13.0

.PHONY: install install-deep browser-deps studies demo test test-browser docs bench warm clean clean-numba

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[studies,test,dask,docs]'
	touch $@

install: $(VENV)/.installed

# Optional: PyTorch for DCCA / DCCAE. Failing to get torch is not an error:
# those methods then report themselves unavailable.
# stamped once installed, so a later make (a dry run too) does not ask pip again; a failed
# install leaves no stamp and is tried again next time
$(VENV)/.deep: $(VENV)/.installed
	-$(BIN)/python -m pip install --quiet '$(TORCH_SPEC)' && touch $@

install-deep: $(VENV)/.deep

# studies and tests take the deep extra too, so DCCA / DCCAE run (their rows and tests
# say "unavailable" where torch cannot be installed)
studies: install-deep
	$(BIN)/python -m hmlkit.studies run --profile $(PROFILE) $(if $(filter 1,$(FORCE)),--force) $(if $(filter 1,$(DRY_RUN)),--dry-run) $(if $(LOCAL_CLUSTER),--local-cluster $(LOCAL_CLUSTER)) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

demo: install
	$(BIN)/python -m hmlkit.demo

test: install-deep
	$(BIN)/python -m pytest -n $(JOBS) -q

# Optional, needs root (apt): the browser the explore panel's test drives. Plain `make test`
# never asks for root; it skips that test and says so at its end.
browser-deps:
	command -v chromedriver >/dev/null 2>&1 || (apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

test-browser: install browser-deps
	$(BIN)/python -m pytest -q tests/test_explore_browser.py tests/test_sweep_browser.py

# the site: README, docs/*.md, results/REPORT.md, the executed study notebooks (rendered from
# their committed outputs, never run) and the API reference from the docstrings; warnings are
# errors. The source is the repository root, the configuration docs/conf.py.
docs: install
	$(BIN)/python -m sphinx -W --keep-going -q -c docs . docs/_build/html
	@echo "the site: docs/_build/html/index.html (python -m http.server -d docs/_build/html)"

bench: install
	$(BIN)/python -m benchmarks.speed

# the study notebooks are their own source: after editing them in JupyterLab, clear outputs
# and run metadata (tests/test_notebook_source.py fails on a notebook not normalised)
.PHONY: notebooks
notebooks: install
	$(BIN)/python studies/_normalize.py

# compile every numba kernel once (processes started together then all load the cache)
warm: install
	$(BIN)/python -m hmlkit.warm

# results/ and figures/ hold the committed standard results: `git checkout results figures`
# restores them, `make studies FORCE=1` remakes them
clean: clean-numba
	rm -rf $(VENV) data/cache/fits .pytest_cache results/quick results/paper figures/quick figures/paper \
	    docs/_build docs/api/generated

# numba's cache files of the package (import hmlkit drops them itself when a source
# changes, see hmlkit/_numba_cache.py)
clean-numba:
	find hmlkit -name '*.nbi' -delete -o -name '*.nbc' -delete -o -name 'numba_warmed.sha1' -delete
