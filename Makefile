# The two commands of the quick start. Each makes the virtual environment on first use.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# `make sim`'s: the clock's own packages, without the tests' tools or the director's (STAMP has both)
SIM_STAMP := $(VENV)/.installed-sim
AT_LEAST_311 := -c 'import sys; print(int(sys.version_info >= (3, 11)))'

# Python 3.11 or later, checked first: one clear line instead of pip's errors further on.
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifneq ($(shell { $(PYTHON) $(AT_LEAST_311); } 2>/dev/null),1)
$(error tileclock needs Python 3.11 or later; $(PYTHON) is $(or $(shell { $(PYTHON) --version; } 2>/dev/null),not found). \
Install one (Debian, Ubuntu: sudo apt install python3.11-venv) and run: make PYTHON=python3.11)
endif
# A .venv made by another interpreter (too old, or gone since) is made again.
ifneq ($(shell { $(PY) $(AT_LEAST_311); } 2>/dev/null),1)
$(shell rm -rf $(VENV))
endif
endif

.PHONY: sim test test-quick test-slow mutation lint clean hall-demo hall-bench spectators-bench hall-chaos tools pi-kernel-check pi-install-check image image-check

sim: $(SIM_STAMP)
	$(VENV)/bin/tileclock sim $(ARGS)

# four workers (pytest-xdist) on two cores, as the suite waits on brokers, browsers and child
# processes half the time; each starts chromium at most once; bytecode is kept, so a worker does not
# rewrite every test module's asserts again; the 25 slowest tests are named. On a fresh clone the
# asserts are rewritten once first, in two halves at once (COLLECT), not by each of the four
# workers over again (6 s of CPU each)
COLLECT := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -qq --collect-only -p no:xdist -p no:cacheprovider
test: $(STAMP)
	@ls tests/__pycache__/test_*-pytest-*.pyc >/dev/null 2>&1 || { \
	  ls tests/test_*.py | awk 'NR % 2' | xargs $(COLLECT) >/dev/null 2>&1 & \
	  ls tests/test_*.py | awk 'NR % 2 == 0' | xargs $(COLLECT) >/dev/null 2>&1; wait; }
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n 4 --dist loadgroup --durations=25 $(ARGS)

# the edit loop: no broker, browser, child process, loop mount or slow run (tests/conftest.py marks them)
test-quick: $(STAMP)
	$(PY) -m pytest -m "not (broker or browser or process or root or slow)" --durations=25 $(ARGS)

# the slow runs: many more hypothesis examples (chatter on every gesture; each test that asks for more
# than `make test` runs, the slow profile), large loads (each may take up to 30 minutes, where
# `make test` gives a test 150 s)
test-slow: $(STAMP)
	TILECLOCK_HYPOTHESIS_PROFILE=slow $(PY) -m pytest -m "slow or many_examples" -o timeout=1800 --durations=25 $(ARGS)

# mutmut over clock/, the journal, wire/, the director's sheet and session, each against the tests
# that cover it (docs/testing.md, "Mutation testing"; hours on a busy two-core machine, so never in
# `make test` or CI). GROUPS: some of wire sheet session journal clock (default: all); the figures
# and the survivors: `$(PY) tests/mutation/run.py --report`.
mutation: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	nice -n 10 $(PY) tests/mutation/run.py $(GROUPS)

# the director's tools on a laptop (every director's command), in .venv
tools: $(STAMP)
	@echo "the director's tools: $(VENV)/bin/tileclock (collect, hall, hall-demo, hall-setup, spectators, sheet, scores, replay, export, plot)"
	@command -v zbarimg >/dev/null || echo "the tests read the panels' QR codes with Debian's zbarimg: sudo apt-get install zbar-tools"

# the hall: a private mosquitto, 20 simulated clocks playing, the director's page (docs/hall.md)
hall-demo: $(STAMP)
	@[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || { \
	  echo "the demo needs Debian's broker: sudo apt-get install mosquitto"; exit 1; }
	$(VENV)/bin/tileclock hall-demo $(ARGS)

# the hall at 200 clocks (docs/performance.md, "The hall"), then the same run with the clocks' states
# carrying no health: the two tables side by side are the health column's cost (issue 40). Each
# takes about 6 minutes of both cores and needs mosquitto; CLOCKS=40 for a smaller pair
CLOCKS ?= 200
hall-bench: $(STAMP)
	nice -n 10 $(VENV)/bin/tileclock hall-bench --clocks $(CLOCKS) $(ARGS)
	nice -n 10 $(VENV)/bin/tileclock hall-bench --clocks $(CLOCKS) --no-health $(ARGS)

# what 1,000 spectators on the spectators' broker cost `tileclock hall` (about 4 minutes; needs mosquitto)
spectators-bench: $(STAMP)
	$(VENV)/bin/tileclock hall-bench --spectators 1000 $(ARGS)

# the hall on bad Wi-Fi: stalls, loss, an access point's reboot, a one-way fault, the laptop asleep, each
# with its figures (ARGS=--quick: 8 clocks, short faults; ARGS="--clocks 200 --processes 4": 4 x 50;
# ARGS=--netns, as root: each group in a network namespace, the outages made on its link)
hall-chaos: $(STAMP)
	$(VENV)/bin/tileclock hall-bench --chaos $(ARGS)

# the gpiod buttons on a real Linux kernel: Debian's kernel in QEMU, gpio-sim lines, the real
# `tileclock run` (docs/reliability.md, "The buttons on a real kernel"; root on Debian bookworm amd64)
pi-kernel-check: $(STAMP)
	bash hw/kernel-check/run.sh

# the installer on a Debian bookworm root of ARCH (arm64, or armhf) under qemu-user-static, as root:
# install, doctor and a scripted game inside it (docs/build-guide.md). The root is cached in
# ~/.cache/tileclock/roots (TILECLOCK_ROOTS); the first run debootstraps it (about 4 minutes).
ARCH ?= arm64
pi-install-check: $(STAMP)
	nice -n 10 bash systemd/pi-install-check.sh $(ARCH)

# ruff: the same format and lint rules on the whole tree (CI runs this before the tests); mypy: the
# loop against the Protocols of its parts and the assembly that hands them over (pyproject's tool.mypy)
lint: $(STAMP)
	$(VENV)/bin/ruff format --check firmware tests hw
	$(VENV)/bin/ruff check firmware tests hw
	$(VENV)/bin/mypy

# the card a director flashes (docs/build-guide.md): Debian bookworm arm64 and this checkout's wheel,
# as root, no loop devices or mounts; the slow stages cached in ~/.cache/tileclock/image
image:
	bash hw/image/build.sh

# boots that card under qemu-system-aarch64 (-M raspi3b, -M virt) and checks its first boot
image-check:
	bash hw/image/check.sh

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,director]'
	touch $(STAMP)

# the simulator needs only the clock (about a sixth of STAMP's install); a .venv that `make test`
# filled already has it, and is used as it is
$(SIM_STAMP): pyproject.toml
	@[ $(STAMP) -nt pyproject.toml ] || { set -x; $(PYTHON) -m venv $(VENV) && \
	  $(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e .; }
	touch $(SIM_STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache
