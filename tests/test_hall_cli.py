"""The hall's commands answer a director's typo with one line, not a traceback."""

import io
import socket
import subprocess

import pytest

from tileclock.cli import main
from tileclock.director.broker import mosquitto_binary


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
    assert left.stdout == "", "the demo's broker was left running"
