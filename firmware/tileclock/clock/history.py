"""The one reader of records: games in a stream of records, a game's state rebuilt from them,
and its round and table.

Recovery (`GameClock.recover`), `replay`, `collect`, `export`, the penalty sheet and
the hall (the clock's uplink and the director's page) all read records back through
here, so a game reads the same everywhere.

How a stream splits into games: a game is its `new_game` record and every record
after it up to the next game. A `boot` record says the clock started; what it
belongs to is known only from the record after it. Followed by `new_game`, it is
the power-on that opened that game (the game's `lead`); followed by anything else
(a `recovered`), the clock restarted and took the game up again, and the `boot`
stays inside the game. Records before the first `new_game` that no game claims
are not part of any game.
"""

from dataclasses import dataclass, field

from ..wire.records import SIDES
from .accounting import Accounting
from .calls import Calls
from .rules import profile
from .scene import Scene
from .state import GameState, State
from .timecode import NS_PER_MS, NS_PER_S, parse_clock
from .view import View


@dataclass
class Game:
    """One game's records, from its `new_game` on, and the `boot` records that led into it."""

    records: list
    lead: list = field(default_factory=list)
    #: the `boot` record in force when the game opened (in its lead, or further back), or None
    opened_in: dict | None = None

    @property
    def first(self):
        """The game's `new_game` record."""
        return self.records[0]

    @property
    def seq(self):
        """The seq of its `new_game`: the game's name in files and tables."""
        return self.first["seq"]

    @property
    def end(self):
        """The game's last `end` record (a later one supersedes an earlier), or None."""
        return next((r for r in reversed(self.records) if r["ev"] == "end"), None)

    def origin_boot_id(self):
        """The `boot_id` of the boot in which the game's monotonic origin (`mono_ns`) was last taken."""
        boot_id, origin = self.first.get("boot_id", (self.opened_in or {}).get("boot_id")), None
        for record in self.records:
            if record["ev"] == "boot":
                boot_id = record.get("boot_id")
            elif "mono_ns" in record:
                origin = boot_id
        return origin


class GameSplitter:
    """Splits a stream of records into games, one record at a time (for readers that stream)."""

    def __init__(self):
        self.game = None  # the game being read
        self._boots = []  # boot records not yet known to lead a game or sit inside one
        self._boot = None  # the last boot record seen

    def add(self, record):
        """Take the next record; returns the records it settles, as (game, record) pairs in order.

        `game` is the `Game` a record belongs to, or None for a record before any game. A `boot` is
        settled by the record after it, so it comes out with that record.
        """
        if record["ev"] == "boot":
            self._boots.append(record)
            self._boot = record
            return []
        boots, self._boots = self._boots, []
        if record["ev"] == "new_game":
            self.game = Game([record], lead=boots, opened_in=self._boot)
            return [(self.game, boot) for boot in boots] + [(self.game, record)]
        if self.game is not None:
            self.game.records.extend(boots + [record])
        return [(self.game, r) for r in boots + [record]]

    def pending(self):
        """Boot records still waiting for the record that settles them."""
        return list(self._boots)


def split_games(records):
    """The `Game`s of a stream of records, in order."""
    splitter, games = GameSplitter(), []
    for record in records:
        for game, _ in splitter.add(record):
            if game is not None and (not games or games[-1] is not game):
                games.append(game)
    return games


def last_game(records):
    """The stream's last `Game`, or None."""
    games = split_games(records)
    return games[-1] if games else None


def reaches_last_game(records):
    """Whether `records` (the newest of a journal, oldest first) reach back far enough to take up
    the last game: to its `new_game`, and to the boot it opened in (named by the `new_game`
    itself, or a `boot` record before it)."""
    starts = [i for i, record in enumerate(records) if record["ev"] == "new_game"]
    if not starts:
        return False
    return "boot_id" in records[starts[-1]] or any(r["ev"] == "boot" for r in records[: starts[-1]])


def opening_lost(records, first_seq):
    """Whether the records of a journal's segment (the good ones, oldest first; the segment begins
    at seq `first_seq`) open a game whose `new_game` is lost (damaged).

    A segment begins a game (at its `new_game`, or the `boot` before it), or carries on the game
    before it when that game's segment could not be written into: then it begins with the `boot`
    and `recovered` of a start. So a segment whose records hold no `new_game` and do not begin so
    is a game of its own, its opening damaged: a restart must not read back into the game before.
    """
    played = [record for record in records if record["ev"] != "boot"]
    if not played or any(record["ev"] == "new_game" for record in records):
        return False
    carries_on = played[0]["ev"] == "recovered" and played[0]["seq"] <= first_seq + 1
    return not carries_on


def stand_in_opening(records, rules_name, start_ms):
    """A `new_game` for a game whose own is lost: `rules_name` (the clock's), and each side's
    starting time as the game's first record shows it (its display plus its time used, in whole
    seconds), else `start_ms` (the clock's)."""
    first = next(record for record in records if record["ev"] != "boot")
    time_ms = {}
    for side in SIDES:
        try:
            shown_s = parse_clock(first[side]["shown"])
        except ValueError:
            shown_s = None
        allowance_s = None if shown_s is None else shown_s + first[side]["used_ms"] // 1000
        time_ms[side] = allowance_s * 1000 if allowance_s is not None and allowance_s > 0 else start_ms[side]
    zero = {"used_ms": 0, "shown": "", "pen": 0, "late_pen": 0}
    return {
        "seq": first["seq"] - 1,
        "ev": "new_game",
        "t_ms": 0,
        "rules": rules_name,
        "time_ms": time_ms,
        "state": State.READY,
        "run": None,
        "A": zero,
        "B": zero,
        "stand_in": True,
    }


def reconcile(game, newest, origin_ns, rules):
    """Make a rebuilt `game` (a `GameState`) agree with `newest`, its newest record, which states
    who runs and each side's time used and displayed: records before it may be damaged (a switch
    lost), and what the clock sent last is what the players saw. Returns what was taken from it
    (text), empty when the rebuild agrees (to the millisecond the records are floored to)."""
    at_ns = origin_ns + record_instant_ns(newest)
    taken = []
    state, run = newest["state"], newest["run"]
    stoppable = (State.RUNNING, State.PAUSED)
    if (
        game.state in stoppable
        and state in stoppable
        and (game.state, game.run) != (state, run)
        and not game.absent
    ):
        if state == State.PAUSED:
            game.stop(at_ns, State.PAUSED)
            taken.append("stopped")
        elif run in SIDES:
            game.run_side(run, at_ns)
            taken.append(f"{run} runs")
    for side in SIDES:
        stated, rebuilt = newest[side]["used_ms"], game.used_ns(side, at_ns) // NS_PER_MS
        if abs(stated - rebuilt) > 1:
            delta_ns = stated * NS_PER_MS - game.used_ns(side, at_ns)
            game.used[side] += delta_ns
            game.stopped_total_ns -= delta_ns  # the books still balance: time moved, not made
            taken.append(f"{side} used {stated / 1000:.3f} s (rebuilt {rebuilt / 1000:.3f} s)")
        try:
            shown_s = parse_clock(newest[side]["shown"])
        except ValueError:
            continue
        stated_limit_s = shown_s + newest[side]["used_ms"] // 1000  # both as of the record's own instant
        limit_s = game.allowance_ns[side] // NS_PER_S
        capped = rules.overtime_cap_s is not None and shown_s <= -(rules.overtime_cap_s + 1)
        if stated_limit_s != limit_s and not capped:  # (a capped display says less than it knows)
            game.allowance_ns[side] += (stated_limit_s - limit_s) * NS_PER_S
            taken.append(f"{side} shows {newest[side]['shown']}")
    if not taken:
        return []
    return [f"{', '.join(taken)}, as seq {newest['seq']} ({newest['ev']}) says"]


#: Where a game sat in the tournament, as a director's `set` gave it.
SCENE_KEYS = ("round", "table")


def take_scene(scene, record):
    """The round and table of the game `record` belongs to once it is read: `scene` (the game's so
    far, {key: value}; None if not known yet) carried on.

    Only a game's own records give it a round or a table: its `new_game` (which starts them
    afresh), its `end` (as the clock held them), and a `set` that applied to this game (`applies:
    "this"`, sent before anyone pressed). A `set` sent while the game ran or after it ended
    (`applies: "next"`) is for the next game, so what it carries is never this game's.
    """
    ev = record.get("ev")
    if ev == "new_game":
        scene = dict.fromkeys(SCENE_KEYS)
    elif ev != "end" and not (ev == "set" and record.get("applies") == "this"):
        return scene
    given = {key: record[key] for key in SCENE_KEYS if record.get(key) is not None}
    return {**(scene or dict.fromkeys(SCENE_KEYS)), **given}


def game_scene(records):
    """The round and table a game's `records` (from its `new_game` on) gave it, as {key: value}
    (None: never given); see `take_scene`."""
    scene = dict.fromkeys(SCENE_KEYS)
    for record in records:
        scene = take_scene(scene, record)
    return scene


def record_instant_ns(record):
    """A record's instant in ns since its game's start: exact where it carries `at_ns`."""
    return record.get("at_ns", record["t_ms"] * NS_PER_MS)


def apply_record(game, record, t_ns, rules):
    """Apply one record to `game` (a `GameState`) at `t_ns`, as the clock did when it wrote it."""
    ev = record["ev"]
    if ev in ("start", "resume", "switch"):
        if ev == "switch":
            game.turns[record["button"]] += 1
        game.run_side(record["run"], t_ns)
    elif ev == "late_start":
        absent = SIDES if record["player"] == "both" else (record["player"],)
        game.absent = dict.fromkeys(absent, t_ns)
        game.start_round(t_ns)
        game.charge(set(absent) if rules.absence_runs_clock else set(), t_ns)
    elif ev == "arrived":
        game.arrive(record["player"], t_ns)
    elif ev == "pause" or (
        ev == "recovered" and record["state"] == State.PAUSED and game.state == State.RUNNING
    ):
        game.stop(t_ns, State.PAUSED)
    elif ev == "adjust":
        game.correct(record["player"], record["delta_ms"] * NS_PER_MS, t_ns)
    elif ev == "penalty" and record["kind"] == "late":
        game.late_pen[record["player"]] = rules.late_penalty(game.absence_ns(record["player"], t_ns))
    elif ev == "forfeit":  # the game ends with it (its `end` follows at the same instant)
        game.end(t_ns, "forfeit", record["player"], record["reason"])
    elif ev == "end":
        game.end(t_ns, record["reason"])
        game.end_seq = record["seq"]
    elif ev == "reopen":
        game.reopen(t_ns)
    elif ev == "takeover":  # a spare took this game over from a dead clock (spare.py)
        used = {side: record[side]["used_ms"] * NS_PER_MS for side in SIDES}
        limits = {side: record["limit_ms"][side] * NS_PER_MS for side in SIDES}
        late = {side: record[side].get("late_pen", 0) for side in SIDES}
        game.take_over(t_ns, used, limits, late, record.get("first"))
    elif ev == "moved":  # the hall said its game moved to a spare: it ends here (requests.py)
        game.end(t_ns, "moved")
    elif ev == "round_start":
        game.round_start_at, game.round_start_ns = None, t_ns
    if ev == "set" and record.get("applies") == "this" and "start_at_ns" in record:
        start = (game.t0_ns + record["start_at_ns"], record["start_ms"], record.get("late_ms", 0))
        game.round_start_at = start
    if ev == "set" and record.get("applies") == "this" and "time_ms" in record:
        game.give_start_times({side: ms * NS_PER_MS for side, ms in record["time_ms"].items()})


def game_rules(new_game):
    """The `Rules` a game was played under, from its `new_game` record (profile and changes)."""
    return profile(new_game["rules"], new_game.get("rules_set"))


def rebuild(records, origin_ns, rules):
    """The `GameState` a game's `records` leave, its start placed at `origin_ns`."""
    first = records[0]
    game = GameState.new(origin_ns, {side: first["time_ms"][side] * NS_PER_MS for side in SIDES})
    game.seq = first.get("seq")  # the game's name: the hall's score link names the game by it
    for record in records[1:]:
        apply_record(game, record, origin_ns + record_instant_ns(record), rules)
        if record["ev"] == "recovered":  # a start took the game up as this says (see `reconcile`)
            reconcile(game, record, origin_ns, rules)
    return game


def playable(records, rules):
    """The records of a game (its `new_game` first) that play back, and (seq, why) of each that
    does not.

    Every record passed the decoder's checks, yet its fields may still make no sense with the
    records before it (a record written by a clock with a bug, or a flipped field re-framed): a
    record that playing back raises on is damage like any other. It is left out, and the game is
    played back again without it, until every record left plays.
    """
    rejected = {}
    while True:
        kept = [record for record in records if record["seq"] not in rejected]
        failing = _first_unplayable(kept, rules)
        if failing is None:
            return kept, list(rejected.items())
        record, error = failing
        rejected[record["seq"]] = f"{record['ev']} cannot be played back: {type(error).__name__} {error}"


def _first_unplayable(records, rules):
    """The first of a game's records that raises when played back (with the error), or None."""
    game = GameState.new(0, {side: records[0]["time_ms"][side] * NS_PER_MS for side in SIDES})
    scene = Scene()
    for record in records:
        try:
            scene.take(record, this_boot=True)
            if record is not records[0]:
                apply_record(game, record, record_instant_ns(record), rules)
        except Exception as error:  # noqa: BLE001 - any failure of a journal's record is damage, never a crash
            return record, error
    return None


@dataclass(frozen=True)
class Instant:
    """A recorded game as of one instant: its state rebuilt, read under its rules."""

    state: GameState
    accounting: Accounting
    #: the exact instant (ns since the game's start) and the millisecond asked for
    at_ns: int
    at_ms: int
    #: the last record at or before that instant
    record: dict

    def side(self, side):
        """`side` as its screen showed it then (a `SideView`)."""
        return self.accounting.side_view(self.state, side, self.at_ns)


def state_at(game, at_ms=None, after_seq=None):
    """The one definition of a recorded game "at" an instant: at `at_ms` since its start, after every
    record of that millisecond (each at its exact instant, its `at_ns` where it has one); or just
    after record `after_seq`. Between two records nothing changes but the running side's time, so
    the state follows from the game rebuilt up to the last record then. An `Instant`."""
    records = game.records
    if after_seq is not None:
        upto = [r for r in records if r["seq"] <= after_seq]
        if not upto:
            raise ValueError(f"seq {after_seq} is before this game (it starts at seq {game.seq})")
        at_ms = upto[-1]["t_ms"]
    else:
        upto = [r for r in records if r["t_ms"] <= at_ms]
    accounting = Accounting(game_rules(game.first))
    state = rebuild(upto, 0, accounting.rules)
    at_ns = max(at_ms * NS_PER_MS, record_instant_ns(upto[-1]))
    return Instant(state, accounting, at_ns, at_ms, upto[-1])


def records_to(records, record):
    """`records` (a game's, in order) up to and with `record`, one of them: by place, not by seq
    (a game a spare took over holds two clocks' seqs, `director/records/moved.py`)."""
    place = next((n for n, one in enumerate(records) if one is record), None)
    if place is None:  # a copy of one of them: the same game's records to its seq
        return [one for one in records if one["seq"] <= record["seq"]]
    return records[: place + 1]


def view_at(game, at_ms=None, after_seq=None):
    """What both screens showed at `at_ms` since `game`'s start, or just after record `after_seq`
    (see `state_at`). Returns (`View`, the last record at or before that instant, the instant in ms)."""
    instant = state_at(game, at_ms, after_seq)
    state, at_ns = instant.state, instant.at_ns
    calls = Calls()
    calls.rebuild(records_to(game.records, instant.record))
    view = View(
        state.state,
        state.run,
        instant.side("A"),
        instant.side("B"),
        round_left_s=instant.accounting.round_left_s(state, at_ns),
        end_reason=state.end_reason,
        call=calls.shown(),
    )
    return view, instant.record, instant.at_ms
