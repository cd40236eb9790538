"""Who plays whom, where, and who goes first: pairings from TSH `.t` files or a plain CSV.

TSH (the Tournament Shell) keeps one `.t` file per division, one player a line, numbered by
their order in the file (the first line is player 1):

    Name, Given 1734 2 0 3; 402 50 388; board 1 0 2; p12 1 0 2

the name, the rating, the opponent's player number in each round (0: no opponent, a bye or a
forfeit), then after `;` the scores round by round, then optional `; key values...` fields. Two of
those matter here: `board`, the board (table) of each round, and `p12`, per round 1 if the player
went first, 2 if second, 0 for a bye (other values: not decided). Blank lines and lines starting
with `#` are not players. The plain alternative is a CSV with the header `round,table,first,second`
(an optional `division` column is kept).

Reading never guesses: what does not add up (a pairing one side does not confirm, two boards for
one game, no board, both players first) is returned as a problem, in words, with the file and line.
`tileclock` only reads these files; it never writes into TSH's.
"""

import csv
import os
from dataclasses import dataclass, field


class PairingsError(ValueError):
    """A pairings file that cannot be read at all (the message names the file and line)."""


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

    @property
    def kind(self):
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
class TshPlayer:
    number: int
    name: str
    rating: int
    opponents: list
    scores: list
    fields: dict  # extended fields: key -> list of words
    line: int


@dataclass
class Division:
    """One TSH `.t` file: its name (the file's name without `.t`) and its players in order."""

    name: str
    path: str
    players: list

    def rounds(self):
        """How many rounds are paired (the most any player has)."""
        return max((len(p.opponents) for p in self.players), default=0)


def _ints(words, path, line, what):
    try:
        return [int(word) for word in words]
    except ValueError:
        raise PairingsError(
            f"{path}, line {line}: {what} must be whole numbers: {' '.join(words)!r}"
        ) from None


def read_tsh(path, division=None):
    """The `Division` in a TSH `.t` file; `PairingsError` for a line that is not a player."""
    name = division or os.path.splitext(os.path.basename(path))[0].upper()
    players = []
    with open(path, encoding="utf-8", errors="replace") as file:
        for number, text in enumerate(file, start=1):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            head, *rest = text.split(";")
            words = head.split()
            at = next((i for i, word in enumerate(words) if word.lstrip("-").isdigit()), None)
            if not at:
                raise PairingsError(
                    f"{path}, line {number}: not a player line (a name, then a rating): {text[:60]!r}"
                )
            opponents = _ints(words[at + 1 :], path, number, "opponents")
            scores = _ints(rest[0].split(), path, number, "scores") if rest else []
            fields = {}
            for part in rest[1:]:
                key, *values = part.split() or [""]
                if key:
                    fields[key] = values
            player_name = " ".join(words[:at])
            players.append(
                TshPlayer(len(players) + 1, player_name, int(words[at]), opponents, scores, fields, number)
            )
    return Division(name, path, players)


def _field(player, key, round_index):
    values = player.fields.get(key, [])
    return values[round_index] if round_index < len(values) else None


def tsh_round(divisions, round_number):
    """The `Round` that `divisions` (TSH `Division`s) give for `round_number` (1 is the first)."""
    result = Round(round_number)
    index = round_number - 1
    for division in divisions:
        by_number = {p.number: p for p in division.players}
        for player in division.players:
            if index >= len(player.opponents):
                continue
            where = f"{division.path}, line {player.line}"
            me = Player(player.name, player.number, division.name)
            opponent_number = player.opponents[index]
            if opponent_number == 0:
                score = player.scores[index] if index < len(player.scores) else None
                result.byes.append(Bye(round_number, me, score))
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
                _tsh_pairing(result, round_number, index, player, opponent, me, them, where)
            )
    return result


def _tsh_pairing(result, round_number, index, player, opponent, me, them, where):
    boards = {_field(player, "board", index), _field(opponent, "board", index)} - {None}
    table = None
    if len(boards) == 1:
        table = table_key(boards.pop())
    elif boards:
        result.problems.append(
            f"{where}: round {round_number}, {me.label()} v {them.label()}: TSH gives two boards "
            f"({' and '.join(sorted(boards))}); fix the .t file"
        )
    else:
        result.problems.append(
            f"{where}: round {round_number}, {me.label()} v {them.label()}: no board in the .t file, "
            "so no clock can be matched to this game"
        )
    firsts = (_field(player, "p12", index), _field(opponent, "p12", index))
    if firsts == ("1", "2"):
        return Pairing(round_number, table, (me, them), True, where)
    if firsts == ("2", "1"):
        return Pairing(round_number, table, (them, me), True, where)
    result.problems.append(
        f"{where}: round {round_number}, {me.label()} v {them.label()}: TSH does not say who goes first "
        f"(p12 {firsts[0] or '-'} and {firsts[1] or '-'}), so the clock's sides cannot be given names"
    )
    return Pairing(round_number, table, (me, them), False, where)


# --- CSV


CSV_COLUMNS = ("round", "table", "first", "second")


def read_pairings_csv(path):
    """Pairings from a CSV with the header `round,table,first,second` (and optionally `division`)."""
    pairings = []
    with open(path, newline="", encoding="utf-8-sig") as file:
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


def table_key(value):
    """A table as text, the same however it was written (`"07"`, `7` and `" 7 "` are table `"7"`)."""
    text = str(value).strip()
    return str(int(text)) if text.isdigit() else text
