"""A round's settled scores as TSH would take them, from the records, the pairings and the entries:
what `tileclock scores` prints and writes, and what the hall queues for TSH (`tsh_queue`).
"""

from dataclasses import dataclass, field

from ..records.facts import game_facts
from ..records.gamefiles import load_games
from .inputs import read_divisions
from .matching import match_round
from .pairings import tsh_round
from .scoring import chosen_entry, settle
from .tfile import read_config
from .tsh_entry import division_entry, settings


@dataclass
class RoundScores:
    """Each division's `tsh_entry.DivisionEntry`, the game files left out, the match's problems."""

    results: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    mismatches: list = field(default_factory=list)


@dataclass
class RoundInputs:
    """What a round's scores are settled from, read once: the games found and the files left
    out, TSH's divisions, and `config.tsh`'s settings (None without one)."""

    found: list
    problems: list
    divisions: list
    config: dict | None


def read_inputs(games, tsh=None, tsh_config=None, tables=None):
    """The `RoundInputs` from the game paths `games` and TSH's `.t` files `tsh` or `config.tsh`
    `tsh_config` (with `--tables`' ranges `tables`): every round of a pass is settled from one
    reading. A mistake in an input is the readers' ValueError, naming it (NoGames for no game)."""
    found, problems = load_games(games)
    config = read_config(tsh_config) if tsh_config else None
    return RoundInputs(found, problems, read_divisions(tsh, tsh_config, tables), config)


def round_scores(inputs, round_number, by_table, given_seats=None, queued=False):
    """The `RoundScores` of `round_number` from `inputs` (`read_inputs`) and the entries
    `by_table` (table -> entries in order); `queued`: for TSH's queue, whose `aps` takes scores
    whatever `config entry` says for typing."""
    found, problems, divisions = inputs.found, inputs.problems, inputs.divisions
    values = settings(inputs.config)
    if queued:
        values["entry"] = "scores"
    facts = [game_facts(game, source=source, board=board) for source, game, board in found]
    seats = {t: e.seat_a for t, es in by_table.items() if (e := chosen_entry(es)[0]) and e.seat_a}
    seats.update(given_seats or {})
    schedule = tsh_round(divisions, round_number)
    match = match_round(schedule, facts, named=True, seats=seats)
    rules = {t.table: t.game.rules for t in match.tables if t.game is not None}
    out = RoundScores(problems=list(problems), mismatches=list(match.problems))
    paired = {t.table for t in match.tables}
    for table in sorted(set(by_table) - paired):  # named, never dropped without a word
        out.mismatches.append(
            f"table {table}: a score was entered for it, but round {round_number}'s pairings have no table {table}"
        )
    for division in divisions:
        settled = [
            (t.table, settle(t, by_table.get(t.table, []), rules.get(t.table, "")), t.pairing, t.game)
            for t in match.tables
            if t.pairing is not None and t.pairing.players[0].division == division.name
        ]
        out.results.append(division_entry(division, round_number, settled, schedule.byes, values))
    return out
