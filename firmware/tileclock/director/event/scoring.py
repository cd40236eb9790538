"""The final scores of a table: the slip's scores, then every penalty by rule, each step in words.

Pure: a matched table (`matching.Table`) and the score entries made for it in, a `Settled` out.
The order of the steps, as the rulebooks have it:

1. the scores as entered (both players' totals, as written on the slip);
2. each side's time penalty (10 a started minute of overtime, NASPA V.G.2) and late penalty
   (school rule 25), as the clock worked them out;
3. NASPA V.G.3, a side that passed 10 minutes of overtime: it loses, 100 is deducted from its
   score (the clock's whole deduction for it: the 10 minutes' own penalty is not added on top), the
   opponent's usual penalty stands, and if the offender still has the greater score (or the same:
   the offender loses) the opponent's score is raised to win by one point;
4. an absence forfeit (NASPA III.C, school rule 25): no game was played; the winner gets the
   profile's forfeit spread (+50), the absent player its negative (-50), both absent both -50.
   The clock's penalties do not apply.

Entries: several may be made for one table (a phone at each side, the director). The director's
latest entry, if any, counts; otherwise both sides must have entered (two different `by`), and
every entry must agree, or the table is flagged.
"""

from dataclasses import dataclass, field

from ...wire.records import SIDES
from .matching import other_side

#: Forfeit spread by rules profile: NASPA V.K.1 and school rule 25 both give +50 / -50.
FORFEIT_SPREAD = {"naspa": 50, "school": 50, "nsa1997": 50}
DIRECTOR = "director"


@dataclass(frozen=True)
class Entry:
    """One score entry for a table: each side's score as written on the slip, who and when."""

    table: str
    scores: dict  # side -> int
    by: str = DIRECTOR  # "director", or the phone's token name ("phone A", "phone B")
    at: str = ""  # when, as the entry was stamped
    seat_a: int | None = None  # TSH player number who sat at side A, where the pairings cannot say


@dataclass
class Settled:
    """A table's result: final scores by side, the steps in words, or why nothing is entered."""

    table: str
    names: dict = field(default_factory=dict)  # side -> pairings.Player
    entered: dict = field(default_factory=dict)  # side -> slip score
    final: dict = field(default_factory=dict)  # side -> final score (played game)
    forfeit_spread: dict = field(default_factory=dict)  # side -> +/- spread (absence forfeit)
    steps: list = field(default_factory=list)
    reasons: list = field(default_factory=list)  # why nothing is entered for this table
    entries: list = field(default_factory=list)  # the `Entry`s that were made, in order

    @property
    def ready(self):
        return not self.reasons and bool(self.final or self.forfeit_spread)


def chosen_entry(entries):
    """(the entry that counts, or None; a reason when the entries disagree, else '')."""
    if not entries:
        return None, ""
    directors = [e for e in entries if e.by == DIRECTOR]
    if directors:
        return directors[-1], ""
    first = entries[0]
    if len({e.by for e in entries}) < 2:
        return None, f"only {first.by} has entered: waiting for the other side's entry or the director's"
    for other in entries[1:]:
        if other.scores != first.scores or (other.seat_a, first.seat_a) not in _seats_agreeing(first, other):
            return None, (
                "the score entries disagree: "
                + "; ".join(f"{e.by}: A {e.scores.get('A')} B {e.scores.get('B')}" for e in entries)
                + " (the director settles it)"
            )
    return next((e for e in entries if e.seat_a is not None), first), ""


def _seats_agreeing(one, two):
    # a seat given by one entry and not the other agrees; two different seats do not
    return (
        {(one.seat_a, two.seat_a)} if None in (one.seat_a, two.seat_a) or one.seat_a == two.seat_a else set()
    )


def settle(table, entries, rules=""):
    """The `Settled` of a matched `table` from its score `entries` (in the order they were made)."""
    result = Settled(table.table or "", names=dict(table.names), entries=list(entries))
    game = table.game
    if table.problems:
        result.reasons += table.problems
        return result
    if game is None or table.pairing is None:
        result.reasons.append("no game matched to a pairing")
        return result
    if not game.ended:
        result.reasons.append("the game has not ended on the clock")
        return result
    player, why = game.forfeit or (None, None)
    if why == "absent":
        return _absence(result, game, player)
    entry, disagree = chosen_entry(entries)
    if disagree:
        result.reasons.append(disagree)
        return result
    if entry is None:
        result.reasons.append("no score entered yet")
        return result
    if set(entry.scores) != set(SIDES):
        result.reasons.append("the entry needs both sides' scores")
        return result
    if len(result.names) != 2:
        result.reasons.append("which player sat at side A is not known")
        return result
    result.entered = dict(entry.scores)
    result.steps.append(
        "as entered: " + ", ".join(f"{_who(result, s)} {entry.scores[s]}" for s in _in_order(game))
    )
    final = dict(entry.scores)
    offender = player if why == "overtime_limit" and player in SIDES else None
    for side in _in_order(game):
        figures = game.sides[side]
        if side == offender:
            final[side] -= figures.total_pen
            result.steps.append(
                f"{_who(result, side)} passed 10 minutes of overtime and loses (NASPA V.G.3): "
                f"-{figures.total_pen}, in place of the overtime penalty = {final[side]}"
            )
            continue
        for amount, what in ((figures.overtime_pen, _overtime(figures)), (figures.late_pen, "late")):
            if amount:
                final[side] -= amount
                result.steps.append(f"{_who(result, side)} -{amount} {what} = {final[side]}")
        rest = figures.total_pen - figures.overtime_pen - figures.late_pen
        if rest:
            final[side] -= rest
            result.steps.append(f"{_who(result, side)} -{rest} (the clock's other penalty) = {final[side]}")
    if offender is not None:
        _win_by_one(result, final, offender)
    if len(result.steps) == 1:
        result.steps.append("no penalty on either side")
    result.final = final
    return result


def _absence(result, game, player):
    spread = FORFEIT_SPREAD.get(game.rules, 50)
    if player == "both":
        result.forfeit_spread = {"A": -spread, "B": -spread}
        result.steps.append(f"both players absent: a double forfeit, -{spread} spread each (no game played)")
        return result
    if len(result.names) != 2:
        result.reasons.append(
            "an absence forfeit, but which player was absent is not known: say who sat at side A"
        )
        return result
    winner = other_side(player)
    result.forfeit_spread = {winner: spread, player: -spread}
    result.steps.append(
        f"{_who(result, player)} did not arrive in time and forfeits: {_who(result, winner)} +{spread} "
        f"spread, {_who(result, player)} -{spread} (no game played: the clock's penalties do not apply)"
    )
    return result


def _win_by_one(result, final, offender):
    other = other_side(offender)
    if final[offender] >= final[other]:
        raised = final[offender] + 1
        result.steps.append(
            f"{_who(result, offender)} still has {final[offender]} to {_who(result, other)}'s "
            f"{final[other]}: {_who(result, other)}'s score is raised to {raised} to win by one (NASPA V.G.3)"
        )
        final[other] = raised
    else:
        result.steps.append(f"{_who(result, other)} wins ({final[other]} to {final[offender]}) (NASPA V.G.3)")


def _overtime(figures):
    return f"overtime ({figures.shown} on the clock)"


def _in_order(game):
    first = game.first_side or "A"
    return first, other_side(first)


def _who(result, side):
    player = result.names.get(side)
    return player.name if player else f"side {side}"
