"""The game's transitions: what the buttons' intents, the rules' due events and the director's
requests do to a game, and the records that say so. A part of `GameClock` (core.py).

`Play` holds no state of its own: each call names the game (a `GameState`) it changes, and says
what happened through `emit`. A request or a chord the game does not allow now raises `Refused`
(the clock answers it with an `error` record that says why). The gestures are tabled in docs/rules.md.
"""

from copy import copy

from ..wire.records import SIDES, is_time_of_day
from .accounting import FORFEITS
from .calls import Calls
from .gestures import STOP
from .intents import (
    BothChord,
    CallDirector,
    Chord,
    ConfirmEnd,
    Ignored,
    SidePress,
    StopHoldRelease,
    StopPress,
    Stuck,
    Unstuck,
)
from .state import State, other
from .timecode import NS_PER_MS, NS_PER_S, format_clock, ms
from .view import Notice

READY, RUNNING, PAUSED, ENDED = State.READY, State.RUNNING, State.PAUSED, State.ENDED


class Refused(Exception):
    """A request (or a chord) the game does not allow now, a director's answer to a call among them;
    the message says why (an `error` record). The clock's one refusal: `core.ClockError` is a
    programming error, never a player's or a director's."""


class Play:
    """The transitions of a game under `rules` (buttons per `timing`, time read by `accounting`).

    What it needs of the clock: `emit(ev, t_ns, **fields)` makes a record of the game as it
    stands; `next_seq()` is the seq the next record will have; `open_game(t_ns)` opens the next game;
    `calls` (a `calls.Calls`) is the board's open call to the director, which outlives a game.
    """

    def __init__(self, rules, timing, accounting, emit, next_seq, open_game, calls=None):
        self.rules = rules
        self.timing = timing
        self.accounting = accounting
        self._emit = emit
        self._next_seq = next_seq
        self._open_game = open_game
        self.calls = Calls() if calls is None else calls
        #: t_ns -> the time of day (ms) by the device's own wall clock (chrony keeps it on the
        #: director's laptop), or None: given by the clock (core.py), asked only as a call is raised
        self.wall = None
        #: t_ns -> the time of day a director's `set wall=` gave (scene.py), or None
        self.scene_wall = lambda t_ns: None

    def time_of_day(self, t_ns):
        """The time of day at `t_ns` (ms since 1970, UTC): the device's wall clock's, else the one a
        director's `set` gave, else None (never a wrong one)."""
        said = self.wall(t_ns) if self.wall is not None else None
        # a wall clock outside 2020-2100 is unset: its call would be a record the decoder refuses
        return said if is_time_of_day(said) else self.scene_wall(t_ns)

    def open_next(self, game, t_ns, asked):
        """The director's `new game`: the next game opens, as the players' 2 s hold of STOP opens it
        (only on an ended game: a game in play is never wiped), its record saying `asked`."""
        if game.state != ENDED:
            raise Refused(f"new game: only on an ended game ({game.state}): end it first (round over)")
        self._open_game(t_ns, **{key: value for key, value in asked.items() if value is not None})

    def speaking_through(self, emit):
        """The same transitions, said through `emit` (the director's requests add who asked).

        Shallow on purpose: the twin shares the board's one open call (`calls`), so the call the
        buttons raise is the one a request answers, and Play keeps no other state of its own (its
        wall clocks are given before the twin is made)."""
        twin = copy(self)
        twin._emit = emit
        return twin

    def intent(self, game, intent):
        """What an intent of the buttons (gestures.py) does to `game`; may raise `Refused`."""
        match intent:
            case SidePress(t_ns=t, side=side):
                self._side_press(game, side, t)
            case StopPress(t_ns=t) if game.state == RUNNING:
                self._stop_press(game, t)
            case ConfirmEnd(t_ns=t) if game.state in (READY, PAUSED):
                self.end(game, t, "stop_hold")
            case StopHoldRelease(t_ns=t) if game.state == ENDED:
                self._open_game(t)
            case Chord(t_ns=t, side=side) if game.state == READY:
                self.late_start(game, t, (other(side),), "buttons", button=side)
            case Chord(t_ns=t, side=side, held=held) if game.state in (PAUSED, ENDED):
                delta_ns = (-1 if held else 1) * self.timing.correction_ms * NS_PER_MS
                self.correct(game, t, side, delta_ns, "buttons")
            case BothChord(t_ns=t) if game.state == READY:
                self.late_start(game, t, SIDES, "buttons")
            case BothChord(t_ns=t) if game.state == ENDED:
                self.reopen(game, t, "buttons")
            case BothChord(t_ns=t):
                self._ignore(STOP, t, "both_sides")
            case CallDirector(t_ns=t) if self.calls.open is None:
                wall_ms = self.time_of_day(t)  # its waiting time counts from here, across restarts
                self.calls.raised(self._next_seq(), wall_ms)  # the call's id: its record's seq
                self._emit("call", t, button=STOP, **({} if wall_ms is None else {"wall_ms": wall_ms}))
            case CallDirector(t_ns=t):
                self._ignore(STOP, t, "called")  # the panels already show the open call
            case Ignored(t_ns=t, button=button, reason=reason):
                self._ignore(button, t, reason)
            case Stuck(t_ns=t, button=button):
                detail = f"held down for over {self.timing.stuck_ms // 1000} s"
                self._emit("fault", t, part=f"button {button}", detail=detail)
            case Unstuck(t_ns=t, button=button):
                self._emit("fault_cleared", t, part=f"button {button}")

    def rule_due(self, game, t_ns, due):
        """The rule events `due` ({(side, kind), ...}) at `t_ns`: a forfeit ends the game; else each
        side's late penalty, overtime and penalty step, each said by a record."""
        forfeits = sorted((kind, side) for side, kind in due if kind in FORFEITS)
        if forfeits:
            kind, side = forfeits[-1]  # the cap before absence (sorted: "overtime_limit" > "absent")
            both = kind == "absent" and (len(game.absent) == 2 or len(forfeits) == 2)
            self.end(game, t_ns, "forfeit", "both" if both else side, kind)
            return
        for side in SIDES:
            kinds = {kind for s, kind in due if s == side}
            if "late_penalty" in kinds:
                game.late_pen[side] = self.rules.late_penalty(game.absence_ns(side, t_ns))
                self._emit("penalty", t_ns, player=side, kind="late")
            if "overtime" in kinds:
                self._emit("overtime", t_ns, player=side)
            if kinds & {"overtime", "penalty"}:
                self._emit("penalty", t_ns, player=side, kind="overtime")

    def end(self, game, t_ns, reason, lost=None, lost_reason=None):
        """End `game` at `t_ns` (or issue its summary again): `forfeit` and `end` records."""
        supersedes = game.end_seq
        game.end(t_ns, reason, lost, lost_reason)
        if lost is not None:
            self._emit("forfeit", t_ns, player=lost, reason=lost_reason)
        game.end_seq = self._next_seq()
        summary = self.accounting.summary(game, t_ns)
        self._emit(
            "end",
            t_ns,
            reason=reason,
            summary=summary,
            **({"supersedes": supersedes} if supersedes is not None else {}),
        )

    # ------------------------------------------- shared by the buttons and the director

    def late_start(self, game, t_ns, absent, source, button=None):
        """`absent` (sides) are late: their time runs (as the rules say) until each arrives."""
        if game.state != READY:
            raise Refused(f"late start only on a fresh game ({game.state})")
        game.absent = dict.fromkeys(absent, t_ns)
        game.start_round(t_ns)
        game.charge(set(absent) if self.rules.absence_runs_clock else set(), t_ns)
        player = absent[0] if len(absent) == 1 else "both"
        self._emit("late_start", t_ns, player=player, source=source, **({"button": button} if button else {}))

    def correct(self, game, t_ns, side, delta_ns, source):
        """A correction of `side`'s limit by `delta_ns`, on a stopped or ended game."""
        accounting, rules = self.accounting, self.rules
        if game.state not in (PAUSED, ENDED):
            raise Refused(f"adjust only while the clock is stopped mid-game or after the end ({game.state})")
        if game.lost:
            raise Refused("adjust: the game was forfeited")
        if game.end_reason == "moved":
            raise Refused("adjust: the game moved to another clock (give it there)")
        limit_s = (game.allowance_ns[side] + delta_ns) // NS_PER_S
        if abs(delta_ns) > rules.max_correction_s * NS_PER_S or not 0 <= limit_s <= rules.max_limit_s:
            raise Refused(
                f"adjust {side} {ms(delta_ns):+d}: one correction is at most "
                f"{format_clock(rules.max_correction_s)}, and a side's limit stays within "
                f"0:00 to {format_clock(rules.max_limit_s)} (it would be {format_clock(limit_s)})"
            )
        shown_before = game.display_seconds(side, t_ns)
        pen_before = accounting.overtime_pen(game, side, t_ns)
        game.correct(side, delta_ns, t_ns)
        game.notice = Notice("correction", side, delta_s=delta_ns // NS_PER_S)
        self._emit("adjust", t_ns, player=side, delta_ms=ms(delta_ns), source=source)
        if shown_before >= 0 > game.display_seconds(side, t_ns):
            self._emit("overtime", t_ns, player=side)
        if accounting.overtime_pen(game, side, t_ns) != pen_before:
            self._emit("penalty", t_ns, player=side, kind="overtime")
        if accounting.past_cap(game, side, t_ns):
            self.end(game, t_ns, "forfeit", side, "overtime_limit")
        elif game.state == ENDED:
            self.end(game, t_ns, game.end_reason)  # the summary again, as corrected

    def round_over(self, game, t_ns, source):
        """The round is over: the game ends at once."""
        if game.state == ENDED:
            raise Refused("round over: the game has already ended")
        self.end(game, t_ns, "round_over")

    def round_start(self, game, t_ns):
        """The round starts now, at the instant the director set (`set start=`): its limit counts
        from here, whenever the game's first press came (CLOCK_RULES §9, "School round end")."""
        _, start_ms, late_ms = game.round_start_at
        game.round_start_at = None
        game.round_start_ns = t_ns
        self._emit("round_start", t_ns, start_ms=start_ms, **({"late_ms": late_ms} if late_ms else {}))

    def reopen(self, game, t_ns, source):
        """An ended game (not a forfeit, nor a round over) goes back to stopped, exactly as it was."""
        if game.state != ENDED:
            raise Refused(f"reopen: the game has not ended ({game.state})")
        if game.lost or game.end_reason != "stop_hold":
            why = {"moved": "the game moved to another clock"}.get(game.end_reason, "the round is over")
            why = "a forfeit stands" if game.lost else why
            raise Refused(f"reopen: {why}")
        game.reopen(t_ns)
        self._emit("reopen", t_ns, source=source, reopens=game.end_seq)

    def answer_call(self, game, t_ns, call, answer, source):
        """The director's answer to the board's call `call`: `taken` or `done` (never acts on the game)."""
        why = self.calls.refusal(call, answer)
        if why is not None:
            raise Refused(why)
        self.calls.answered(answer)
        if answer == "done" and game.notice is None:  # never over a correction's notice (§6)
            game.notice = Notice("call_done")
        self._emit("call_answer", t_ns, call=call, answer=answer, source=source)

    # ---------------------------------------------------------------- buttons

    def _stop_press(self, game, t_ns):
        if len(game.absent) == 2:
            self._ignore(STOP, t_ns, "both_late")  # each arriving player presses their own button
            return
        arrived = next(iter(game.absent), None)
        game.stop(t_ns, PAUSED)
        self._emit("pause", t_ns, button=STOP, **({"arrived": arrived} if arrived else {}))

    def _side_press(self, game, side, t_ns):
        if game.state == ENDED:
            self._ignore(side, t_ns, "ended")
        elif side in game.absent and len(game.absent) == 2:
            game.arrive(side, t_ns)  # the first of two late players: the clock runs on against the other
            self._emit("arrived", t_ns, player=side, button=side)
        elif side in game.absent:
            game.stop(t_ns, PAUSED)  # a late player arrives: never a switch (NASPA III.C)
            self._emit("pause", t_ns, button=side, arrived=side)
        elif game.state in (READY, PAUSED):
            event = "start" if game.state == READY else "resume"
            game.run_side(other(side), t_ns)
            self._emit(event, t_ns, button=side)
        elif game.run != side:
            self._ignore(side, t_ns, "not_running")
        elif t_ns - game.since_ns < self.timing.min_turn_ms * NS_PER_MS:
            self._ignore(side, t_ns, "too_soon")
        else:
            game.turns[side] += 1
            game.run_side(other(side), t_ns)
            self._emit("switch", t_ns, button=side)

    def _ignore(self, button, t_ns, reason):
        self._emit("ignored", t_ns, button=button, reason=reason)
