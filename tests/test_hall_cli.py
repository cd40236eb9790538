"""The hall's commands answer a director's typo with one line, not a traceback."""

import io

import pytest

from tileclock.cli import main


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
