"""Shared helpers: run the simulator the way a user does, and read its records."""

import io
import json

import pytest

from tileclock.cli import main


@pytest.fixture
def sim(monkeypatch, capsys):
    """`sim(script, *options)`: run `tileclock sim --script -` on `script`; the records as dicts."""

    def run(script, *options):
        monkeypatch.setattr("sys.stdin", io.StringIO(script))
        code = main(["sim", "--script", "-", *options])
        out = capsys.readouterr().out
        assert code == 0, out
        return [json.loads(line) for line in out.splitlines()]

    return run


def events(records, *names):
    """The records whose `ev` is one of `names`."""
    return [r for r in records if r["ev"] in names]
