"""The readers of a round's inputs that `sheet`, `scores` and the hall share: the TSH divisions
(from `.t` files, `config.tsh`, or TSH's `tourney.js`),
the schedule of rounds (TSH's or a CSV's), the score entries by table, and who sat at side A.

Each takes the paths and texts it reads, never a command's arguments; a mistake in them is a
ValueError (a `PairingsError` for the pairings themselves) in words naming the option or file.
"""

from functools import partial

from ...wire.labels import is_count, table_key
from .entries import read_entries
from .pairings import (
    csv_round,
    parse_table_ranges,
    read_pairings_csv,
    read_tsh,
    read_tsh_config,
    tsh_round,
    with_tables,
)
from .tfile import PairingsError
from .tourney_js import is_tourney_js, read_tourney_js
from .tsh_entry import round_in_tsh


def read_divisions(tsh=None, tsh_config=None, tables=None):
    """The TSH divisions of the `.t` files (and `tourney.js` files) `tsh`, or of `config.tsh`
    `tsh_config`, with the `--tables` ranges `tables` applied."""
    if tsh_config:
        divisions = read_tsh_config(tsh_config)
    else:
        divisions, seen = [], {}
        for path in tsh or []:  # a tourney.js holds every division; a .t file one
            for division in read_tourney_js(path) if is_tourney_js(path) else [read_tsh(path)]:
                if division.name in seen:  # every game of it would be counted twice
                    raise PairingsError(
                        f"{division.path}: division {division.name} is also in {seen[division.name]}: "
                        "give each division once (a tourney.js, or its .t files, not both)"
                    )
                seen[division.name] = division.path
                divisions.append(division)
    return with_tables(divisions, parse_table_ranges(tables))


def read_schedule(tsh=None, tsh_config=None, pairings_csv=None, tables=None):
    """(the paired rounds, round number -> `pairings.Round`) from TSH's `.t` files `tsh`, its
    `config.tsh` `tsh_config` (a `TshSchedule`), or else the CSV `pairings_csv`; `tables` only
    with TSH's."""
    if tsh or tsh_config:
        divisions = read_divisions(tsh, tsh_config, tables)
        paired = sorted(set(range(1, max((d.rounds() for d in divisions), default=0) + 1)))
        return paired, TshSchedule(divisions)
    if tables:
        raise ValueError("--tables is for TSH's divisions; a CSV names the hall's tables itself")
    pairings = read_pairings_csv(pairings_csv)
    return sorted({p.round for p in pairings}), partial(csv_round, pairings)


class TshSchedule:
    """Round number -> `pairings.Round` from TSH's divisions, and `next_round`, the round TSH
    takes scores for next (`tsh_entry.round_in_tsh`: its earliest division's)."""

    def __init__(self, divisions):
        self.divisions = divisions
        self.next_round = round_in_tsh(divisions)

    def __call__(self, round_number):
        return tsh_round(self.divisions, round_number)


def entries_by_table(path, round_number=None, notes=None):
    """The score entries of a CSV (`--entries`), by table, in the order made; {} without one.
    With `round_number`, only that round's (`entries.read_entries`), the rest said in `notes`."""
    by_table = {}
    for entry in read_entries(path, round_number, notes) if path else []:
        by_table.setdefault(entry.table, []).append(entry)
    return by_table


def parse_seats(texts):
    """`--seat 5=12` as {"5": 12}: TSH player 12 sat at side A of table 5."""
    seats = {}
    for text in texts or []:
        table, _, player = text.partition("=")
        if not table.strip() or not is_count(player.strip()):  # (isdigit takes `²`, int refuses it)
            raise ValueError(f"--seat {text!r}: give a table and the TSH player number at side A, as 5=12")
        seats[table_key(table)] = int(player)
    return seats
