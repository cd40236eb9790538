"""`make mutation`: mutmut over the modules issue 26 names, each group against the tests that cover it.

mutmut imports the mutated copy from `mutants/src/` (or `./`), so each group runs in its own
staging folder, build/mutation/GROUP/, holding `src/tileclock` (a copy of firmware/tileclock),
the tests and a pyproject.toml whose [tool.mutmut] names the group's files and tests. mutmut's
first pass records which test reaches which function; each mutant then runs only those tests, in
a forked child, with pytest-timeout's per-test limit (a mutant that loops is killed and counted).

    python tests/mutation/run.py [--sample] [GROUP ...]   # default: every group, whole
    python tests/mutation/run.py --again GROUP ...   # the last run's survivors, against the tests now
    python tests/mutation/run.py --report        # the figures of the last run of each group
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "mutation"

#: group -> (the files mutated, the test files that cover them)
GROUPS = {
    "wire": (
        ["src/tileclock/wire/*.py"],
        [
            "tests/test_wire_decoder.py",
            "tests/test_protocol.py",
            "tests/test_hall_seal.py",
            "tests/test_journal.py",
            "tests/test_session.py",
            "tests/test_identity.py",
            "tests/test_hall.py",
            "tests/test_noticed.py",
            "tests/test_wire_state.py",
            "tests/test_wire_commands.py",
        ],
    ),
    "sheet": (
        ["src/tileclock/director/event/sheet.py"],
        [
            "tests/test_sheet_rows.py",
            "tests/test_results.py",
            "tests/test_scores.py",
            "tests/test_round_mismatch.py",
        ],
    ),
    "session": (
        ["src/tileclock/director/follow/session.py"],
        [
            "tests/test_session.py",
            "tests/test_collect.py",
            "tests/test_collect_apart.py",
            "tests/test_collect_times.py",
            "tests/test_noticed.py",
        ],
    ),
    "journal": (
        [
            "src/tileclock/device/journal/__init__.py",
            "src/tileclock/device/journal/store.py",
            "src/tileclock/device/journal/outbox.py",
            "src/tileclock/device/journal/numbering.py",
            "src/tileclock/device/journal/retention.py",
            "src/tileclock/device/journal/readback.py",
            "src/tileclock/device/journal/lastgame.py",
            "src/tileclock/device/journal/writeback.py",
        ],
        [
            "tests/test_journal.py",
            "tests/test_journal_parts.py",
            "tests/test_crash.py",
            "tests/test_noticed.py",
            "tests/test_storage_faults.py",
            # the take-over of an old single-file log: the note the journal's start makes of it
            "tests/test_takeover.py",
        ],
    ),
    "clock": (
        ["src/tileclock/clock/*.py"],
        [
            "tests/test_gestures.py",
            "tests/test_rule_edges.py",
            "tests/test_director_rulings.py",
            "tests/test_display_and_penalty.py",
            "tests/test_turn_first.py",
            "tests/test_scene.py",
            "tests/test_history.py",
            "tests/test_history_scene.py",
            "tests/test_replay_instants.py",
            "tests/test_worn_switch.py",
            "tests/test_buttons.py",
            "tests/test_crash.py",
            "tests/test_simulator.py",
            # what the files above do not reach: a game taken up after a stop or from a damaged
            # journal (take_up, opening_lost, stand_in_opening), the director's reading of a game
            # (game_scene, take_scene), the loop's books (balanced), a round's set start; and the
            # clock's properties over random games
            "tests/test_take_up.py",
            "tests/test_journal.py",
            "tests/test_results.py",
            "tests/test_parts.py",
            "tests/test_round_start.py",
            "tests/test_properties.py",
            # a starting time refused in words (timecode)
            "tests/test_config.py",
            # the board's calls to the director (calls.py, and the gestures, requests and records
            # that carry them), and a restart after a repair on a full card (history.opening_lost):
            # the sample of 2026-11-26 found them reached by no file above, or killed only by these
            "tests/test_calls.py",
            "tests/test_storage_faults.py",
        ],
    ),
}

#: Tests that run tileclock as a child process (`python -m tileclock ...`): the child imports the
#: installed package, never the mutated copy, so they cannot kill a mutant; and at a high load one
#: of them failed mutmut's first pass, which stops a run. Left out of every group.
CHILD_PROCESS_TESTS = [
    "tests/test_takeover.py::test_a_kill_at_any_instant_of_the_take_over_loses_nothing",
    "tests/test_storage_faults.py::test_tileclock_run_never_stops_for_its_storage",
    "tests/test_storage_faults.py::test_doctor_names_a_state_directory_it_cannot_write_and_the_fix",
]

#: seconds a test may take under a mutant (pytest-timeout): a mutant that loops fails there
PER_TEST_TIMEOUT = 60
#: and in mutmut's first pass (the clean code, every call traced)
STATS_TIMEOUT = 600


#: Added to the staged tests/conftest.py. mutmut gives a function to the tests during which it ran;
#: a module-scoped fixture runs once, in the first test that asks for it, so the file's other
#: tests (the ones that look at what the fixture made) would never run against a mutant of it.
#: At the end of mutmut's first pass, a function reached by any test of a file goes to every test
#: of that file: each mutant runs against the test files that cover its module.
WHOLE_FILES = """

def pytest_sessionfinish(session):
    import collections

    if os.environ.get("MUTANT_UNDER_TEST") != "stats":
        return
    from mutmut.state import state

    by_file = collections.defaultdict(set)
    for item in session.items:
        by_file[item.nodeid.split("::")[0]].add(item.nodeid)
    for tests in state().tests_by_mangled_function_name.values():
        tests |= {test for name in {t.split("::")[0] for t in tests} for test in by_file[name]}


def pytest_collection_modifyitems(items):
    # under a mutant: the test files in order of their clean time, quickest first (each file's
    # tests kept together, so its module fixtures are made once), so most mutants die in a second
    import json
    import pathlib

    import pytest

    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        # mutmut's first pass traces every call, under nice on a loaded machine: a test that takes
        # 4 s alone took over 60 there, and a test failing that pass stops the run
        for item in items:
            item.add_marker(pytest.mark.timeout(STATS_TIMEOUT))
        return
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    stats = pathlib.Path(__file__).resolve().parent.parent / "mutmut-stats.json"
    if not stats.exists():
        return
    took = {}
    for test, seconds in json.loads(stats.read_text())["duration_by_test"].items():
        took[test.split("::")[0]] = took.get(test.split("::")[0], 0) + seconds
    items.sort(key=lambda item: took.get(item.nodeid.split("::")[0], 0))
"""


def stage(group):
    """A fresh staging folder for `group` (its earlier mutants/ kept: mutmut reuses what is unchanged)."""
    mutate, tests = GROUPS[group]
    where = BUILD / group
    where.mkdir(parents=True, exist_ok=True)
    for name in ("src", "tests"):
        shutil.rmtree(where / name, ignore_errors=True)
    shutil.copytree(
        ROOT / "firmware",
        where / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    shutil.copytree(ROOT / "tests", where / "tests", ignore=shutil.ignore_patterns("__pycache__", "mutation"))
    with open(where / "tests" / "conftest.py", "a") as conftest:
        conftest.write(WHOLE_FILES.replace("STATS_TIMEOUT", str(STATS_TIMEOUT)))
    pyproject = (ROOT / "pyproject.toml").read_text()
    pyproject += "\n[tool.mutmut]\n" + "\n".join(
        [
            'source_paths = ["src"]',
            f"only_mutate = {json.dumps(mutate)}",
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
            # the per-test limit, and no cache or hypothesis database carried from one mutant to the next
            "pytest_add_cli_args = "
            + json.dumps(
                ["-p", "no:cacheprovider", "-o", f"timeout={PER_TEST_TIMEOUT}", "-m", "not slow"]
                + [arg for test in CHILD_PROCESS_TESTS for arg in ("--deselect", test)]
            ),
            "use_git_change_detection = false",
            "track_dependencies = false",
            # a shared, loaded machine: mutmut's own limit (on top of pytest-timeout's) is generous
            "timeout_multiplier = 30.0",
            "timeout_constant = 20.0",
        ]
    )
    (where / "pyproject.toml").write_text(pyproject)
    return where


#: `--sample`: only the mutants whose number ends in 7, one in ten, for the groups too big to run
#: whole on a shared two-core machine in an afternoon (docs/testing.md says which were sampled)
SAMPLE = ["*__mutmut_*7"]


def survivors(where):
    """The names of the mutants that survived a group's last run, or that no test reached (a new
    test may reach them now)."""
    from mutmut.stats import status_by_exit_code

    return sorted(
        name
        for meta in (where / "mutants").rglob("*.py.meta")
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items()
        if status_by_exit_code[code] in ("survived", "no tests")
    )


def run(group, children, sample=False, again=False):
    """mutmut over `group`: every mutant, one in ten (`sample`), or only the last run's survivors
    against the tests as they are now (`again`)."""
    names = SAMPLE if sample else []
    if again:
        names = survivors(BUILD / group)
        if not names:
            return 0
    where = stage(group)
    mutmut = Path(sys.executable).with_name("mutmut")
    env = dict(os.environ, TILECLOCK_HYPOTHESIS_PROFILE="mutation")
    started = time.monotonic()
    code = subprocess.call([str(mutmut), "run", "--max-children", str(children), *names], cwd=where, env=env)
    seconds = round(time.monotonic() - started)
    print(f"mutation {group}: {seconds} s (mutmut exit {code})")
    if not again:  # the time of the whole (or sampled) run, as docs/testing.md gives it
        (where / "seconds").write_text(f"{seconds}\n")
    return code


def tally(where):
    """{status: count} of the mutants checked in a group's last run (mutmut's own names)."""
    from mutmut.stats import status_by_exit_code

    counts = {}
    for meta in (where / "mutants").rglob("*.py.meta"):
        for code in json.loads(meta.read_text())["exit_code_by_key"].values():
            status = status_by_exit_code[code]
            counts[status] = counts.get(status, 0) + 1
    return counts


def report():
    """Each group's killed / checked, and the survivors by name."""
    total = killed = 0
    mutmut = Path(sys.executable).with_name("mutmut")
    for group in GROUPS:
        where = BUILD / group
        if not (where / "mutants").exists():
            print(f"{group}: not run")
            continue
        counts = tally(where)
        checked = sum(n for status, n in counts.items() if status != "not checked")
        caught = counts.get("killed", 0) + counts.get("timeout", 0) + counts.get("segfault", 0)
        seconds = (where / "seconds").read_text().strip() if (where / "seconds").exists() else "?"
        print(
            f"{group}: {caught}/{checked} killed, of {checked + counts.get('not checked', 0)} mutants; {counts}; {seconds} s"
        )
        total += checked
        killed += caught
        subprocess.call([str(mutmut), "results"], cwd=where)
    if total:
        print(f"all: {killed}/{total} killed = {100 * killed / total:.1f}%")


def main(argv):
    children = int(os.environ.get("MUTATION_JOBS", "2"))
    if argv == ["--report"]:
        report()
        return 0
    sample, again = "--sample" in argv, "--again" in argv
    groups = [arg for arg in argv if arg not in ("--sample", "--again")]
    unknown = [group for group in groups if group not in GROUPS]
    if unknown:
        print(f"unknown group(s) {unknown}: the groups are {list(GROUPS)}")
        return 2
    failed = [group for group in groups or GROUPS if run(group, children, sample, again) != 0]
    report()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
