"""The commands that run until stopped (or for minutes) meet a newcomer's mistakes at once: one line
naming the argument and the value, a non-zero exit, no traceback, and nothing left running.

test_mistakes.py does the same for the commands that finish by themselves; together they cover
every command `tileclock --help` lists (the last test here checks that).
"""

import glob
import signal
import subprocess
import sys
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from support.command_line import OPTIONS, WORDS, run
from tileclock.cli.parser import build_parser

#: a mistake must be met within this (a command that starts running instead would run on)
BOUND_S = 10


class StillRunning(BaseException):
    """Raised into a command still running after `BOUND_S`: a BaseException, so no command's
    `except Exception` swallows it."""


@contextmanager
def bounded(seconds=BOUND_S):
    """Stop what runs inside after `seconds` with StillRunning."""

    def stop(signum, frame):
        raise StillRunning(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def one_line_error(code, err):
    """The command refused: exit 1 or 2, and one line of error (after argparse's usage, if any)."""
    assert code in (1, 2), err
    assert "Traceback" not in err, err
    if err.startswith("usage: "):  # argparse's: its usage, then the error (which may quote a newline)
        return err[err.index("\ntileclock") + 1 :]
    assert err.startswith("tileclock") and err.count("\n") == 1, err
    return err


@pytest.fixture
def paths(tmp_path):
    """The things a newcomer points at by mistake."""
    (tmp_path / "a-file").write_text("not a port, not a folder\n")
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "bad.toml").write_text("[clock\n")
    (tmp_path / "bad-key.toml").write_text("[clock]\ncolour = 3\n")
    from tileclock.director.hall.broker import free_port

    return {
        "file": tmp_path / "a-file",
        "dir": tmp_path / "a-folder",
        "missing": tmp_path / "no-such-thing",
        "bad_toml": tmp_path / "bad.toml",
        "bad_key": tmp_path / "bad-key.toml",
        "tmp": tmp_path,
        "closed": free_port(),  # a port nothing listens on
    }


MISTAKES = [
    # collect: runs until Ctrl-C, so a port that can never open is refused before it starts
    (["collect"], "the following arguments are required: PORT"),
    (["collect", "{missing}"], "port {missing}: no such port"),
    (["collect", "{dir}"], "port {dir}: a folder, not a serial port"),
    (["collect", "{file}"], "port {file}: a file, not a serial port"),
    (["collect", "loop://", "--idle-exit"], "argument --idle-exit: expected one argument"),
    (["collect", "loop://", "--idle-exit", "-1"], "argument --idle-exit: '-1': give a number of 0 or more"),
    (["collect", "loop://", "--round", "0"], "argument --round: '0': give a whole number from 1 to 999"),
    (["collect", "loop://", "--round", "three"], "argument --round: 'three': give a whole number"),
    (["collect", "loop://", "--tables", "{missing}"], "{missing}: No such file or directory"),
    (["collect", "loop://", "--tables", "{dir}"], "{dir}: Is a directory"),
    (["collect", "loop://", "--out", "{file}"], "--out {file}: a file, not a folder"),
    (["collect", "loop://", "--colour"], "unrecognized arguments: --colour"),
    # hall: runs until Ctrl-C, so a broker nobody answers for is refused before it starts
    (["spectators", "--listen", "nowhere"], "argument --listen: 'nowhere': give HOST:PORT"),
    (["spectators", "--broker-port", "99999"], "argument --broker-port: '99999': give a whole number from 1 to 65535"),
    (["hall"], "the following arguments are required: --broker"),
    (["hall", "--broker", "127.0.0.1", "--port", "99999"], "argument --port: '99999': give a whole number from 1 to 65535"),
    (["hall", "--broker", "127.0.0.1", "--port", "{closed}"], "--broker 127.0.0.1 --port {closed}: nothing answers there"),
    (["hall", "--broker", "no-such-host.invalid"], "--broker no-such-host.invalid: no such host"),
    (["hall", "--broker", "127.0.0.1", "--password-file", "{missing}"], "--password-file {missing}: No such file"),
    (["hall", "--broker", "127.0.0.1", "--password-file", "{dir}"], "--password-file {dir}: Is a directory"),
    (["hall", "--broker", "127.0.0.1", "--tls-ca", "{missing}"], "--tls-ca {missing}: no such file"),
    (["hall", "--broker", "127.0.0.1", "--tls-ca", "{dir}"], "--tls-ca {dir}: a folder"),
    (["hall", "--broker", "127.0.0.1", "--serial", "{file}"], "port {file}: a file, not a serial port"),
    (["hall", "--broker", "127.0.0.1", "--out", "{file}"], "--out {file}: a file, not a folder"),
    # run: the service, until stopped
    (["run", "--simulate", "--config", "{missing}"], "cannot read config {missing}: No such file"),
    (["run", "--simulate", "--config", "{dir}"], "cannot read config {dir}: Is a directory"),
    (["run", "--simulate", "--config", "{bad_toml}"], "{bad_toml} is not valid TOML"),
    (["run", "--simulate", "--config", "{bad_key}"], "{bad_key}: unknown key clock.colour = 3"),
    (["run", "--simulate", "--script", "{missing}"], "{missing}: No such file"),
    (["run", "--script", "{file}"], "--script presses simulated buttons: it needs --simulate"),
    (["run", "--simulate", "--stay"], "--stay keeps the clock running after its --script ends: it needs --script"),
    (["run", "--simulate", "--timings", "{dir}"], "--timings {dir}: a folder; give a file name in it"),
    (["run", "--simulate", "--timings", "{missing}/t.json"], "--timings {missing}/t.json: there is no folder {missing}"),
    (["run", "--state-dir"], "argument --state-dir: expected one argument"),
    (["run", "--line", "{tmp}/line"], "--line is a simulated cable, for a simulated clock: it needs --simulate"),
    (["run", "--simulate", "--line", "{missing}/line"], "--line {missing}/line: No such file or directory"),
    (["run", "--simulate", "--state-dir", "{file}"], "--state-dir {file}: a file, not a folder"),
    # bench and hall-bench: minutes of measuring, so their arguments are checked first
    (["bench", "--state-dir", "{file}"], "--state-dir {file}: a file, not a folder"),
    (["bench", "--state-dir", "{missing}"], "--state-dir {missing}: no such folder"),
    (["bench", "--quick", "--runs", "3"], "unrecognized arguments: --runs 3"),
    (["hall-bench", "--clocks", "0"], "argument --clocks: '0': give a whole number of 1 or more"),
    (["hall-bench", "--processes", "two"], "argument --processes: 'two': give a whole number of 1 or more"),
    (["hall-bench", "--speed", "-30"], "argument --speed: '-30': give a number of 0.01 or more"),
    (["hall-bench", "--speed", "inf"], "argument --speed: 'inf': give a number of 0.01 or more"),
    (["hall-bench", "--out", "{file}"], "--out {file}: a file, not a folder"),
    (["hall-bench", "--netns"], "--netns: the namespaces are --chaos's (hall-bench --chaos --netns)"),
    (["hall-bench", "--chaos", "--no-health"], "--no-health: for the plain run, to set beside one with it"),
    # hall-demo: a broker and clocks until Ctrl-C
    (["hall-demo", "--clocks", "-1"], "argument --clocks: '-1': give a whole number of 1 or more"),
    (["hall-demo", "--speed", "0"], "argument --speed: '0': give a number of 0.01 or more"),
    (["hall-demo", "--out", "{file}"], "--out {file}: a file, not a folder"),
    (["hall-demo", "--web", "localhost:http"], "argument --web: 'localhost:http': give HOST:PORT"),
    # hall-setup: writes a broker's accounts
    (["hall-setup"], "the following arguments are required: folder"),
    (["hall-setup", "{file}"], "hall-setup {file}: a file, not a folder"),
    (["hall-setup", ""], "hall-setup: give the folder to write them in (. for this one)"),
    (["hall-setup", "{tmp}/hall", "--clock", "table 1"], "--clock 'table 1' cannot be a clock id"),
    (["hall-setup", "{tmp}/hall", "--clock", "director"], "--clock 'director' cannot be a clock id"),
    # doctor: its report is its answer, a config it cannot read is one line of it
    (["doctor", "--config", "{bad_toml}"], "FAIL  config: {bad_toml} is not valid TOML"),
    (["doctor", "--config", "{bad_key}"], "FAIL  config: {bad_key}: unknown key clock.colour = 3"),
    (["doctor", "--config", "{dir}"], "FAIL  config: cannot read config {dir}: Is a directory"),
    (["doctor", "--state-dir"], "argument --state-dir: expected one argument"),
]  # fmt: skip  # one mistake a line


@pytest.mark.parametrize("argv, says", MISTAKES, ids=[" ".join(argv) for argv, _ in MISTAKES])
def test_a_mistake_is_met_at_once_with_one_line_naming_it(paths, monkeypatch, argv, says):
    monkeypatch.chdir(paths["tmp"])  # whatever it writes, it writes here
    argv = [word.format(**paths) for word in argv]
    with bounded():
        code, out, err = run(argv)
    if argv[0] == "doctor" and code == 1:  # the report, on stdout: a failing check, with its fix
        assert any(line.startswith(says.format(**paths)) for line in out.splitlines()) and err == ""
        return
    assert says.format(**paths) in one_line_error(code, err)
    if argv[0] == "hall-setup":
        assert not (paths["tmp"] / "hall").exists()  # nothing written for a refused clock id


def test_doctor_says_a_state_directory_that_is_a_file_is_one(paths, monkeypatch):
    """It said "does not exist yet" (a warning) of a file in the journal's place."""
    config = paths["tmp"] / "clock.toml"
    config.write_text("[clock]\n")
    with bounded():
        code, out, _ = run(["doctor", "--config", str(config), "--state-dir", str(paths["file"])])
    assert code == 1
    assert f"FAIL  state directory: {paths['file']} is a file, not a folder" in out.splitlines()


@pytest.mark.skipif(bool(glob.glob("/dev/gpiochip*")), reason="this machine has GPIO: the service would run")
def test_run_off_a_pi_says_why_in_one_line_without_gpiozero_s_warnings(tmp_path):
    """gpiozero warned in two lines for each backend it fell back from, before the one line that
    says it all (and points to `tileclock doctor`)."""
    config = tmp_path / "clock.toml"
    config.write_text("[clock]\n")
    argv = ["run", "--config", str(config), "--state-dir", str(tmp_path / "state")]
    result = subprocess.run(
        [sys.executable, "-m", "tileclock", *argv], capture_output=True, text=True, timeout=BOUND_S * 3
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "warnings.warn" not in result.stderr and "PinFactoryFallback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "tileclock: cannot use the buttons with pin backend 'auto'"
    )


def test_hall_refused_by_the_broker_says_so_and_stops(broker, tmp_path, monkeypatch):
    """A wrong password: the broker refuses the director's login; the command stops with one line."""
    monkeypatch.setenv("TILECLOCK_HALL_PASSWORD", "wrong")  # never on the command line (ps shows it)
    argv = ["hall", "--broker", "127.0.0.1", "--port", str(broker.port)]
    with bounded(15):
        code, _, err = run(
            [*argv, "--out", str(tmp_path / "records"), "--web", "127.0.0.1:0", "--phones", "127.0.0.1:0"]
            + ["--plain-http", "both"]  # no page certificate here: the flag that says so
        )
    assert f"the broker at 127.0.0.1:{broker.port} refused the director" in one_line_error(code, err)
    assert "--password" in err


# Any arguments to the commands that run on: a one-line refusal, or the command starts (stubbed
# here: what would run is replaced by a return), never a traceback or a hang in the checks.
RUNNING = {
    "collect": ["--out", "--idle-exit", "--round", "--table", "--tables", "--time", "loop://"],
    "hall": ["--broker", "--port", "--password", "--password-file", "--tls-ca", "--keys", "--out", "--serial", "--web", "--allow-host", "--page-tls", "--plain-http"],
    "run": ["--config", "--state-dir", "--simulate", "--script", "--timings", "--stay", "--line"],
    "bench": ["--json", "--quick", "--state-dir"],
    "hall-bench": ["--json", "--quick", "--clocks", "--processes", "--viewers", "--speed", "--out", "--netns"],
    "hall-setup": ["--clock"],
}  # fmt: skip  # one command a line
STUBS = {
    "tileclock.director.follow.collect.collect": lambda *args, **kwargs: [],
    "tileclock.cli.hall.reach": lambda host, port, tls_ca=None: None,
    "tileclock.cli.hall.serve_hall": lambda *args, **kwargs: 0,
    "tileclock.device.service.Service": lambda *args, **kwargs: type(
        "Stub", (), {"run": lambda *a, **k: 0}
    )(),
    "tileclock.bench.run.main": lambda *args: 0,
    "tileclock.bench.hall.main": lambda *args, health=True: 0,
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(sorted(RUNNING)), data=st.data())
def test_any_arguments_are_refused_in_one_line_or_start(paths, monkeypatch, command, data):
    monkeypatch.chdir(paths["tmp"])
    for target, stub in STUBS.items():
        monkeypatch.setattr(target, stub)
    given_paths = st.sampled_from([str(paths[name]) for name in ("file", "dir", "missing", "bad_toml")])
    words = data.draw(st.lists(st.sampled_from(RUNNING[command]) | WORDS | given_paths, max_size=6))
    with bounded():
        code, _, err = run([command, *words], "0 press B\n")
    event("started" if code == 0 else "refused")
    if code != 0:
        one_line_error(code, err)


def test_every_command_is_tried_here_or_in_test_mistakes():
    listed = set(build_parser()._subparsers._group_actions[0].choices)
    tried = {argv[0] for argv, _ in MISTAKES} | set(OPTIONS)
    assert listed == tried
