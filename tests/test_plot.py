"""The picture of a game, checked from what is drawn: every line and mark at the instant the records put it.

Needs the `director` extra (matplotlib); skipped cleanly without it. The checks read the drawn
artists (by their gid) and the SVG's element ids, not a stored image.
"""

import contextlib
import dataclasses
import io
import json
import os
import sys

import pytest

from support.tournament import ROUND_3, play_round
from tileclock.cli import main
from tileclock.director.records.gamefiles import load_games
from tileclock.director.records.history import read_records, split_games
from tileclock.director.records.plot import figure, game_svg, picture

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    records = play_round(str(tmp_path_factory.mktemp("plots")))
    paths = {table: os.path.join(records, f"board-{table}", "game-1.log") for table in ROUND_3}
    return {table: split_games(read_records(path))[0] for table, path in paths.items()}, paths


def _drawn(fig, gid):
    found = [a for axes in fig.axes for a in axes.get_children() if a.get_gid() == gid]
    assert found, f"nothing drawn with gid {gid}"
    return found


def _xy(fig, gid):
    (line,) = _drawn(fig, gid)
    return [round(float(x), 3) for x in line.get_xdata()], [round(float(y), 3) for y in line.get_ydata()]


def test_overtime_and_each_penalty_step_fall_at_their_instants(games):
    fig = figure(picture(games[0]["3"]))
    # B's clock runs from 26:00 with 25:00: -0:01 at 51:01, a step each minute, the cap passed at 61:01
    overtime_x, overtime_y = _xy(fig, "overtime-B")
    assert (overtime_x, overtime_y) == ([3061.0], [-1.0])
    steps_x, steps_y = _xy(fig, "penalty-B")
    assert steps_x == [3061.0 + 60 * n for n in range(10)]
    assert steps_y == [-1.0 - 60 * n for n in range(10)]
    assert _xy(fig, "forfeit-B") == ([3661.0], [-601.0])
    stair_x, stair_y = _xy(fig, "penalty-steps-B")
    assert stair_y[-1] == 100 and stair_x[stair_y.index(100)] == 3601.0
    # A went one minute over before that: one step, 10 points, at 25:01
    assert _xy(fig, "penalty-A") == ([1501.0], [-1.0])


def test_the_time_lines_follow_the_clock(games):
    fig = figure(picture(games[0]["1"]))
    xs, ys = _xy(fig, "remaining-A")
    assert (xs[0], ys[0]) == (0.0, 1500.0)
    assert ys[xs.index(1590.0)] == -90.0  # A pressed at 26:30 with 25:00: 1:30 over
    assert _xy(fig, "turns-A") == ([1590.0], [-90.0])
    bx, by = _xy(fig, "remaining-B")
    assert by[bx.index(1590.0)] == 1500.0 and by[-1] == 1500.0 - 210  # B ran 26:30 to 30:00
    with pytest.raises(AssertionError):
        _drawn(fig, "turns-B")  # B never ended a turn


def test_a_correction_is_a_step_at_its_instant(games):
    fig = figure(picture(games[0]["2"]))
    xs, ys = _xy(fig, "remaining-B")
    at = xs.index(605.6)
    assert xs[at + 1] == 605.6 and ys[at + 1] - ys[at] == 60.0
    assert _xy(fig, "corrections-B") == ([605.6], [ys[at + 1]])


def test_stops_absence_and_late_penalties_are_marked(games):
    fig = figure(picture(games[0]["5"]))
    (absent,) = _drawn(fig, "absent-A")
    assert (absent.get_x(), absent.get_x() + absent.get_width()) == pytest.approx((0.6, 390.0))
    assert _xy(fig, "late-penalty-A")[0] == [180.6, 360.6]
    stops = sorted((round(s.get_x(), 1), round(s.get_x() + s.get_width(), 1)) for s in _drawn(fig, "stopped"))
    assert stops[0] == (390.0, 400.0)  # arrival (STOP) to the first move
    assert _xy(fig, "arrived-A")[0] == [390.0]


def test_the_svg_keeps_every_mark_by_name(games):
    svg = game_svg(games[0]["3"], title="table 3", at_ms=3000_000)
    assert svg.startswith("<?xml")
    for gid in (
        "remaining-A",
        "remaining-B",
        "overtime-B",
        "penalty-B",
        "forfeit-B",
        "penalty-steps-A",
        "cursor",
    ):
        assert f'id="{gid}"' in svg
    assert "table 3" in svg
    assert game_svg(games[0]["3"], title="table 3", at_ms=3000_000) == svg  # the same game, the same file


def test_record_text_is_drawn_as_written_never_as_mathtext(games):
    """A forfeit reason is the clock's text: `$\\frac{$` in it once hung matplotlib's mathtext."""
    game = games[0]["3"]
    reason = "$\\frac{$ $x^2$"
    records = [dict(r, reason=reason) if r["ev"] == "forfeit" else r for r in game.records]
    svg = game_svg(dataclasses.replace(game, records=records), title="table $3$")
    assert "forfeit ($\\frac{$ $x^2$)" in svg and "table $3$" in svg


def _run(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def test_plot_and_replay_write_pictures(games, tmp_path):
    path = games[1]["3"]
    _run(["plot", path, str(tmp_path / "game.svg"), "--at", "51:01"])
    assert 'id="cursor"' in (tmp_path / "game.svg").read_text()
    _run(["plot", path, str(tmp_path / "game.png")])
    assert (tmp_path / "game.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = _run(
        [
            "replay",
            path,
            "--at",
            "51:01",
            "--png",
            str(tmp_path / "panels.png"),
            "--plot",
            str(tmp_path / "at.svg"),
        ]
    )
    assert "B:   -0:01  penalty  10" in printed
    assert (tmp_path / "panels.png").exists() and 'id="cursor"' in (tmp_path / "at.svg").read_text()


def test_export_writes_the_picture_beside_each_game(games, tmp_path):
    journal = games[1]["2"]
    written = _run(["export", "--journal", journal, str(tmp_path / "usb")]).split()
    assert sorted(os.path.basename(p) for p in written) == [
        "game-1.json",
        "game-1.png",
        "game-1.svg",
        "games.csv",
    ]
    (exported,) = json.loads((tmp_path / "usb" / "game-1.json").read_text())
    assert 'id="corrections-B"' in game_svg(exported["records"])
    assert exported["board"] == "2"  # the sheet can place a game copied off a USB stick
    ((_, _, board),) = load_games([str(tmp_path / "usb" / "game-1.json")])[0]
    assert board == "2"


def test_the_sheet_links_a_picture_of_each_game(games, tmp_path):
    from support.tournament import TSH_FILES

    records = os.path.dirname(os.path.dirname(games[1]["1"]))
    _run(["sheet", records, "--tsh", *TSH_FILES, "--round", "3", "--out", str(tmp_path)])
    page = (tmp_path / "round-3.html").read_text()
    (svg,) = (tmp_path / "round-3-pictures").glob("table-3-board-3-game-1-clock-*.svg")
    assert f'href="round-3-pictures/{svg.name}"' in page
    assert "Chen, Carol" in svg.read_text()  # the title names the players


def test_without_the_director_extra_the_message_says_how_to_get_it(games, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["plot", games[1]["1"], str(tmp_path / "x.svg")]) == 2
    assert "install the director extra" in capsys.readouterr().err
    written = _run(["export", "--journal", games[1]["1"], str(tmp_path / "usb")])
    assert "game-1.json" in written and "no game pictures" in written
    assert not (tmp_path / "usb" / "game-1.svg").exists()


def test_every_axis_says_its_unit(games):
    fig = figure(picture(games[0]["3"], "table 3"))
    times, pens = fig.axes[:2]
    assert "min:s" in times.get_ylabel() and "overtime" in times.get_ylabel()
    assert pens.get_ylabel() == "penalty (points)"
    assert "min:s" in pens.get_xlabel() and "since the game opened" in pens.get_xlabel()
