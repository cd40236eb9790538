"""The lines a director pastes at TSH's score-entry prompt, checked against what TSH would refuse.

TSH's `addscore` (`a ROUND DIV`) takes one line a game, `pn1 ps1 pn2 ps2` with the first player
first (TSH records firsts from the order when it tracks them), and `pn spread` for a player paired
with 0 that round (a bye: positive; a forfeit loss: negative); an empty line leaves it. It refuses
(read in its Addscore.pm and Division.pm): a round other than the earliest incomplete one, players
not paired with each other, a score outside -149..max_score (1499 unless set), a score for a player
who already has a different one (the same one is a warning), `0 50`/`50 0` (a bye), and a bye
line for a player not paired with 0. At each prompt, when an odd number of active players are
unscored and exactly one active player is unpaired, TSH gives that player the bye itself.

So nothing is written for a table or a division that would be refused: it is listed with its
reason instead. A forfeit between two paired players needs their pairing changed first (`pair PN 0
ROUND DIV` for each): those commands and the forfeit lines go in a file of their own, for the
director to confirm. The `.t` files are never written.
"""

from dataclasses import dataclass, field

DEFAULTS = {"bye_spread": 50, "max_score": 1499, "entry": "scores"}
LOWEST = -149  # TSH's too_low for scores


@dataclass
class Line:
    """One line of TSH input and what it is for, or a table that gets none and why."""

    table: str
    division: str
    text: str  # the line, or "" when nothing is entered
    what: str  # "game", "bye", "forfeit", "already in TSH", "not entered"
    players: tuple = ()  # (pn, name, score) for each player on the line
    reasons: list = field(default_factory=list)
    settled: object = None  # scoring.Settled, for the dry run and the CSV
    #: TSH's `.t` file already has other scores for this table: a change is made in TSH (`es`)
    differs: bool = False


@dataclass
class DivisionEntry:
    """Everything for one division: the lines to paste, the pairing changes to confirm, and why not."""

    name: str
    round: int
    lines: list = field(default_factory=list)
    forfeits: list = field(default_factory=list)  # Lines needing `pair PN 0` first
    refused: str = ""  # why nothing at all can be entered for this division

    def paste(self):
        """The text to paste at TSH's prompt (`a ROUND DIV`, the lines, an empty line), or ''."""
        lines = [line.text for line in self.lines if line.text]
        return f"a {self.round} {self.name}\n" + "".join(f"{t}\n" for t in lines) + "\n" if lines else ""

    def confirm(self):
        """The pairing changes and forfeit lines, for the director to check and paste, or ''."""
        lines = [line for line in self.forfeits if line.text]
        if not lines:
            return ""
        pairs = "".join(
            f"pair {pn} 0 {self.round} {self.name}\n" for line in lines for pn, _, _ in line.players
        )
        return pairs + f"a {self.round} {self.name}\n" + "".join(f"{line.text}\n" for line in lines) + "\n"


def settings(config=None):
    """TSH's settings that decide what score entry takes, from `config.tsh` when there is one."""
    values = dict(DEFAULTS)
    if config is not None:
        values["bye_spread"] = config.number("bye_spread", DEFAULTS["bye_spread"])
        values["max_score"] = config.number("max_score", 0) or DEFAULTS["max_score"]
        values["entry"] = config.values.get("entry", DEFAULTS["entry"]) or DEFAULTS["entry"]
    return values


def _scored(player, index):
    return player.scores[index] if index < len(player.scores) else None


def _least_scores(division):
    """TSH's LeastScores: the fewest scores any active player has (trailing `00`s not counted)."""
    counts = []
    for player in division.players:
        if player.active:
            scores = list(player.scores)
            while scores and scores[-1] is None:
                scores.pop()
            counts.append((len(scores), player))
    return min(counts, key=lambda c: c[0]) if counts else (0, None)


def next_rounds(divisions):
    """{division name: the round TSH takes scores for next} (TSH's earliest incomplete round: one
    past the fewest scores an active player has), from the `.t` files as read."""
    return {division.name: _least_scores(division)[0] + 1 for division in divisions}


def round_in_tsh(divisions, given=None, option="--round"):
    """The round to settle: `given` (the director's `--round`), checked against the round TSH is
    on, or TSH's own next round when none is given (the earliest of the divisions'). A round TSH
    already has complete is taken (its scores are read back, never entered again); a round past
    the one TSH is on is a ValueError of one line with both numbers. None without divisions."""
    if not divisions:
        return given
    nexts = next_rounds(divisions)
    if given is None:
        return min(nexts.values())
    for division in divisions:
        least, who = _least_scores(division)
        if given > least + 1:
            return _refused(option, given, division, least, who)
    return given


def _refused(option, given, division, least, who):
    scores = f"{least} score{'s' * (least != 1)}"
    whose = f"{who.name} #{who.number} has {scores}" if who is not None else "no active player"
    raise ValueError(
        f"{option} {given}, but TSH is on round {least + 1} in division {division.name} "
        f"({whose} in {division.path}): give {option} {least + 1}, or leave it out to take TSH's round"
    )


def division_entry(division, round_number, settled_tables, byes, values):
    """The `DivisionEntry` of `division` for `round_number` from its tables' `Settled` results."""
    entry = DivisionEntry(division.name, round_number)
    least, who = _least_scores(division)
    if round_number <= least:
        entry.refused = f"round {round_number} is already complete in TSH (every player has a score for it)"
    elif round_number > least + 1:
        entry.refused = (
            f"TSH takes round {least + 1} first: {who.name} (#{who.number}) has {least} score"
            f"{'s' * (least != 1)}"
        )
    elif values["entry"] not in ("scores", "both"):
        entry.refused = f"config entry = {values['entry']}: only `scores` and `both` entry are written here"
    by_number = {p.number: p for p in division.players}
    index = round_number - 1
    for table, settled, pairing, game in settled_tables:
        line = _table_line(table, settled, pairing, game, by_number, index, values, division.name)
        if entry.refused and line.text:
            line.reasons.append(entry.refused)
            line.text, line.what = "", "not entered"
        (entry.forfeits if line.what == "forfeit" else entry.lines).append(line)
    if not entry.refused:
        entry.lines += _bye_lines(division, index, byes, values)
    return entry


def _table_line(table, settled, pairing, game, by_number, index, values, division):
    line = Line(table, division, "", "not entered", settled=settled)
    if not settled.ready:
        line.reasons += settled.reasons
        return line
    first = (game.first_side or "A") if game is not None else "A"
    sides = (first, "B" if first == "A" else "A")
    players = [settled.names.get(side) for side in sides]
    if any(p is None or p.number not in by_number for p in players):
        players = list(pairing.players)  # a double forfeit needs no sides
    if settled.forfeit_spread:
        spreads = (
            [settled.forfeit_spread[s] for s in sides]
            if settled.names
            else [-abs(v) for v in settled.forfeit_spread.values()]
        )
        line.players = tuple((p.number, p.name, s) for p, s in zip(players, spreads, strict=True))
        return _checked_forfeit(line, by_number, index)
    scores = [settled.final[side] for side in sides]
    line.players = tuple((p.number, p.name, s) for p, s in zip(players, scores, strict=True))
    return _checked_game(line, by_number, index, values)


def _checked_game(line, by_number, index, values):
    (pn1, name1, ps1), (pn2, name2, ps2) = line.players
    had = [_scored(by_number[pn], index) for pn in (pn1, pn2)]
    if had == [ps1, ps2]:
        line.what = "already in TSH"
        return line
    if any(h is not None for h in had):
        line.differs = True
        line.reasons.append(
            f"TSH already has {name1} {had[0] if had[0] is not None else '-'} and {name2} "
            f"{had[1] if had[1] is not None else '-'} for round {index + 1}; these are {ps1} and {ps2}: "
            "correct it in TSH (`es`) if these are right"
        )
        return line
    for _pn, name, score in line.players:
        if not LOWEST <= score <= values["max_score"]:
            line.reasons.append(
                f"{name}'s final score {score} is outside what TSH takes ({LOWEST} to {values['max_score']})"
            )
    if sorted((ps1, ps2)) == sorted((0, values["bye_spread"])):
        line.reasons.append(f"TSH refuses {ps1} {ps2} as a game (it is a bye's spread): settle it by hand")
    if line.reasons:
        return line
    line.text = f"{pn1} {ps1} {pn2} {ps2}" + (f" {ps1 - ps2}" if values["entry"] == "both" else "")
    line.what = "game"
    return line


def _checked_forfeit(line, by_number, index):
    had = [_scored(by_number[pn], index) for pn, _, _ in line.players]
    if had == [s for _, _, s in line.players]:
        line.what = "already in TSH"
        return line
    if any(h is not None for h in had):
        line.differs = True
        line.reasons.append(
            f"TSH already has other scores for round {index + 1} at this table: change them in TSH (`es`)"
        )
        return line
    line.text = "\n".join(f"{pn} {spread}" for pn, _, spread in line.players)
    line.what = "forfeit"
    return line


def _bye_lines(division, index, byes, values):
    """`pn spread` for each active player paired with 0 and not yet scored, unless TSH does it itself."""
    wanting = [b for b in byes if b.active and b.score is None and b.player.division == division.name]
    unscored = [p for p in division.players if p.active and _scored(p, index) is None]
    unpaired = [
        p for p in division.players if p.active and not (index < len(p.opponents) and p.opponents[index])
    ]
    automatic = len(unscored) % 2 == 1 and len(unpaired) == 1 and len(wanting) == 1
    lines = []
    for bye in wanting:
        pn, name = bye.player.number, bye.player.name
        if automatic:
            lines.append(Line("", division.name, "", "bye", ((pn, name, values["bye_spread"]),),
                              [f"TSH gives {name} the bye (+{values['bye_spread']}) itself at the prompt"]))  # fmt: skip  # one Line
            continue
        lines.append(
            Line(
                "", division.name, f"{pn} {values['bye_spread']}", "bye", ((pn, name, values["bye_spread"]),)
            )
        )
    return lines
