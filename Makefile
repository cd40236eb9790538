# The two commands of the quick start. Each makes the virtual environment on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: sim test lint clean

sim: $(STAMP)
	$(VENV)/bin/tileclock sim $(ARGS)

test: $(STAMP)
	$(PY) -m pytest $(ARGS)

# ruff: the same format and lint rules on the whole tree (CI runs this before the tests)
lint: $(STAMP)
	$(VENV)/bin/ruff format --check firmware tests hw
	$(VENV)/bin/ruff check firmware tests hw

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,director]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
