"""Shared helpers: run the simulator the way a user does, and read its records; the session's
fixtures (Debian's chromium, once), the hypothesis profiles, and the markers set on each test."""

import inspect
import io
import os
import shutil
import sys
import uuid

import pytest
from hypothesis import settings

from tileclock.cli import main
from tileclock.clock.button_timing import ButtonTiming
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S
from tileclock.wire.protocol import unframe

# pytester: a test of the suite's own set-up runs pytest on a file it writes (test_style.py)
pytest_plugins = ["pytester"]
# the fixtures and helpers the test modules share (tests/support/): their asserts say what they
# saw, as a test module's do
pytest.register_assert_rewrite("support")

#: The most examples a hypothesis test runs in `make test` (and `make mutation`), whatever it asks
#: for with `examples(N)`; `make test-slow` (the `slow` profile) runs each such test's whole N.
EXAMPLES_CAP = 50
# No per-example deadline: the properties are about behaviour, and a loaded machine is slow.
settings.register_profile("tileclock", deadline=None)
# `make test-slow`: the hypothesis tests that ask for more than EXAMPLES_CAP run them all
settings.register_profile("slow", deadline=None)
# `make mutation` runs each test once per mutant: fewer examples there (a test's own @settings wins)
settings.register_profile("mutation", deadline=None, max_examples=20, database=None)
PROFILE = os.environ.get("TILECLOCK_HYPOTHESIS_PROFILE", "tileclock")
settings.load_profile(PROFILE)


def examples(wanted, cap=EXAMPLES_CAP):
    """`max_examples` for a hypothesis test that wants `wanted`: all of them in the `slow` profile
    (`make test-slow`), at most `cap` otherwise (EXAMPLES_CAP; fewer for a test whose every
    example starts a clock, more for one that counts what its examples reached), so `make test`
    stays quick."""
    return wanted if PROFILE == "slow" else min(wanted, cap)


def pytest_configure(config):
    """The run's name, for what its workers share (support/tournament.py's round, played once): set by
    the controller before it starts the workers, which inherit it."""
    os.environ.setdefault("TILECLOCK_TEST_RUN", uuid.uuid4().hex)


def pytest_unconfigure(config):
    """The controller (or a run without workers) removes what the run's workers shared."""
    if not hasattr(config, "workerinput"):
        from support.tournament import run_folder

        shutil.rmtree(run_folder(), ignore_errors=True)


# --- the markers, set on each test from what it uses (pyproject.toml lists them)

#: Names whose use in a test (its code, its fixtures', or a helper of its module it calls) starts a
#: child process: such a test is marked `process`.
STARTS_CHILDREN = frozenset({"subprocess", "Popen", "runpytest_subprocess", "fork", "multiprocessing"})


def _names(thing):
    """Every global and attribute name the code of a function (or a class's functions) uses,
    nested functions and lambdas included: read from the compiled code, not the source."""
    thing = inspect.unwrap(thing) if callable(thing) else thing
    if inspect.isclass(thing):
        return set().union(*(_names(value) for value in vars(thing).values() if inspect.isfunction(value)))
    code = getattr(thing, "__code__", None)
    names, todo = set(), [code] if code else []
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo += [const for const in code.co_consts if inspect.iscode(const)]
    return names


def _module_starters(module, cache={}):  # noqa: B006  (a cache by module, on purpose)
    """The names of `module`'s own functions and classes (and those it takes from tests/support/)
    that start child processes, directly or through another of them."""
    if module.__name__ not in cache:
        # its own, and those it takes from tests/support/ (shared by several test modules)
        helpers = {
            name: value
            for name, value in vars(module).items()
            if (inspect.isfunction(value) or inspect.isclass(value))
            and (value.__module__ == module.__name__ or value.__module__.startswith("support."))
        }
        uses = {name: _names(value) for name, value in helpers.items()}
        starters = set(STARTS_CHILDREN) | {
            name  # a shared helper that starts them by its own module's reckoning
            for name, value in helpers.items()
            if value.__module__ != module.__name__
            and value.__name__ in _module_starters(sys.modules[value.__module__])
        }
        while True:  # a helper that calls a helper that starts one
            more = {name for name, used in uses.items() if name not in starters and used & starters}
            if not more:
                break
            starters |= more
        cache[module.__name__] = starters
    return cache[module.__name__]


def _starts_children(item):
    """Whether the test starts a child process: its code, its fixtures' or a helper of its module
    it calls says so."""
    functions = [item.function]
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        functions += [definition.func for definition in definitions]
    starters = _module_starters(item.module)
    return any(_names(function) & starters for function in functions)


def _asks_many_examples(item):
    """Whether a hypothesis test asks for more than EXAMPLES_CAP examples (in the `slow` profile)."""
    asked = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    return asked is not None and asked.max_examples > EXAMPLES_CAP


@pytest.hookimpl(tryfirst=True)  # before -m selects by them, and before xdist groups by them
def pytest_collection_modifyitems(config, items):
    """broker: a real mosquitto (`broker`, `viewers_broker`); browser: Debian's chromium, all of
    them in one xdist group, so that one worker starts it (pytest 9.2 and xdist 3.8 ignore the
    group, pytest-xdist#1386: then each worker starts it once); root: loop mounts (`card`),
    network namespaces (`netns`);
    process: child processes; many_examples: more hypothesis examples than `make test` runs."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & {"broker", "viewers_broker"}:
            item.add_marker("broker")
        if "browser" in names:
            item.add_marker("browser")
            item.add_marker(pytest.mark.xdist_group("chromium"))
        if names & {"card", "netns"}:
            item.add_marker("root")
        if isinstance(item, pytest.Function) and _starts_children(item):
            item.add_marker("process")
        if _asks_many_examples(item):
            item.add_marker("many_examples")


@pytest.fixture
def sim(monkeypatch, capsys):
    """`sim(script, *options)`: run `tileclock sim --script -` on `script`; the records as dicts.

    Every line's integrity field is checked; the `boot` record that opens the output is left out.
    """

    def run(script, *options):
        monkeypatch.setattr("sys.stdin", io.StringIO(script))
        code = main(["sim", "--script", "-", *options])
        out = capsys.readouterr().out
        assert code == 0, out
        records = [unframe(line) for line in out.splitlines()]
        assert records[0]["ev"] == "boot"
        return records[1:]

    return run


def events(records, *names):
    """The records whose `ev` is one of `names`."""
    return [r for r in records if r["ev"] in names]


def used_at_switches(records):
    """What each `switch` record says each side has used, as (A ms, B ms)."""
    return [(r["A"]["used_ms"], r["B"]["used_ms"]) for r in events(records, "switch")]


def charged(presses, used=(0, 0)):
    """What each switch must say each side has used (ms) when a script makes `presses`, a list of
    (t_s, button): the first sets the other side running (a start or a resume, with `used` already
    charged), each after it ends the running side's turn, charged edge to edge."""
    other = {"A": "B", "B": "A"}
    used = dict(zip("AB", used, strict=True))
    (since, button), *ends = presses
    running, made = other[button], []
    for t_s, button in ends:
        assert button == running, "a script's press that ends no turn"
        used[running] += round((t_s - since) * 1000)
        made.append((used["A"], used["B"]))
        running, since = other[button], t_s
    return made


#: The accounts every test broker has: the director, the spectators' bridge, and clocks c1..c4.
BROKER_USERS = {
    "director": "director-secret",
    "viewers": "viewers-secret",
    **{f"c{n}": f"secret-{n}" for n in range(1, 5)},
}


def started(make, tries=3):
    """`make()` started: a broker on a port `free_port()` found free, which another test (another
    xdist worker) may take before mosquitto binds it; then it is tried again on another port."""
    from tileclock.director.hall.broker import BrokerError

    for attempt in range(tries):
        local = make()
        try:
            local.start()
        except BrokerError:
            if attempt == tries - 1:
                raise
            continue
        if local.process.poll() is None:  # not another's broker on that port, with ours gone
            return local
        local.stop()
    raise AssertionError(f"no broker started in {tries} tries")


@pytest.fixture
def broker(tmp_path):
    """A real mosquitto (Debian's) with the shipped hall config and ACL, on free loopback ports:
    TLS on `tls_port` (its CA `ca_file`), which the clocks and the director use (`hall_config`,
    `director`), and in the clear on `port`, for the tests' own probes (an impostor, a thief).

    Its accounts are `BROKER_USERS`. Where mosquitto is not installed the test is skipped with a
    reason, except in CI, which installs it (`.ci/run`): there a missing broker fails the test.
    """
    from tileclock.director.hall.broker import INSTALL_HINT, LocalBroker, mosquitto_binary

    if mosquitto_binary() is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have mosquitto: {INSTALL_HINT}")
        pytest.skip(f"mosquitto is not installed: {INSTALL_HINT}")
    local = started(lambda: LocalBroker(tmp_path / "broker", BROKER_USERS, tls=True, plain=True))
    yield local
    local.stop()


@pytest.fixture
def viewers_broker(broker, tmp_path):
    """The spectators' broker (a second mosquitto: WebSockets, the pages), bridged from `broker`."""
    from tileclock.director.hall.viewers_broker import ViewersBroker

    local = started(  # the bridge over TLS, as hall-setup's
        lambda: ViewersBroker(
            tmp_path / "viewers", broker.tls_port, BROKER_USERS["viewers"], hall_ca=broker.ca_file
        )
    )
    yield local
    local.stop()


#: Debian's chromium, as its old headless shell (package chromium-headless-shell: the same engine
#: and build, without the full browser's windowing layers, as Playwright itself runs headless);
#: measured on the browser tests, 74 s of CPU against 116 s for the full browser, the same pixels.
#: The full browser where only it is installed (a laptop); CI installs the shell (.ci/run).
CHROMIUMS = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium():
    """Debian's chromium under Playwright (never Playwright's own browser download), started once
    for the session: once in each xdist worker that runs a browser test."""
    binary = next((path for path in CHROMIUMS if os.access(path, os.X_OK)), None)
    if os.environ.get("CI") and binary != CHROMIUMS[0]:
        pytest.fail(
            "CI must have chromium's headless shell: apt-get install chromium-headless-shell (.ci/run does)"
        )
    if binary is None:
        pytest.skip("chromium is not installed: sudo apt-get install chromium-headless-shell")
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=binary, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def browser(chromium):
    """The session's chromium; every context a test opens in it is closed after the test, so
    nothing carries over to the next one."""
    before = set(chromium.contexts)
    yield chromium
    for context in set(chromium.contexts) - before:
        context.close()


@pytest.fixture
def page(browser):
    """A new page in a context of its own: nothing carries over from another test. No page of the
    hall raises the browser's own dialog (a command asks in the page's own, session.js's `ask`):
    one raised is dismissed, and fails the test after it."""
    context = browser.new_context()
    raised = []
    page = context.new_page()
    page.on("dialog", lambda dialog: (raised.append(dialog.message), dialog.dismiss()))
    yield page
    context.close()
    assert raised == [], f"the browser's own dialog was raised: {raised}"


def tap(target, button, t_s, hold_s=0.1):
    """Press `button` at `t_s` seconds and release it `hold_s` later.

    `target` is a `Simulator` (the edges go through its GPIO pins) or a bare `GameClock`
    (straight into its `edge`); for a `GameClock` the records it made are returned. A release
    counts once the contact has held open the glitch window (5 ms): the clock is run on to then.
    """
    edge = target.set_button if hasattr(target, "set_button") else target.edge
    down_ns = int(t_s * NS_PER_S)
    up_ns = down_ns + int(hold_s * NS_PER_S)
    made = [edge(button, True, down_ns), edge(button, False, up_ns)]
    settled_ns = up_ns + ButtonTiming().min_press_ms * NS_PER_MS
    if hasattr(target, "run_to"):
        target.run_to(settled_ns + 1)  # run_to stops short of its instant
    else:
        made.append(target.advance(settled_ns))
    return [record for records in made if records for record in records]
