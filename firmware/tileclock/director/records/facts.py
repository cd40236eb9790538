"""What a director needs to know about one recorded game, read from its records.

Where the `end` summary names a fact (who moved first, the late penalty, the round and the table)
it is taken from there; a clock whose summary does not carry it yet has the same fact worked out
from the records, so games from every firmware read alike.
"""

from dataclasses import dataclass, field

from ...clock.history import game_scene
from ...clock.timecode import format_clock
from ...wire.labels import table_key
from ...wire.records import SIDES

IN_PLAY = ("start", "resume", "switch")


@dataclass
class SideFacts:
    """One side's figures at the end of a game (or at its last record)."""

    overtime_pen: int
    late_pen: int
    total_pen: int
    overtime_s: int
    shown: str
    used_ms: int
    lost_on_time: bool


@dataclass
class Correction:
    player: str
    delta_ms: int
    t_ms: int
    after_end: bool

    def text(self, who=None):
        """`A +1:00 at 0:25` (or with `who` in place of the side)."""
        sign = "+" if self.delta_ms >= 0 else "-"
        when = "after the end" if self.after_end else f"at {clock_text(self.t_ms)}"
        return f"{who or self.player} {sign}{format_clock(abs(self.delta_ms) // 1000)} {when}"


@dataclass
class GameFacts:
    """One game: where it was played, who moved first, its penalties, forfeits, corrections, notes."""

    source: str
    board: str | None
    clock_id: str | None
    game_seq: int
    rules: str
    round: int | None
    table: str | None
    started: bool
    ended: bool
    end_reason: str | None
    first_side: str | None
    sides: dict
    forfeit: tuple | None  # (player "A"/"B"/"both", reason)
    corrections: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    records: list = field(default_factory=list, repr=False)

    def name(self):
        """`board 3, game 12`: how messages point at this game."""
        where = f"board {self.board}" if self.board is not None else self.source
        clock = f" (clock {self.clock_id})" if self.clock_id else ""
        return f"{where}{clock}, game {self.game_seq}"


def clock_text(t_ms):
    """Game time as `m:ss` (tenths when not whole)."""
    tenths = (t_ms % 1000) // 100
    return format_clock(t_ms // 1000) + (f".{tenths}" if tenths else "")


def game_facts(game, source="", board=None):
    """The `GameFacts` of `game` (its records, from `new_game` on; a list or an object with `.records`)."""
    records = list(getattr(game, "records", game))
    lead = list(getattr(game, "lead", []))
    first = records[0]
    ends = [r for r in records if r["ev"] == "end"]
    end = ends[-1] if ends else None
    summary = (end or {}).get("summary") or {}
    boots = [r for r in lead + records if r["ev"] == "boot"]
    facts = GameFacts(
        source=source,
        board=_text(boots[-1].get("board")) if boots and boots[-1].get("board") is not None else board,
        clock_id=next((_text(r["clock"]) for r in records + boots if r.get("clock")), None),
        game_seq=first["seq"],
        rules=str(first.get("rules", "")),
        round=_round(_scene(records, summary, "round")),
        table=_table(_scene(records, summary, "table")),
        started=any(r["ev"] in IN_PLAY + ("late_start", "forfeit") for r in records),
        ended=end is not None,
        end_reason=end.get("reason") if end else None,
        first_side=_first_side(records, summary),
        sides=_sides(records, summary, end),
        forfeit=_forfeit(records, summary),
        records=records,
    )
    after_end = False
    for record in records:
        if record["ev"] == "end":
            after_end = True
        elif record["ev"] in ("reopen", "new_game"):
            after_end = False
        elif record["ev"] == "adjust":
            facts.corrections.append(
                Correction(record["player"], record["delta_ms"], record["t_ms"], after_end)
            )
    facts.notes = _notes(facts, records, ends)
    return facts


def _text(value):
    return str(value).strip()


def _scene(records, summary, key):
    """Round or table as the director's link gave them to this game: the `end` summary, else the
    game's own records (`clock/history.py`'s `game_scene`: never a `set` meant for the next game)."""
    if summary.get(key) is not None:
        return summary[key]
    return game_scene(records)[key]


def _round(value):
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _table(value):
    return table_key(value) if value is not None and str(value).strip() else None


def _first_side(records, summary):
    """The side whose clock first ran in play (not while a late side was absent)."""
    for key in ("first", "moved_first", "first_side"):
        if summary.get(key) in SIDES:
            return summary[key]
    absent = None
    for record in records:
        ev = record["ev"]
        if ev == "late_start":
            absent = record.get("player")
        elif record.get("arrived") or ev == "pause":
            absent = None  # the arrival itself is not a move
        elif ev in IN_PLAY and absent is None and record.get("run") in SIDES:
            return record["run"]
    return None


def _late_steps(records):
    """Each side's late penalty, from the steps of its `penalty` records of kind `late`."""
    late = dict.fromkeys(SIDES, 0)
    before = {side: 0 for side in SIDES}
    for record in records:
        if record["ev"] == "penalty" and record.get("kind") == "late" and record.get("player") in SIDES:
            side = record["player"]
            late[side] += record[side]["pen"] - before[side]
        for side in SIDES:
            if isinstance(record.get(side), dict):
                before[side] = record[side].get("pen", before[side])
    return late


def _sides(records, summary, end):
    late_from_records = _late_steps(records)
    last = records[-1]
    sides = {}
    for side in SIDES:
        mine = summary.get(side) if end else None
        mine = mine if isinstance(mine, dict) else dict(last[side], overtime_s=None, lost_on_time=False)
        total = _first_int(mine, ("total_pen", "pen"), 0)
        late = _first_int(mine, ("late_pen", "pen_late"), late_from_records[side])
        overtime = _first_int(mine, ("overtime_pen", "pen_overtime"), total - late)
        overtime_s = mine.get("overtime_s")
        if overtime_s is None:
            overtime_s = max(0, -_shown_seconds(mine.get("shown", "0:00")))
        sides[side] = SideFacts(
            overtime_pen=overtime,
            late_pen=late,
            total_pen=total,
            overtime_s=overtime_s,
            shown=str(mine.get("shown", "")),
            used_ms=int(mine.get("used_ms", 0)),
            lost_on_time=bool(mine.get("lost_on_time", False)),
        )
    return sides


def _first_int(mapping, keys, default):
    for key in keys:
        if isinstance(mapping.get(key), int) and not isinstance(mapping.get(key), bool):
            return mapping[key]
    return default


def _shown_seconds(shown):
    sign = -1 if shown.startswith("-") else 1
    minutes, _, seconds = shown.lstrip("-").partition(":")
    try:
        return sign * (int(minutes) * 60 + int(seconds))
    except ValueError:
        return 0


def _forfeit(records, summary):
    forfeits = [r for r in records if r["ev"] == "forfeit"]
    if forfeits:
        return forfeits[-1].get("player"), forfeits[-1].get("reason", "")
    block = summary.get("forfeit")
    if isinstance(block, dict) and block.get("player"):
        return block["player"], block.get("reason", "")
    return None


def _notes(facts, records, ends):
    """What the director should look at before entering the result."""
    notes = []
    if not facts.started:
        notes.append("no press was ever recorded in this game")
    elif not facts.ended:
        notes.append(
            f"the game has not ended: figures as of its last record ({clock_text(records[-1]['t_ms'])})"
        )
    if len(ends) > 1:
        notes.append(
            f"the result was re-issued after the end: the last end record (seq {ends[-1]['seq']}) counts"
        )
    if any(r["ev"] == "reopen" for r in records):
        notes.append("the game was reopened after it had ended")
    notes.extend(_calls(records))
    if facts.forfeit is None and facts.ended:
        note = _out_play_check(records, ends[-1])
        if note:
            notes.append(note)
    return notes


def _calls(records):
    """Each call to the director in the game, and how it was answered (docs/rules.md, "Calling the
    director"): `the board called the director at 12:30 (call 57): taken at 12:41 by page-3f2a, done at 14:02`."""
    calls = {}
    for record in records:
        if record["ev"] == "call":
            calls[record["seq"]] = [f"at {clock_text(record['t_ms'])}"]
        elif record["ev"] == "new_game" and isinstance(record.get("call"), int):
            calls[record["call"]] = ["in the game before"]  # carried into this game, still open
        elif record["ev"] == "call_answer" and record.get("call") in calls:
            by = f" by {record['by']}" if record.get("by") else ""
            calls[record["call"]].append(f"{record.get('answer')} at {clock_text(record['t_ms'])}{by}")
    notes = []
    for seq, (raised, *answers) in calls.items():
        answered = ", ".join(answers) if answers else "not answered in this game"
        notes.append(f"the board called the director {raised} (call {seq}): {answered}")
    return notes


def _out_play_check(records, end):
    """NSA VII.J.2: a last turn whose press started the other clock, which ran on into more penalty.

    If that press was the out play, the clock was started in error: the penalty as of the press is
    what counts. Both figures are given; the director decides.
    """
    upto = records[: records.index(end)]
    runs = [r for r in upto if r["ev"] in IN_PLAY]
    if not runs or runs[-1]["ev"] != "switch":
        return None
    press = runs[-1]
    side = press.get("run")
    if side not in SIDES:
        return None
    stop = next((r for r in upto if r["seq"] > press["seq"] and r.get("run") is None), end)
    at_press = press[side]["pen"]
    at_end = ((end.get("summary") or {}).get(side) or stop[side]).get("pen", 0)
    if at_end <= at_press:
        return None
    ran = clock_text(stop["t_ms"] - press["t_ms"])
    return (
        f"{press['button']}'s last press ({clock_text(press['t_ms'])}) started {side}'s clock, which ran {ran} "
        f"more: if that press was the out play (NSA VII.J.2), {side}'s penalty is {at_press} as of it, "
        f"not the {at_end} the clock ended with"
    )
