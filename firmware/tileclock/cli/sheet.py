"""`tileclock sheet`: from recorded games and the pairings to a penalty sheet per round.

It reads; it never writes into the pairing program's files. Every mismatch is printed plainly
and also stands on the sheet, so nothing is entered from a guess.
"""

import os
import re

from ..director.event.inputs import entries_by_table, parse_seats, read_schedule
from ..director.event.matching import match_round
from ..director.event.scoring import chosen_entry, settle
from ..director.event.sheet import write_sheet
from ..director.records.facts import game_facts
from ..director.records.gamefiles import load_games
from ..director.records.plot import available, write_pictures
from .errors import UsageError, given_by_the_user


def _rounds(args, facts, paired_rounds):
    if args.round is not None:
        return [args.round]
    named = sorted({g.round for g in facts if g.round is not None})
    if named:
        return named
    raise UsageError(
        "the games do not say which round they were (no `set` from the director's link): "
        f"name it with --round N (the pairings have rounds {', '.join(map(str, paired_rounds)) or 'none'})"
    )


def _matched(match):
    """`4 of 5 tables matched to players`: tables counted once, however many games or pairings
    claim one; games with no table apart."""
    tables = {t.table for t in match.tables if t.table is not None}
    matched = {t.table for t in match.tables if t.table is not None and t.game is not None and t.names}
    nowhere = sum(1 for t in match.tables if t.table is None)
    apart = f", and {nowhere} game{'s' * (nowhere != 1)} with no table" if nowhere else ""
    return f"{len(matched)} of {len(tables)} tables matched to players{apart}"


def _picture_title(table):
    game = table.game
    where = f"round {table.round}, table {table.table}" if table.table else f"round {table.round}"
    sides = " / ".join(f"{side}: {table.player(side)}" for side in "AB" if side in table.names)
    return " · ".join(p for p in (game.name(), where, sides) if p)


def _safe(name):
    """A file name from text that came from outside (a board name is never a path)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:100]


def _picture_stem(table):
    game = table.game
    clock = f"-clock-{game.clock_id}" if game.clock_id else ""  # two clocks may share a board name
    return _safe(f"table-{table.table or 'none'}-board-{game.board}-game-{game.game_seq}{clock}")


def run_sheets(args, out):
    """Read the games and pairings `args` name, write each round's sheet; prints what it wrote and found."""
    with given_by_the_user():  # each reader's ValueError names the option or file it read
        found, problems = load_games(args.games)
        paired, schedule_of = read_schedule(args.tsh, args.tsh_config, args.pairings, args.tables)
        seats = parse_seats(args.seat)
        by_table = entries_by_table(args.entries)
    facts = [game_facts(game, source=source, board=board) for source, game, board in found]
    entry_seats = {t: e.seat_a for t, es in by_table.items() if (e := chosen_entry(es)[0]) and e.seat_a}
    for text in problems:
        print(f"left out: {text}", file=out)
    drawing = available() and not args.no_pictures
    for number in _rounds(args, facts, paired):
        schedule = schedule_of(number)
        match = match_round(schedule, facts, named=args.round is not None, seats={**entry_seats, **seats})
        settled = {
            t.table: settle(t, by_table.get(t.table, []))
            for t in match.tables
            if t.table is not None and t.table in by_table
        }
        pictures = {}
        if drawing:
            folder = os.path.join(args.out, f"round-{number}-pictures")
            os.makedirs(folder, exist_ok=True)
            for table in match.tables:
                if table.game is not None:
                    stem = _picture_stem(table)
                    write_pictures(table.game.records, os.path.join(folder, stem), _picture_title(table))
                    pictures[id(table.game)] = f"round-{number}-pictures/{stem}.svg"
        for path in write_sheet(args.out, match, schedule, pictures, settled=settled):
            print(path, file=out)
        print(f"round {number}: {_matched(match)}", file=out)
        for text in match.problems:
            print(f"  MISMATCH {text}", file=out)
        for text in match.left_out:
            print(f"  left out: {text}", file=out)
    if not drawing and not args.no_pictures:
        print("(no game pictures: they need the director extra, pip install 'tileclock[director]')", file=out)
    return 0
