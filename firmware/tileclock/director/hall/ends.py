"""When a board's game can end at the latest (issue 41, point 4), as the page shows it.

A game under a rulebook with an overtime cap (NASPA V.G.3: ten minutes) ends at the latest when
both sides have used all their time and all their overtime: each side's time left (none in
overtime) plus what is left of its cap, counted from the board's last record for a running clock,
and from now for a stopped or not yet started one (a stopped clock is counted as stopped: its end
moves later while it stays so). Under a round limit (school rule 21: 50 minutes from the round's
start) the game ends by then at the latest. With neither, no latest end is known (None).
"""

import re

from ...clock.history import game_rules

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


def rules_of(game):
    """The `Rules` a game (a `Game` on file) is played under, from its `new_game`, or None."""
    first = game.records[0] if game is not None and game.records else None
    if not first or first.get("ev") != "new_game":
        return None
    try:
        return game_rules(first)
    except (KeyError, ValueError, TypeError):
        return None
