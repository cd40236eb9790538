"""When a board's game can end at the latest, and likely ends (issue 41, point 4), as the page shows it.

A game under a rulebook with an overtime cap (NASPA V.G.3: ten minutes) ends at the latest when
both sides have used all their time and all their overtime: each side's time left (none in
overtime) plus what is left of its cap, counted from the board's last record for a running clock,
and from now for a stopped or not yet started one (a stopped clock is counted as stopped: its end
moves later while it stays so). Under a round limit (school rule 21: 50 minutes from the round's
start) the game ends by then at the latest. With neither, no latest end is known (None).

The likely end (`likely_end`) is the game's pace carried on. A game has about `TURNS_A_SIDE` turns
a side, so each side is counted to use its mean turn time so far (its time used at its last press
over the turns it has pressed) times that many turns in all, less what it has used by now (past
them, the side on turn is counted to finish its turn, and no more); never more than its time left
and what is left of its overtime cap. A side with no turn pressed yet takes its opponent's pace,
or with neither pressed is counted to use all its time left (none of its overtime). The likely end
is now (a stopped clock counted as stopped) plus both sides' time still to come, and never later
than the latest end: exactly that when the pace says both sides will use all their time.
"""

import re

from ...clock.history import game_rules
from ...clock.pace import Pace

#: the turns a side takes in a typical game (100 tiles, about four a play: 22 to 26 turns in all)
TURNS_A_SIDE = 12

_SHOWN = re.compile(r"(-?)(\d{1,3}):(\d\d)")


def seconds(shown):
    """A side's time as a panel shows it (`12:31`, `-0:41`), in whole seconds, or None."""
    found = _SHOWN.fullmatch(str(shown))
    if not found:
        return None
    value = int(found[2]) * 60 + int(found[3])
    return -value if found[1] else value


def latest_end(rules, board, now_ms, took_start=None):
    """The latest time of day (ms) `board`'s game can end (`board`: the page's dict of it, its
    state, sides and the age of its last record), by `rules` (a `Rules`), or None: not in play, no
    cap and no round limit, or times it cannot read. `took_start`: the round's start the game took
    (ms), from which a round limit counts."""
    if rules is None or board.get("state") not in ("ready", "running", "paused"):
        return None
    ends = []
    if rules.overtime_cap_s is not None:
        left_s = 0
        for side in "AB":
            shown = seconds((board.get(side) or {}).get("shown"))
            if shown is None:
                return None
            left_s += max(0, shown) + max(0, rules.overtime_cap_s - max(0, -shown))
        running = board.get("state") == "running" and board.get("age_ms") is not None
        base_ms = now_ms - board["age_ms"] if running else now_ms
        ends.append(base_ms + left_s * 1000)
    if rules.round_limit_s is not None and took_start is not None:
        ends.append(took_start + rules.round_limit_s * 1000)
    return min(ends) if ends else None


def pace(records):
    """Each side's pace in a game's `records` (from its `new_game` on), as `clock.pace.Pace` takes
    it: {side: {"turns", "used_ms", "base_ms", "last"}}."""
    paces = Pace()
    for record in records:
        paces.take(record)
    return paces.sides


def likely_end(rules, board, now_ms, took_start=None):
    """The likely time of day (ms) `board`'s game ends, from its pace (`board["pace"]`, as `pace`
    gives it) carried on for `TURNS_A_SIDE` turns a side (see the module's docstring), or None when
    not in play or its times cannot be read; never later than `latest_end`, and never before
    `now_ms` unless that has passed."""
    if rules is None or board.get("state") not in ("ready", "running", "paused"):
        return None
    paces = board.get("pace") or {}
    means, turns_so_far = {}, {}
    for side in "AB":
        done = paces.get(side) or {}
        if done.get("turns"):
            base_ms = done.get("base_ms", 0)
            means[side] = max(0, done.get("used_ms", 0) - base_ms) / done["turns"]
            # a spare's game: its turns on the dead clock taken as at the same pace
            turns_so_far[side] = done["turns"] + (base_ms / means[side] if means[side] else 0)
    running = board.get("state") == "running" and board.get("age_ms") is not None
    to_come_ms = 0.0
    for side in "AB":
        shown = seconds((board.get(side) or {}).get("shown"))
        if shown is None:
            return None
        used_ms = (board.get(side) or {}).get("used_ms") or 0
        left_ms = shown * 1000
        # a stopped clock's side on turn (the one that did not press last) still has its turn to finish
        if board.get("state") == "paused":
            on_turn = (paces.get("B" if side == "A" else "A") or {}).get("last", False)
        else:
            on_turn = running and board.get("run") == side
        if on_turn and running:  # its clock has run on since the board's last record
            used_ms += board["age_ms"]
            left_ms -= board["age_ms"]
        most_ms = max(0, left_ms)
        if rules.overtime_cap_s is not None:
            most_ms += max(0, rules.overtime_cap_s * 1000 - max(0, -left_ms))
        mean = means.get(side, means.get("B" if side == "A" else "A"))
        if mean is None:  # no pace yet: all its time left (not its overtime)
            to_come_ms += max(0, left_ms)
            continue
        # past a typical game's turns, the side on turn is counted to finish its turn, and no more
        turns = max(TURNS_A_SIDE, turns_so_far.get(side, 0) + on_turn)
        to_come_ms += min(most_ms, max(0.0, mean * turns - used_ms))
    likely = now_ms + int(to_come_ms)
    latest = latest_end(rules, board, now_ms, took_start)
    return likely if latest is None else min(likely, latest)


def rules_of(game):
    """The `Rules` a game (a `Game` on file) is played under, from its `new_game`, or None."""
    first = game.records[0] if game is not None and game.records else None
    if not first or first.get("ev") != "new_game":
        return None
    try:
        return game_rules(first)
    except (KeyError, ValueError, TypeError):
        return None
