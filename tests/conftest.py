"""Shared helpers: run the simulator the way a user does, and read its records."""

import io

import pytest
from hypothesis import settings

from tileclock.cli import main
from tileclock.clock.protocol import unframe

# No per-example deadline: the properties are about behaviour, and a loaded machine is slow.
settings.register_profile("tileclock", deadline=None)
settings.load_profile("tileclock")


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
