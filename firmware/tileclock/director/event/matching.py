"""Games to pairings: each game to its round and table, its sides to the two players.

A game's round and table come from the director's link (the `set` command) when its records
carry them; otherwise its table is its board name (boards fixed to tables) and its round the one
the director names. The player going first in the pairings is the side whose clock first ran in
play. Where the pairings cannot say who went first (TSH's must-draw tables) or no clock ran in
play, whoever enters the score says which player sat at side A (`seats`). A game recorded as
another round, at a table with no game of this round, is a mismatch naming both rounds: a sheet
run with the wrong `--round` is loud. Whatever does not fit exactly is a problem in words; nothing
is guessed.
"""

from dataclasses import dataclass, field

from ...wire.records import SIDES


@dataclass
class Table:
    """One table of a round: its pairing and its game (either may be missing), sides named."""

    round: int
    table: str | None
    pairing: object = None  # pairings.Pairing
    game: object = None  # facts.GameFacts
    names: dict = field(default_factory=dict)  # side -> pairings.Player, when known
    problems: list = field(default_factory=list)

    def player(self, side):
        """The player at `side`, or a plain `side A` when the names cannot be given."""
        who = self.names.get(side)
        return who.label() if who else f"side {side}"


@dataclass
class RoundMatch:
    """A round's tables, every problem found, and the games left out (never started)."""

    round: int
    tables: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    left_out: list = field(default_factory=list)


def game_table(game):
    """Where a game was played: the table the link set, else its board name."""
    return game.table if game.table is not None else game.board


def match_round(schedule, games, named=True, seats=None):
    """Match `games` (`GameFacts`) to `schedule` (a `pairings.Round`); returns a `RoundMatch`.

    A game whose records name another round is not part of this one. A game that names none is
    when the director `named` this round (`--round`); otherwise it is left out, and said so.
    `seats` ({table: TSH player number}) says who sat at side A where the score was entered.
    """
    number = schedule.number
    result = RoundMatch(number, problems=list(schedule.problems))
    at_table = {}
    elsewhere = {}  # table -> games recorded as another round
    for game in games:
        if game.round is not None and game.round != number:
            elsewhere.setdefault(game_table(game), []).append(game)
            continue
        if game.round is None and not named:
            result.left_out.append(
                f"{game.name()}: its records name no round, so it is not put in round {number} "
                f"(if it was played in round {number}, run the sheet with --round {number})"
            )
            continue
        if not game.started:
            result.left_out.append(f"{game.name()}: never started (no press recorded)")
            continue
        at_table.setdefault(game_table(game), []).append(game)
    paired = {}
    for pairing in schedule.pairings:
        paired.setdefault(pairing.table, []).append(pairing)

    for table in sorted(set(at_table) | set(paired), key=_table_order):
        pairings, here = paired.get(table, []), at_table.get(table, [])
        if table is None:
            for game in here:
                result.problems.append(f"{game.name()}: no table or board name, so it matches no pairing")
                result.tables.append(Table(number, None, game=game))
            continue  # pairings without a board were reported when the pairings were read
        if len(pairings) > 1:
            result.problems.append(
                f"round {number}, table {table}: {len(pairings)} pairings claim it "
                f"({'; '.join(p.names() for p in pairings)}); no game is matched to them"
            )
        if len(here) > 1:
            result.problems.append(
                f"round {number}, table {table}: {len(here)} games were recorded there "
                f"({', '.join(g.name() for g in here)}); none is matched to the pairing"
            )
        if len(pairings) > 1 or len(here) > 1:
            result.tables += [Table(number, table, pairing=p) for p in pairings]
            result.tables += [Table(number, table, game=g) for g in here]
            continue
        pairing = pairings[0] if pairings else None
        game = here[0] if here else None
        seat = (seats or {}).get(table)
        result.tables.append(_one_table(result, number, table, pairing, game, seat, elsewhere.get(table)))
    return result


def _one_table(result, number, table, pairing, game, seat=None, other_rounds=None):
    entry = Table(number, table, pairing=pairing, game=game)
    if game is None and pairing is not None and other_rounds:
        for other in other_rounds:
            entry.problems.append(
                f"{other.name()} at table {table} was recorded as round {other.round}, not round {number}: "
                f"it is not matched to round {number}'s pairing ({pairing.names()}); if the clocks were "
                f"given the wrong round, say so on the sheet, else run it with --round {other.round}"
            )
    elif game is None:
        entry.problems.append(f"no game was recorded at table {table} ({pairing.names()})")
    elif pairing is None:
        entry.problems.append(
            f"{game.name()} was played at table {table}, which has no pairing in round {number}"
        )
    else:
        _name_sides(entry, pairing, game, seat)
    result.problems += [f"round {number}, table {table}: {text}" for text in entry.problems]
    return entry


def _name_sides(entry, pairing, game, seat):
    """Who sat at A and B: from the pairings and the clock, or from who entered the score (`seat`)."""
    by_clock = None
    if pairing.first_known and game.first_side is not None:
        by_clock = {game.first_side: pairing.first, other_side(game.first_side): pairing.second}
    if seat is not None:
        at_a = [p for p in pairing.players if p.number == seat]
        if not at_a:
            entry.problems.append(
                f"the score entry says #{seat} sat at side A, but the pairing is {pairing.names()}"
            )
            return
        settled = {"A": at_a[0], "B": next(p for p in pairing.players if p is not at_a[0])}
        if by_clock is not None and by_clock != settled:
            entry.problems.append(
                f"the score entry says {settled['A'].label()} sat at side A, but the pairings and the "
                f"clock put {by_clock['A'].label()} there"
            )
            return
        entry.names = settled
    elif by_clock is not None:
        entry.names = by_clock
    elif game.forfeit and game.forfeit[0] == "both":
        pass  # a double forfeit: both lose alike, whoever sat where
    elif not pairing.first_known:
        entry.problems.append(
            f"{pairing.why_unknown or 'the pairings do not say who goes first'}, so the clock's sides "
            f"cannot be given names ({pairing.names()}): say which player sat at side A where the score "
            "is entered"
        )
    else:
        entry.problems.append(
            f"{game.name()}: no clock ever ran in play, so which player sat at side A cannot be told "
            f"({pairing.names()}): say which player sat at side A where the score is entered"
        )


def other_side(side):
    """The other side: A for B, B for A."""
    return SIDES[1 - SIDES.index(side)]


def _table_order(table):
    if table is None:
        return (2, 0, "")
    return (0, int(table), "") if table.isdigit() else (1, 0, table)
