"""The hall's commands answer a director's typo with one line, not a traceback."""

import io
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tileclock.cli import main
from tileclock.director.hall.broker import mosquitto_binary


@pytest.mark.parametrize("web", ["127.0.0.1:99999", "foo", "host:"])
def test_a_bad_page_address_is_named_with_an_example(web, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["hall", "--broker", "127.0.0.1", "--web", web])
    assert stop.value.code == 2
    assert f"{web!r}: give HOST:PORT with a port from 0 to 65535" in capsys.readouterr().err


def test_a_clock_id_reserved_on_the_broker_stops_the_simulator_with_one_line(tmp_path, monkeypatch, capsys):
    config = tmp_path / "tileclock.toml"
    config.write_text('[clock]\nid = "director"\n[hall]\nbroker = "127.0.0.1"\n')
    monkeypatch.setattr("sys.stdin", io.StringIO("1 press A\n"))
    assert main(["sim", "--config", str(config), "--script", "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "clock id 'director' is reserved" in err and "Traceback" not in err


@pytest.mark.skipif(mosquitto_binary() is None, reason="mosquitto is not installed (apt install mosquitto)")
def test_a_demo_whose_page_port_is_taken_says_so_and_leaves_no_broker_running(tmp_path, capsys):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    web = f"127.0.0.1:{taken.getsockname()[1]}"
    try:
        code = main(["hall-demo", "--clocks", "1", "--web", web, "--out", str(tmp_path)])
    finally:
        taken.close()
    assert code == 1
    assert f"the page cannot listen on {web}" in capsys.readouterr().err
    left = subprocess.run(["pgrep", "-f", f"mosquitto -c {tmp_path}"], capture_output=True, text=True)
    for pid in left.stdout.split():  # said below, but not left running on the machine
        os.kill(int(pid), signal.SIGKILL)
    assert left.stdout == "", "the demo's broker was left running"


def demo_process(folder, clocks):
    """`tileclock hall-demo` with `clocks` clocks, its records in `folder`, as a terminal runs it:
    a session (a process group) of its own, and SIGINT heard whatever runs the test (a background
    job, `make test &` or nohup, starts with it ignored, and the demo would inherit that)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tileclock", "hall-demo", "--clocks", str(clocks), "--web", "127.0.0.1:0"]
        + ["--out", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.skipif(mosquitto_binary() is None, reason="mosquitto is not installed (apt install mosquitto)")
@pytest.mark.parametrize("timed", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_ctrl_c_stops_the_demo_with_every_clock_offline_and_leaves_no_broker_running(tmp_path, timed):
    """Ctrl-C at a terminal reaches the whole process group. The broker used to die of it first, so
    each clock's `offline` waited out its time limit (20 clocks took 15 s to stop), or now its
    reconnect delay. The suite asserts the order, in the broker's own log: every clock left it
    cleanly before it stopped. The promise of a stop within 2 s is wall-clock time, which a loaded
    machine breaks: `make test-slow` times it."""
    demo = demo_process(tmp_path, 5)  # a terminal's foreground group of its own, for the Ctrl-C
    try:
        for line in demo.stdout:
            if "Ctrl-C to stop" in line:
                break
        os.killpg(demo.pid, signal.SIGINT)
        asked = time.monotonic()
        said, _ = demo.communicate(timeout=60)  # a hang's limit
        took_s = time.monotonic() - asked
        assert demo.returncode == 0, said
        assert "Traceback" not in said, said
        if timed:
            assert took_s < 2.0
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)  # its brokers too: a failed run must not leave them
            demo.wait()
    left = subprocess.run(["pgrep", "-f", f"mosquitto -c {tmp_path}"], capture_output=True, text=True)
    for pid in left.stdout.split():  # said below, but not left running on the machine
        os.kill(int(pid), signal.SIGKILL)
    assert left.stdout == "", "the demo's broker was left running"
    log = (tmp_path / "broker" / "mosquitto.log").read_text()
    stopped = log.index("terminating")
    for clock in range(1, 6):  # a DISCONNECT (after its `offline`), not a socket cut or nothing
        assert -1 < log.find(f"Client clock-{clock} disconnected.") < stopped, log


@pytest.mark.skipif(mosquitto_binary() is None, reason="mosquitto is not installed (apt install mosquitto)")
def test_sigterm_stops_the_demo_as_ctrl_c_does_and_leaves_no_broker_running(tmp_path):
    """`timeout`, a closed terminal or `kill` sends SIGTERM to the demo alone (not its group): it
    used to end at once and leave its two mosquittos running."""
    demo = demo_process(tmp_path, 1)  # its brokers are not in this test's group, as at a terminal
    try:
        for line in demo.stdout:
            if "Ctrl-C to stop" in line:
                break
        running = subprocess.run(["pgrep", "-f", f"mosquitto -c {tmp_path}"], capture_output=True, text=True)
        assert len(running.stdout.split()) == 2, "the demo's two brokers (the hall's and the viewers')"
        demo.send_signal(signal.SIGTERM)  # the process alone, as `timeout` and `kill` do
        said, _ = demo.communicate(timeout=60)  # a hang's limit
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
        left = subprocess.run(["pgrep", "-f", f"mosquitto -c {tmp_path}"], capture_output=True, text=True)
        for pid in left.stdout.split():  # said below, but never left running on the machine
            os.kill(int(pid), signal.SIGKILL)
    assert left.stdout == "", "the demo's brokers were left running"
    assert demo.returncode == 0, said
    assert "Traceback" not in said, said
    # it says where its games are as it stops (it left a temporary folder without a word)
    assert f"stopped: the demo's records are in {tmp_path}/records" in said, said


class Terminal(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


def hall_args(*argv):
    from tileclock.cli.parser import build_parser

    return build_parser().parse_args(["hall", "--broker", "127.0.0.1", *argv])


def test_the_director_s_password_never_has_to_be_on_the_command_line(tmp_path, capsys):
    """A password in argv is read by every user of the machine (/proc/PID/cmdline): a file, the
    environment, or a prompt; the old `--password VALUE` still works, with a warning."""
    from tileclock.cli.hall_checks import director_password

    secret = tmp_path / "director"
    secret.write_text("from-file\n")
    env = {"TILECLOCK_HALL_PASSWORD": "from-env"}
    assert director_password(hall_args("--password-file", str(secret)), env) == "from-file"
    assert director_password(hall_args(), env) == "from-env"
    assert director_password(hall_args(), {}) is None  # a broker without passwords
    asked = director_password(hall_args("--password"), {}, stdin=Terminal(True), ask=lambda prompt: "typed")
    assert asked == "typed" and capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="no terminal to ask on"):
        director_password(hall_args("--password"), {}, stdin=Terminal(False), ask=lambda prompt: "never")
    assert director_password(hall_args("--password", "old-way"), {}) == "old-way"
    warning = capsys.readouterr().err
    assert "visible to every user" in warning and "old-way" not in warning


def test_the_hall_is_opened_with_its_players_and_score_links_wired_in(tmp_path):
    """`open_hall`, which `tileclock hall` and `hall-demo` share: the pairings name the players
    on the feed (a call's banner), a phone address makes the score links the page and the feed use;
    without either, neither."""
    from support.tournament import TSH_FILES
    from tileclock.cli.hall import open_hall
    from tileclock.director.event.hall_pairings import HallPairings

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # no broker: the feed keeps trying in the background, as the hall does
    pairings = HallPairings(tsh=TSH_FILES)
    out, web = str(tmp_path / "with"), "127.0.0.1:0"
    hall = open_hall("127.0.0.1", port, None, out, web, pairings=pairings, phone="http://192.168.4.2:8080")
    try:
        assert hall.feed.players is not None and hall.page.pairings is pairings
        assert hall.page.links is hall.links and hall.links.base == "HTTP://192.168.4.2:8080"
        assert hall.links.stored in hall.feed._listeners and hall.page.scores is hall.scores  # subscribed
    finally:
        hall.close()
    bare = open_hall("127.0.0.1", port, None, str(tmp_path / "bare"), "127.0.0.1:0")
    try:
        assert bare.feed.players is None and bare.links is None and bare.page.links is None
        # the page's audit trail only, its outcomes on the disk before the records are acknowledged
        assert bare.feed._listeners == [] and [listener for listener, _ in bare.feed._before_ack] == [
            bare.page._answered
        ]
    finally:
        bare.close()


def test_the_players_door_and_the_spectators_broker_listen_on_ports_of_their_own():
    """Both ran on 8081 by default: on one laptop, as the docs lay the hall out, the second to
    start could not listen."""
    from tileclock.cli.parser import build_parser
    from tileclock.director.hall.viewers_broker import WEB_PORT

    args = build_parser().parse_args(["hall", "--broker", "127.0.0.1"])
    ports = {int(args.phones.rpartition(":")[2]), int(args.web.rpartition(":")[2]), WEB_PORT}
    assert len(ports) == 3
