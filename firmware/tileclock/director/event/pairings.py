"""Who plays whom, where, and who goes first: pairings from TSH `.t` files or a plain CSV.

TSH (the Tournament Shell) keeps one `.t` file per division, one player a line, numbered by
their order in the file (the first player line is player 1):

    Name, Given 1734 2 0 3; 402 50 388; board 1 0 2; p12 1 0 2

the name, the rating, the opponent's player number in each round (0: no opponent, a bye or a
forfeit; `00`: not paired yet), then after `;` the scores round by round, then optional
`; key values...` fields. Two of those matter here: `board`, the board of each round, and `p12`,
per round 1 if the player went first, 2 if second, 0 for a bye, 3 if the two must draw for it.
`tfile.py` reads the files exactly as TSH does (encoding, comments, escapes); `config.tsh` names the
divisions. A division's board is the hall's table unless the director gives the division a range
of tables (`--tables B=11-20`: B's board 1 is table 11), so two divisions never share a table by
accident. The plain alternative is a CSV with the header `round,table,first,second` (an optional
`division` column is kept).

Reading never guesses: what does not add up (a pairing one side does not confirm, two boards for
one game, no board, first player not known) is returned as a problem, in words, with the file, line
and table. `tileclock` only reads these files; it never writes into TSH's.
"""

import csv
import io
import os
import re
from dataclasses import dataclass, field

from ...wire.labels import table_key
from .tfile import PairingsError, division_name, read_bytes, read_config, read_players


@dataclass(frozen=True)
class Player:
    """A player as the pairings name them."""

    name: str
    number: int | None = None  # TSH's player number in the division
    division: str = ""

    def label(self):
        """`Name (#3, B)`-style text for sheets and messages."""
        where = ", ".join(p for p in (f"#{self.number}" if self.number else "", self.division) if p)
        return f"{self.name} ({where})" if where else self.name


@dataclass(frozen=True)
class Pairing:
    """Two players at a table in a round; `players[0]` goes first when `first_known`."""

    round: int
    table: str | None
    players: tuple
    first_known: bool = True
    source: str = ""  # where it was read, for messages
    why_unknown: str = ""  # when the first player is not known: why, in words

    @property
    def first(self):
        return self.players[0] if self.first_known else None

    @property
    def second(self):
        return self.players[1] if self.first_known else None

    def names(self):
        return " v ".join(p.label() for p in self.players)


@dataclass(frozen=True)
class Bye:
    """A player with no opponent in a round: a bye, or a forfeit already entered in TSH."""

    round: int
    player: Player
    score: int | None  # as entered in TSH (50 for a bye, -50 for a forfeit), None before entry
    active: bool = True  # False for a player TSH counts as withdrawn (an `off` field)

    @property
    def kind(self):
        if not self.active:
            return "withdrawn"
        return "forfeit" if self.score is not None and self.score < 0 else "bye"


@dataclass
class Round:
    """What the pairings say about one round."""

    number: int
    pairings: list = field(default_factory=list)
    byes: list = field(default_factory=list)
    problems: list = field(default_factory=list)


# --- TSH


@dataclass
class Division:
    """One TSH `.t` file: its name (from config.tsh, else the file's name) and its players in order."""

    name: str
    path: str
    players: list
    tables: tuple | None = None  # (first, last): the hall's tables this division plays at
    unit: str = "line"  # what `TshPlayer.line` counts, for messages: a .t file's line, a tourney.js's player

    def rounds(self):
        """How many rounds are paired (the most any player has)."""
        return max((len(p.opponents) for p in self.players), default=0)

    def table(self, board):
        """The hall's table of `board` (text), or None when the board is outside the division's tables."""
        if self.tables is None:
            return table_key(board)
        first, last = self.tables
        number = int(board) if str(board).isdigit() else 0
        return str(first + number - 1) if 1 <= number <= last - first + 1 else None


def read_tsh(path, division=None):
    """The `Division` in a TSH `.t` file; `PairingsError` for a line TSH could not read."""
    name = division_name(division or os.path.splitext(os.path.basename(path))[0])
    return Division(name, path, read_players(path))


def read_tsh_config(path):
    """Every `Division` that a TSH `config.tsh` names, with its real name."""
    return [read_tsh(file, name) for name, file in read_config(path).divisions]


def parse_table_ranges(texts):
    """`["A=1-10", "B=11-20"]` as {division: (first, last)}; ValueError in words for anything else."""
    ranges = {}
    for text in texts or []:
        found = re.fullmatch(r"\s*([^=\s]+)\s*=\s*(\d+)\s*-\s*(\d+)\s*", text)
        if not found or int(found.group(2)) < 1 or int(found.group(2)) > int(found.group(3)):
            raise ValueError(f"--tables {text!r}: give a division and its tables, as B=11-20")
        ranges[division_name(found.group(1))] = (int(found.group(2)), int(found.group(3)))
    return ranges


def with_tables(divisions, ranges):
    """`divisions` with the table ranges the director gave; a range for no division is an error."""
    unknown = set(ranges) - {d.name for d in divisions}
    if unknown:
        raise ValueError(
            f"--tables names {', '.join(sorted(unknown))}, but the divisions are "
            f"{', '.join(d.name for d in divisions)}"
        )
    for division in divisions:
        division.tables = ranges.get(division.name, division.tables)
    spans = sorted((d.tables, d.name) for d in divisions if d.tables)
    for (one, a), (two, b) in zip(spans, spans[1:], strict=False):
        if two[0] <= one[1]:
            raise ValueError(
                f"--tables: divisions {a} ({one[0]}-{one[1]}) and {b} ({two[0]}-{two[1]}) overlap"
            )
    return divisions


def _field(player, key, round_index):
    values = player.fields.get(key, [])
    return values[round_index] if round_index < len(values) else None


def tsh_round(divisions, round_number):
    """The `Round` that `divisions` (TSH `Division`s) give for `round_number` (1 is the first)."""
    result = Round(round_number)
    index = round_number - 1
    for division in divisions:
        by_number = {p.number: p for p in division.players}
        paired = any(index < len(p.opponents) and p.opponents[index] is not None for p in division.players)
        for player in division.players:
            where = f"{division.path}, {division.unit} {player.line}"
            me = Player(player.name, player.number, division.name)
            opponent_number = player.opponents[index] if index < len(player.opponents) else None
            if opponent_number is None:
                if paired and player.active:
                    result.problems.append(
                        f"{where}: {me.label()} has no pairing in round {round_number} yet, though others do"
                    )
                continue
            if opponent_number == 0:
                score = player.scores[index] if index < len(player.scores) else None
                result.byes.append(Bye(round_number, me, score, player.active))
                continue
            opponent = by_number.get(opponent_number)
            if opponent is None:
                result.problems.append(
                    f"{where}: {me.label()} is paired in round {round_number} with player #{opponent_number}, "
                    f"who is not in division {division.name}"
                )
                continue
            theirs = opponent.opponents[index] if index < len(opponent.opponents) else None
            if theirs != player.number:
                result.problems.append(
                    f"{where}: {me.label()} is paired in round {round_number} with #{opponent.number} "
                    f"{opponent.name}, whose line pairs them with {'nobody' if theirs is None else f'#{theirs}'}"
                )
                continue
            if opponent.number < player.number:
                continue  # each game once, from its lower-numbered player
            them = Player(opponent.name, opponent.number, division.name)
            result.pairings.append(
                _tsh_pairing(result, division, index, (player, opponent), (me, them), where)
            )
    _shared_tables(result, divisions)
    return result


def _tsh_pairing(result, division, index, lines, players, where):
    round_number = index + 1
    (player, opponent), (me, them) = lines, players
    game = f"round {round_number}, {me.label()} v {them.label()}"
    boards = {_field(player, "board", index), _field(opponent, "board", index)} - {None}
    table = None
    if len(boards) == 1:
        board = boards.pop()
        table = division.table(board)
        if table is None:
            result.problems.append(
                f"{where}: {game}: board {board} is outside division {division.name}'s tables "
                f"{division.tables[0]}-{division.tables[1]}"
            )
    elif boards:
        result.problems.append(
            f"{where}: {game}: TSH gives two boards ({' and '.join(sorted(boards))}); fix the .t file"
        )
    else:
        result.problems.append(
            f"{where}: {game}: no board in the .t file, so no clock can be matched to this game"
        )
    firsts = (_field(player, "p12", index), _field(opponent, "p12", index))
    if firsts in (("1", "2"), ("1", None), (None, "2")):
        return Pairing(round_number, table, (me, them), True, where)
    if firsts in (("2", "1"), ("2", None), (None, "1")):
        return Pairing(round_number, table, (them, me), True, where)
    if "3" in firsts:
        why = "they must draw for first (p12 3)"
    elif "4" in firsts:
        why = "TSH has not decided who goes first yet (p12 4)"
    else:
        why = f"TSH does not say who goes first (p12 {firsts[0] or '-'} and {firsts[1] or '-'})"
    at = f"table {table}" if table is not None else "no table"
    result.problems.append(
        f"{where}: {game} at {at}: {why}; say which player sat at side A where the score is entered"
    )
    return Pairing(round_number, table, (me, them), False, where, why)


def _shared_tables(result, divisions):
    """Two divisions at one table, with no table ranges given: said, with how to fix it."""
    seen = {}
    for pairing in result.pairings:
        if pairing.table is not None:
            seen.setdefault(pairing.table, set()).add(pairing.players[0].division)
    for table, names in sorted(seen.items()):
        if len(names) > 1:
            example = " ".join(f"--tables {d.name}=..." for d in divisions if d.name in names)
            result.problems.append(
                f"round {result.number}, table {table}: divisions {' and '.join(sorted(names))} both play "
                f"at board {table}: give each division its tables ({example})"
            )


# --- CSV


CSV_COLUMNS = ("round", "table", "first", "second")


def read_pairings_csv(path):
    """Pairings from a CSV with the header `round,table,first,second` (and optionally `division`)."""
    pairings = []
    try:  # read as TSH's files are (tfile.read_bytes): a file, and small
        text = read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise PairingsError(f"{path}: not UTF-8 text (byte {error.start:,})") from None
    with io.StringIO(text, newline="") as file:
        reader = csv.DictReader(file)
        header = [name.strip().lower() for name in reader.fieldnames or []]
        missing = [name for name in CSV_COLUMNS if name not in header]
        if missing:
            raise PairingsError(
                f"{path}: the header must name {', '.join(CSV_COLUMNS)} (missing: {', '.join(missing)})"
            )
        reader.fieldnames = header
        for row in reader:
            line = reader.line_num
            values = {key: (row.get(key) or "").strip() for key in header}
            if not any(values.values()):
                continue
            try:
                round_number = int(values["round"])
            except ValueError:
                raise PairingsError(
                    f"{path}, line {line}: round must be a whole number: {values['round']!r}"
                ) from None
            for key in ("table", "first", "second"):
                if not values[key]:
                    raise PairingsError(f"{path}, line {line}: {key} is empty")
            division = values.get("division", "")
            players = (
                Player(values["first"], division=division),
                Player(values["second"], division=division),
            )
            pairings.append(
                Pairing(round_number, table_key(values["table"]), players, True, f"{path}, line {line}")
            )
    return pairings


def csv_round(pairings, round_number):
    """The `Round` that CSV `pairings` give for `round_number`."""
    return Round(round_number, [p for p in pairings if p.round == round_number])
