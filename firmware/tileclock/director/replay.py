"""`tileclock replay`: what both screens showed at any instant of a recorded game.

Between two records nothing changes but the running side's time (every
penalty step, forfeit and correction is a record of its own, at its instant),
so the view at any instant follows from the last record before it.
"""

from ..clock.core import SideView, View
from ..clock.timecode import format_clock
from .history import split_games


def _shown_seconds(shown):
    sign = -1 if shown.startswith("-") else 1
    minutes, seconds = shown.lstrip("-").split(":")
    return sign * (int(minutes) * 60 + int(seconds))


def view_at(game, at_ms=None, after_seq=None):
    """The `View` of `game` (its records) at `at_ms` since its start, or just after record `after_seq`."""
    if after_seq is not None:
        upto = [r for r in game if r["seq"] <= after_seq]
        if not upto:
            raise ValueError(f"seq {after_seq} is before this game (it starts at seq {game[0]['seq']})")
        record, at_ms = upto[-1], upto[-1]["t_ms"]
    else:
        upto = [r for r in game if r["t_ms"] <= at_ms]
        record = upto[-1]
    sides = {}
    for side in "AB":
        state = record[side]
        used_ms = state["used_ms"]
        shown = _shown_seconds(state["shown"])
        if record["run"] == side:
            limit_s = shown + used_ms // 1000  # the side's limit, corrections included
            used_ms += at_ms - record["t_ms"]
            shown = limit_s - used_ms // 1000
        late = any(r["ev"] == "late_start" and r.get("player") == side for r in upto) and not any(
            r.get("arrived") == side for r in upto
        )
        lost = any(r["ev"] == "forfeit" and r.get("player") == side for r in upto)
        sides[side] = SideView(used_ms, format_clock(shown), state["pen"], shown < 0, late, lost)
    return View(record["state"], record["run"], sides["A"], sides["B"]), record, at_ms


def pick_game(records, game_seq=None):
    """The game starting at `game_seq` (its `new_game` record's seq), or the last game."""
    games = split_games(records)
    if not games:
        raise ValueError("no game in this log")
    if game_seq is None:
        return games[-1]
    for game in games:
        if game[0]["seq"] == game_seq:
            return game
    raise ValueError(f"no game starts at seq {game_seq} (games start at {[g[0]['seq'] for g in games]})")


def describe(view, record, at_ms):
    """Plain text: the instant, the record it follows, and both sides as their screens showed them."""
    lines = [f"at {format_clock(at_ms // 1000)}.{at_ms % 1000:03d} of the game, after record {record['seq']} "
             f"({record['ev']} at {record['t_ms']} ms): {view.state}"]  # fmt: skip
    for side in "AB":
        mine = view.side(side)
        notes = [
            note
            for note, on in (("running", view.run == side), ("late", mine.late), ("lost on time", mine.lost))
            if on
        ]
        lines.append(
            f"  {side}: {mine.shown:>7}  penalty {mine.pen:3d}  used {mine.used_ms} ms  {' '.join(notes)}"
        )
    return "\n".join(lines)
