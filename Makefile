# The two commands of the quick start. Each makes the virtual environment on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: sim test lint clean hall-demo

sim: $(STAMP)
	$(VENV)/bin/tileclock sim $(ARGS)

test: $(STAMP)
	$(PY) -m pytest $(ARGS)

# the hall: a private mosquitto, 20 simulated clocks playing, the director's page (docs/hall.md)
hall-demo: $(STAMP)
	@[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || { \
	  echo "the demo needs Debian's broker: sudo apt-get install mosquitto"; exit 1; }
	$(VENV)/bin/tileclock hall-demo $(ARGS)

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
