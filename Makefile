# hyperslab: the two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

# `make docs` writes the API reference (pdoc) to docs/api/index.html.
.PHONY: demo docs test lint typecheck layers pytest pytables-suite fuzz bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	@echo "Installing hyperslab and its dependencies (numpy, h5py, hdf5plugin, blosc2, numexpr)"
	@echo "into $(VENV) from PyPI: about 100 MB of wheels, a minute or two on a fresh machine..."
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test]'
	touch $(VENV)/.installed-base $@

# Writes ./hyperslab-demo.h5 (about 110 MB; kept) and times queries, reductions and slices
# on it; compares with PyTables when it is installed (`make pytest` installs it).
demo: $(VENV)/.installed-base
	@echo "Running hyperslab demo: about 20-40 s on 2 cores (hyperslab demo --small: 2 s)"
	$(BIN)/hyperslab demo

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[docs]'
	touch $(VENV)/.installed-base $@

# The API reference from the numpydoc docstrings (tests/test_docs.py runs this command).
docs: $(VENV)/.installed-docs
	$(BIN)/pdoc --docformat numpy --output-directory docs/api hyperslab
	@echo "API reference: docs/api/index.html"

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

layers: $(VENV)/.installed-test
	$(BIN)/lint-imports

pytest: $(VENV)/.installed-test
	$(BIN)/pytest -q

# PyTables' own test suite (from the installed PyTables wheel, unmodified) run against
# hyperslab through hyperslab.install_as_tables(); see tests/pytables_suite/README.md.
pytables-suite: $(VENV)/.installed-test
	$(BIN)/pytest -c tests/pytables_suite/pytest.ini -n 2 --pyargs tables.tests tables.nodes.tests

test: lint typecheck layers pytest pytables-suite

# Damaged files read through every path, for FUZZ_SECONDS (default 300) with a random seed
# or FUZZ_SEED; `make test` runs a one-minute campaign with a fixed seed (tests/test_fuzz.py).
fuzz: $(VENV)/.installed-test
	PYTHONPATH=tests $(BIN)/python -m fuzz run

bench: $(VENV)/.installed-test
	$(PIP) install --quiet -e '.[bench]'
	$(BIN)/hyperslab bench nodes

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
