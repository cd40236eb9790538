"""Moving a dead clock's game to a spare (issue 40 point 4; docs/director-guide.md, "A spare
clock"): what the hall checks before it sends the spare its `takeover` (clock/spare.py).

The game is computed from the hall's own copy of the dead clock's records (the store's game of
it), so it ends where the hall heard the dead clock last, with the board's call still open there
(the spare's board then shows it, and the page answers it on the spare). Refused: a dead clock with no game in
play there (none, or ended), a spare that is not online or is in a game (its game is not fresh),
and a game some clock has taken over already (its `takeover` record is in that clock's game).

The dead clock may come back (restarted later): once the spare's `takeover` is on file, the first
record it sends for that game after the seq the spare continued from has the hall tell it
(`came_back`: a `moved` command, audited), so it ends the game there; its late records are kept
apart and never counted (`follow/clocklog.py`, `after-move-SEQ-CLOCK.log`). The word is on the
audit trail once: a hall restarted reads what it told from there (`told_before`) and, should the
clock still not have recorded it, says the same command again under the same id, never a new line.

Presses the dead clock made before the move that reach the hall only when it comes back (its link
was down, not the clock) are time the spare does not know (`records/moved.py`'s `late_time`): once
its late records end (its `moved`, or its `boot` when it was restarted), the hall says so on the
audit trail (action `late_records`, once: `flagged_before` reads it back) and in the notices, and
both boards on the page show it (`board.py`): the game changes only by a director's correction.
"""

import logging

from ...clock.history import game_rules, game_scene
from ...clock.spare import NoGame, handover
from ..records.moved import late_time
from .audit_read import read

logger = logging.getLogger(__name__)


def taken_by(games, clock, game_seq):
    """The clock whose game (`games`: {clock id: its current `Game` or None}) took over `clock`'s
    game `game_seq`, or None."""
    for other, game in games.items():
        for record in game.records if game else ():
            if record["ev"] == "takeover" and (record["from"], record["from_game"]) == (clock, game_seq):
                return other
    return None


def move(games, boards, clock, spare, sent=None):
    """(the `takeover` `Handover`, None) for moving `clock`'s game to `spare`, or (None, why not).

    `games`: {clock id: its current game in the hall's store (a `history.Game`) or None};
    `boards`: {clock id: its board as the page shows it (`online`, `state`)}; `sent`: {(clock,
    game seq): spare} of the moves this hall has sent (their `takeover` may not be back yet)."""
    if spare == clock:
        return None, "not sent: a game cannot move to the clock it is on"
    game = games.get(clock)
    if game is None:
        return None, f"not sent: the hall holds no game of clock {clock}"
    board = boards.get(spare)
    if board is None or not board.get("online", False):
        return None, f"not sent: clock {spare} is not online"
    if board.get("state") != "ready":
        return (
            None,
            f"not sent: clock {spare} is in a game ({board.get('state')}): start a new game on it first",
        )
    other = (sent or {}).get((clock, game.seq)) or taken_by(games, clock, game.seq)
    if other is not None:
        return None, f"not sent: clock {clock}'s game {game.seq} was taken over by clock {other} already"
    try:
        return handover(clock, game.records, game_rules(game.first)), None
    except (NoGame, KeyError, ValueError) as error:
        return None, f"not sent: {error}"


def scene_command(game):
    """The `set` that gives a spare the round and table of `game` (the dead clock's), so its row
    in results.csv and the sheet is matched to the same pairing; None if the game had neither."""
    scene = game_scene(game.records)
    words = [f"{key}={scene[key]}" for key in ("round", "table") if scene.get(key) is not None]
    return "set " + " ".join(words) if words else None


def came_back(moves, clock, record, game):
    """(game seq, spare) when `record`, just stored from `clock` for `game` (its log's open `Game`
    or None), is one made after that game moved (`moves`: the store's {(clock, game seq): (spare,
    from seq)}) and the clock has not recorded being told so; else None."""
    if game is None or record.get("ev") == "moved":
        return None
    moved = moves.get((clock, game.seq))
    if moved is None or record["seq"] <= moved[1]:
        return None
    if any(r["ev"] == "moved" for r in game.records):
        return None
    return game.seq, moved[0]


def told_before(folder):
    """{(clock, game seq, spare): the `moved` command the hall sent} from the audit trail in
    `folder` (`audit_read.read`): what an earlier run of the hall told the dead clocks."""
    told = {}
    for entry in read(folder, keep=lambda entry: entry.get("action") == "moved"):
        changed = entry.get("changed") or {}
        if entry.get("by") == "hall" and entry.get("command"):
            told.setdefault((entry.get("clock"), changed.get("game"), changed.get("to")), entry["command"])
    return told


def tell_moved(audit, feed, told, clock, record, log, before=None):
    """`clock`, whose game moved to a spare, is heard again for that game (`record`, just stored,
    its `log`'s open game): tell it, once a run (`told`: the (clock, game, spare) told), with a
    `moved` command written to the audit trail (`audit`) as the hall's action, sent by `feed`.
    One an earlier run told (`before`, from `told_before`) is said again as it was, not audited
    again: the trail has the one line, and the clock ends the game at the first it gets."""
    moves = getattr(getattr(feed, "store", None), "moves", None)
    found = came_back(moves, clock, record, getattr(log, "game", None)) if moves else None
    if found is None or (clock, *found) in told:
        return
    told.add((clock, *found))
    game_seq, spare = found
    again = (before or {}).get((clock, *found))
    if again is not None:
        feed.command(again, clock)
        return
    board = next((b for b in feed.snapshot()["boards"] if b["clock"] == clock), None)
    changed = {"game": game_seq, "to": spare}
    try:  # once a moved game: its line is written here, on the feed's thread
        entry = audit.record(
            "moved", "hall", None, f"moved {game_seq} {spare}", clock, board, changed, answered=True
        )
    except OSError as error:
        logger.warning("clock %s: not told its game %s moved (%s)", clock, game_seq, error)
        return
    feed.command(entry["command"], clock)


def late_news(moves, clock, record, game):
    """(spare, `LateTime`) when `record`, just taken from `clock` for `game` (its log's open
    `Game`), is one of a moved game's late records (`moves`, as `came_back`), the game's records
    on file hold the end of them (its `moved`, or a `boot`: records held for a gap are not on file
    yet, so the end is looked for there, not in `record`), and the presses before it add time.
    Else None."""
    moved = moves.get((clock, game.seq)) if game is not None else None
    if moved is None or record["seq"] <= moved[1]:
        return None
    for late in reversed(game.records):  # the newest first, back to where the spare took it up
        if late["seq"] <= moved[1]:
            return None
        if late["ev"] in ("moved", "boot"):
            break
    late = late_time(game.records, moved[1])
    return None if late is None else (moved[0], late)


def flagged_before(folder):
    """{(clock, game seq, seq of the last late press)} the audit trail in `folder` has flagged."""
    flagged = set()
    for entry in read(folder, keep=lambda entry: entry.get("action") == "late_records"):
        changed = entry.get("changed") or {}
        flagged.add((entry.get("clock"), changed.get("game"), changed.get("seq")))
    return flagged


def flag_late(audit, feed, flagged, clock, record, log):
    """`record`, just taken from `clock` into `log`: once its moved game's late records are all
    on file (`late_news`), say what their presses added, once (`flagged`: the (clock, game, seq)
    said, this run's and the trail's), on the audit trail as the hall's (no command: nothing is
    changed) and in the notices."""
    moves = getattr(getattr(feed, "store", None), "moves", None)
    game = getattr(log, "game", None)
    found = late_news(moves, clock, record, game) if moves else None
    if found is None:
        return
    spare, late = found
    key = (clock, game.seq, late.seq)
    if key in flagged:
        return
    flagged.add(key)
    board = next((b for b in feed.snapshot()["boards"] if b["clock"] == clock), None)
    name = board["board"] if board else clock
    changed = {"game": game.seq, "to": spare, "seq": late.seq, **{f"{s}_ms": late.more_ms[s] for s in "AB"}}
    try:
        audit.record("late_records", "hall", None, None, clock, board, changed)
    except OSError as error:
        logger.warning("clock %s: its late records not on the audit trail (%s)", clock, error)
    feed.store.notice(
        f"board {name}: the dead clock's late records show {late.words()} before the move "
        f"(clock {clock}'s records to seq {late.seq}, not counted): clock {spare} does not know it; "
        "give it with a correction on the spare's board if the players agree"
    )
