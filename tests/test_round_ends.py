"""When the round will end (issue 41, point 4): each board's latest possible end, from scripted
games whose ends are known, and the round's on the page, through mosquitto and simulated clocks."""

import io
import json
import os
from contextlib import redirect_stdout

from support.fixed_feed import Feed
from support.fixed_feed import board as page_board
from support.hall_helpers import pages_question, wait_for
from support.round_hall import (
    hall,  # noqa: F401  (the fixture: three school clocks, the hall)
    records,
)
from tileclock.cli import main
from tileclock.clock.rules import PROFILES
from tileclock.director.hall.ends import TURNS_A_SIDE, latest_end, likely_end, pace, seconds
from tileclock.director.pages.web import HallPage

NOW_MS = 1_764_079_200_000
NASPA, SCHOOL, NSA = PROFILES["naspa"], PROFILES["school"], PROFILES["nsa1997"]


def board(state, a, b, age_ms=1000):
    return {"state": state, "A": {"shown": a}, "B": {"shown": b}, "age_ms": age_ms}


def test_under_naspa_both_sides_time_left_and_the_overtime_cap():
    # A has 3:00 left and all its cap; B is 2:00 into overtime: 8:00 of its cap left
    running = latest_end(NASPA, board("running", "3:00", "-2:00"), NOW_MS)
    assert running == NOW_MS - 1000 + (180 + 600 + 0 + 480) * 1000  # counted from its last record
    # a stopped clock is counted as stopped: from now, however old its record
    assert latest_end(NASPA, board("paused", "3:00", "-2:00", 90_000), NOW_MS) == NOW_MS + 1_260_000
    # a game not started: both full times and both caps from now
    assert latest_end(NASPA, board("ready", "25:00", "25:00"), NOW_MS) == NOW_MS + 70 * 60_000
    # past the cap on one side: nothing left of it
    assert latest_end(NASPA, board("running", "-10:00", "0:30", 0), NOW_MS) == NOW_MS + 630_000
    assert latest_end(NASPA, board("ended", "1:00", "1:00"), NOW_MS) is None
    assert latest_end(NSA, board("running", "3:00", "4:00"), NOW_MS) is None  # no cap: not known
    assert seconds("-0:41") == -41 and seconds("?") is None


def test_under_school_rules_the_round_limit_from_the_round_start():
    start = NOW_MS - 600_000
    assert latest_end(SCHOOL, board("running", "12:00", "9:00"), NOW_MS, start) == start + 50 * 60_000
    assert latest_end(SCHOOL, board("running", "12:00", "9:00"), NOW_MS) is None  # no start taken


def played(tmp_path, script, rules="naspa"):
    """The records of `script` played on a simulated clock under `rules` (as tests/support/tournament.py)."""
    config, path = tmp_path / "clock.toml", tmp_path / "game.script"
    config.write_text(f'[clock]\nboard = "7"\nrules = "{rules}"\n', encoding="utf-8")
    path.write_text(script, encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["sim", "--script", os.fspath(path), "--config", os.fspath(config)]) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    game = [r for r in lines if r.get("ev") != "status"]
    ended = next(i for i, r in enumerate(game) if r["ev"] == "end")
    return game[: ended + 1]  # its game, to its end (the simulator opens the next one)


def seen_at(game, t_ms):
    """The board as the hall's page has it `t_ms` into the game (the game's records up to then):
    its newest record's state and sides, that record's age, and each side's pace so far."""
    so_far = [r for r in game if r["t_ms"] <= t_ms]
    last = so_far[-1]
    return {
        "state": last["state"],
        "run": last["run"],
        "A": last["A"],
        "B": last["B"],
        "age_ms": t_ms - last["t_ms"],
        "pace": pace(so_far),
    }


def steady_script(a_turns, b_turns):
    """A game A starts (B's press starts A's clock), each side pressing after its turns' seconds in
    turn, ended by the director (STOP, hold STOP, STOP) 5 s after the last press; and its presses' times."""
    at, lines, presses = 0.0, ["0 press B"], []
    for a_s, b_s in zip(a_turns, b_turns, strict=True):
        for side, took in (("A", a_s), ("B", b_s)):
            at += took
            lines.append(f"{at:.1f} press {side}")
            presses.append(at)
    lines += [f"{at + 5:.1f} press STOP", f"{at + 10:.1f} hold STOP 2.5", f"{at + 13.5:.1f} press STOP"]
    return "\n".join(lines) + "\n", presses


def test_the_likely_end_of_a_steady_game_is_within_90_s_of_its_end(tmp_path):
    # 12 turns a side: A about 90 s a turn, B about 60 s, each turn off by up to 20 s
    a_turns = [90 + (-20, 10, 20, -10)[i % 4] for i in range(TURNS_A_SIDE)]
    b_turns = [60 + (15, -15, 0, 10)[i % 4] for i in range(TURNS_A_SIDE)]
    script, presses = steady_script(a_turns, b_turns)
    game = played(tmp_path, script)
    end_ms = game[-1]["t_ms"]
    assert game[-1]["ev"] == "end" and end_ms == round((presses[-1] + 13.5) * 1000)  # its end, as scripted
    # from A's fourth press on, at each press and halfway to the next, the likely end is within
    # 90 s of the game's end, and never after the latest end nor before now
    for t_s in [t for p, q in zip(presses[6:-1], presses[7:], strict=True) for t in (p, (p + q) / 2)]:
        t_ms = round(t_s * 1000)
        board = seen_at(game, t_ms)
        likely = likely_end(NASPA, board, t_ms)
        assert abs(likely - end_ms) <= 90_000, (t_s, likely - end_ms)
        assert t_ms <= likely <= latest_end(NASPA, board, t_ms)
    # exactly the game's pace at a press: what is left of 12 turns a side at each side's mean so far
    t_ms = round(presses[11] * 1000)  # B's 6th press: A's turn begins
    board = seen_at(game, t_ms)
    mean_a, mean_b = sum(a_turns[:6]) / 6, sum(b_turns[:6]) / 6
    assert likely_end(NASPA, board, t_ms) == t_ms + int(1000 * (mean_a * 6 + mean_b * 6))


def test_the_likely_end_is_the_latest_when_the_pace_uses_all_the_time(tmp_path):
    # A thinks 4 minutes a turn, B 3: 12 turns would take 48 and 36 minutes, past 25 + 10 each
    script, presses = steady_script([240] * 9, [180] * 9)
    game = played(tmp_path, script)
    for t_s in presses[2:12]:
        t_ms = round(t_s * 1000) + 30_000
        board = seen_at(game, t_ms)
        assert likely_end(NASPA, board, t_ms) == latest_end(NASPA, board, t_ms)
    # the game itself ends by then: A passes its overtime cap (V.G.3) on its 9th turn
    assert game[-1]["ev"] == "end" and game[-1]["reason"] == "forfeit"
    early = seen_at(game, round(presses[2] * 1000))
    assert game[-1]["t_ms"] <= latest_end(NASPA, early, round(presses[2] * 1000))


def test_the_likely_end_counts_a_stopped_clock_as_stopped_and_keeps_within_the_round():
    # 4 turns a side done at 60 s a turn each: 8 of 12 left a side
    paced = {"A": {"turns": 4, "used_ms": 240_000}, "B": {"turns": 4, "used_ms": 240_000}}
    stopped = {**board("paused", "21:00", "21:00", 90_000), "pace": paced, "run": None}
    stopped["A"]["used_ms"] = stopped["B"]["used_ms"] = 240_000
    assert likely_end(NASPA, stopped, NOW_MS) == NOW_MS + 16 * 60_000  # from now, however old the record
    running = {**stopped, "state": "running", "run": "A", "age_ms": 30_000}
    # A's turn has run 30 s since the record: 30 s less to come
    assert likely_end(NASPA, running, NOW_MS) == NOW_MS + 16 * 60_000 - 30_000
    # under school rules never past the round's limit from its start
    start = NOW_MS - 45 * 60_000
    assert likely_end(SCHOOL, running, NOW_MS, start) == start + 50 * 60_000
    # not started: no pace, all the time of both sides, within the latest end
    ready = {**board("ready", "25:00", "25:00"), "pace": pace([])}
    ready["A"]["used_ms"] = ready["B"]["used_ms"] = 0
    assert likely_end(NASPA, ready, NOW_MS) == NOW_MS + 50 * 60_000
    assert likely_end(NSA, ready, NOW_MS) == NOW_MS + 50 * 60_000  # no latest end, a likely one
    # one side's pace only: the other takes it (B not yet pressed: 12 turns of A's 60 s)
    one = {
        **ready,
        "state": "running",
        "run": "B",
        "age_ms": 0,
        "pace": {"A": {"turns": 1, "used_ms": 60_000}},
    }
    one["A"] = {"shown": "24:00", "used_ms": 60_000}
    assert likely_end(NASPA, one, NOW_MS) == NOW_MS + (11 + 12) * 60_000
    # past 12 turns: the side on turn finishes its turn at its pace, and no more; never before now
    long = {**stopped, "pace": {s: {"turns": 14, "used_ms": 14 * 60_000} for s in "AB"}}
    long["A"] = long["B"] = {"shown": "11:00", "used_ms": 14 * 60_000}
    assert likely_end(NASPA, long, NOW_MS) == NOW_MS  # stopped, and no press known: nobody on turn
    # stopped after B's press: A, on turn, still finishes its turn (at its 60 s)
    long_after_b = {**long, "pace": {**long["pace"], "B": {**long["pace"]["B"], "last": True}}}
    assert likely_end(NASPA, long_after_b, NOW_MS) == NOW_MS + 60_000
    long_turn = {**long, "state": "running", "run": "B", "age_ms": 20_000}
    assert likely_end(NASPA, long_turn, NOW_MS) == NOW_MS + 40_000
    assert likely_end(NASPA, {**stopped, "state": "ended"}, NOW_MS) is None


def test_the_round_panel_says_when_the_round_ends_at_the_latest(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    page.goto(server.address)
    page.locator(".board").nth(2).wait_for()
    page.fill("#round", "5")
    page.click("#start-round")
    pages_question(page)
    wait_for(lambda: all(records(clocks, c, "set") for c in ("c1", "c2", "c3")), what="every start taken")
    start_ms = records(clocks, "c1", "set")[-1]["start_ms"]

    def ends():
        return {
            b["clock"]: (b["latest_end_ms"], b["likely_end_ms"])
            for b in page.context.request.get(server.address + "api/boards").json()["boards"]
        }

    limit_ms = start_ms + 50 * 60_000
    wait_for(
        lambda: set(ends().values()) == {(limit_ms, limit_ms)}, what="each board's latest and likely end"
    )
    expected = page.evaluate(
        "ms => new Date(ms).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', hour12: false})",
        start_ms + 50 * 60_000,
    )
    line = page.locator("#round-ends")
    # nobody has pressed: the likely end is both sides' time from now, past the round's limit (the
    # laptop's now is long after the fixture's 14:00), so the limit
    said = f"Round 5 ends by {expected} at the latest, likely {expected}: Board c1, Board c2, Board c3 will be last"
    # the page's stream may still be a snapshot behind the API (one board's end known, not three)
    wait_for(lambda: line.inner_text() == said, what=f"the round panel to say {said!r}")
    assert (
        f"ends by {expected} at the latest, likely {expected}"
        in page.locator('.board[data-clock="c2"]').inner_text()
    )


def test_the_round_panel_names_the_boards_likely_last_by_their_pace(page):
    minutes = {7: (42, 20), 12: (41.5, 10), 31: (40, 19.5)}  # board: (latest, likely) from now
    boards = [
        page_board(
            n,
            "running",
            "A",
            ("15:00", 600_000),
            ("16:00", 540_000),
            latest_end_ms=NOW_MS + int(latest * 60_000),
            likely_end_ms=NOW_MS + int(likely * 60_000),
        )
        for n, (latest, likely) in minutes.items()
    ]
    server = HallPage(Feed(boards), port=0)
    server.rounds.current = {
        "round": 4,
        "start_ms": NOW_MS - 600_000,
        "start": "14:00:00",
        "boards": ["7", "12", "31"],
        "clocks": [b["clock"] for b in boards],
    }
    server.start()
    try:
        page.clock.set_fixed_time(NOW_MS)
        page.goto(server.address)

        def at(after_min):
            return page.evaluate(
                "ms => new Date(ms).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', hour12: false})",
                NOW_MS + int(after_min * 60_000),
            )

        line = page.locator("#round-ends")
        # the last likely ends (within a minute of the last) say which boards will be last, not the
        # latest ends (boards 7 and 12 by those)
        said = f"Round 4 ends by {at(42)} at the latest, likely {at(20)}: Board 7, Board 31 will be last"
        wait_for(lambda: line.inner_text() == said, what=f"the round panel to say {said!r}")
        card = page.locator('.board[data-clock="clock-12"] .ends').inner_text()
        assert card == f"ends by {at(41.5)} at the latest, likely {at(10)}"
    finally:
        server.close()


def test_a_spares_pace_counts_from_the_takeover_not_the_dead_clocks_time():
    """A spare's `used_ms` carries the dead clock's time: its turns there are taken at the pace of
    the turns seen since, not the whole time used over the spare's few presses."""

    def side(used_ms):
        return {"used_ms": used_ms, "shown": "x"}

    records = [
        {"ev": "new_game"},
        {"ev": "takeover", "A": side(600_000), "B": side(600_000)},  # 10 turns a side at 60 s, gone
        {"ev": "switch", "button": "A", "A": side(660_000), "B": side(600_000)},
        {"ev": "switch", "button": "B", "A": side(660_000), "B": side(660_000)},
    ]
    paces = pace(records)
    assert paces["A"] == {"turns": 1, "used_ms": 660_000, "base_ms": 600_000, "last": False}
    running = {**board("running", "14:00", "14:00", 0), "run": "A", "pace": paces}
    running["A"]["used_ms"] = running["B"]["used_ms"] = 660_000
    # 60 s a turn, 11 turns a side taken: one more each, 2:00 (not 11 turns at 11:00 each)
    assert likely_end(NASPA, running, NOW_MS) == NOW_MS + 120_000
