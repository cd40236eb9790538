"""The clock itself: raw button edges in, records out, in exact integer time.

`GameClock` is pure: it never reads a clock, sleeps or touches hardware. Every
input carries its own timestamp (nanoseconds of one monotonic clock), every
query names the instant it asks about, and `next_deadline()` tells the caller
when something will next change without any input, so the caller can sleep
until then. Time is charged only at transitions, from edge to edge; nothing is
accumulated tick by tick.

It is assembled from parts, each with one concern:

- `state.GameState`: one game's state, replaced whole at each new game;
- `gestures.Gestures`: debounced edges turned into intents (holds, chords, stuck buttons);
- `accounting.Accounting`: time against the rules (penalties, what falls due, the summary);
- `timers.Timer`: the time-driven work, fired in time order;
- `history`: the game rebuilt from its records after a restart.

The clock turns intents and timers into transitions of the game and the records
that say so. The gestures are tabled in docs/rules.md.
"""

from .accounting import Accounting
from .gestures import (
    STOP,
    ButtonTiming,
    Correction,
    Gestures,
    Ignored,
    LateStart,
    SidePress,
    StopHoldRelease,
    StopPress,
    Stuck,
    Unstuck,
)
from .history import last_game, rebuild, record_instant_ns
from .records import SIDES, TRANSITIONS, Record
from .scene import Scene
from .state import GameState, State, other
from .timecode import NS_PER_MS, NS_PER_S, ms
from .timers import Timer, TimerKind, earliest
from .view import Notice, SideView, View

# The names other layers import from here.
__all__ = ["ButtonTiming", "ClockError", "GameClock", "SideView", "State", "View", "other"]

READY, RUNNING, PAUSED, ENDED = State.READY, State.RUNNING, State.PAUSED, State.ENDED


class ClockError(Exception):
    """A call the clock cannot take (a programming error, never a player's)."""


class GameClock:
    """The tournament clock for one board: every rule of `rules`, buttons per `timing`."""

    def __init__(self, rules, timing=ButtonTiming(), times_s=None, first_seq=0, checkpoint_ms=None):
        self.rules = rules
        self.timing = timing
        self.accounting = Accounting(rules)
        self.gestures = Gestures(timing)
        #: while a side runs, a `checkpoint` record this often bounds what a power cut can lose
        self.checkpoint_ms = checkpoint_ms
        times_s = times_s or {}
        self.start_ns = {side: times_s.get(side, rules.time_s) * NS_PER_S for side in SIDES}
        #: the director's settings: time of day, round, table, starting times (`set`)
        self.scene = Scene()
        self.now_ns = None
        self._game = None
        #: the kernel's id of the boot this process runs in, if known: new games carry it, so a
        #: restart knows a game's origin without reading back to the `boot` before it
        self.boot_id = None
        self._seq = first_seq
        self._out = []
        self._last_t_ns = None  # the instant of the last record
        self._handlers = {
            TimerKind.RULE: self._rule_due,
            TimerKind.SETTLE: self._settle,
            TimerKind.STUCK: self._stuck,
            TimerKind.CHECKPOINT: self._checkpoint,
        }

    @property
    def game(self):
        """The current game's `GameState`; ClockError before the first `new_game` or `recover`."""
        if self._game is None:
            raise ClockError("no game yet: call new_game first")
        return self._game

    # ----------------------------------------------------------------- inputs

    def new_game(self, t_ns, boot=None):
        """Start a fresh game at `t_ns` (at power-on; later games by the STOP gesture).

        `boot`, at power-on, is what a `boot` record before the game says of the
        clock (board, firmware, ...).
        """
        if self.now_ns is not None:
            self.advance(t_ns)
            t_ns = max(t_ns, self.now_ns)
        if boot is not None:
            self.boot_id = boot.get("boot_id")
        self.now_ns = t_ns
        self._start_game(t_ns, boot)
        return self._flush()

    def recover(self, records, now_ns, boot):
        """Rebuild the journal's last game from its `records` (dicts, oldest first) and go on at `now_ns`.

        `boot` is this start's boot record (with `boot_id`, the kernel's id of this boot). If the
        game's monotonic origin is from this boot, the process was restarted and the monotonic
        clock kept running: the game goes on exactly, the running side charged for the time the
        process was down, and whatever fell due meanwhile is recorded at its own instant. After a
        power cut the game comes back stopped as of its last record; the running side's time since
        that record is unknown, at most one checkpoint interval. Either way a `recovered` record
        says what happened. With no game in `records`, a new game starts.
        """
        game = last_game(records)
        if game is None:
            return self.new_game(now_ns, boot)
        self.boot_id = boot.get("boot_id")
        self._seq = max(self._seq, records[-1]["seq"] + 1)
        last_at = record_instant_ns(game.records[-1])
        origin_boot = game.origin_boot_id()
        same_boot = origin_boot is not None and origin_boot == boot.get("boot_id")
        if same_boot:
            origin = [r for r in game.records if "mono_ns" in r][-1]["mono_ns"]
        else:
            origin = now_ns - last_at
        self._game = rebuild(game.records, origin, self.rules)
        self._set_start_times(self.scene.rebuild(records, boot.get("boot_id"), same_boot))
        self.gestures.new_game()
        self.now_ns = self._last_t_ns = origin + last_at
        was_running = self.run
        if same_boot:
            checkpoint_ms, self.checkpoint_ms = self.checkpoint_ms, None  # none for time nobody was there
            self._advance(max(now_ns, self.now_ns))  # penalties and forfeits that fell due while down
            self.checkpoint_ms = checkpoint_ms
            extra = {"reason": "restart", "down_ms": ms(now_ns - (origin + last_at))}
        else:
            if self.state == RUNNING:
                self.game.stop(self.now_ns, PAUSED)
            self.now_ns = now_ns
            extra = {"reason": "power_cut", "uncertain_ms": self.checkpoint_ms if was_running else 0}
        self._emit("boot", self.now_ns, **boot)
        uncertain_s = self.checkpoint_ms // 1000 if extra.get("uncertain_ms") else 0
        self.game.notice = Notice("recovered", uncertain_s=uncertain_s)
        self._emit("recovered", self.now_ns, was_running=was_running, mono_ns=self.game.t0_ns, **extra)
        return self._flush()

    def edge(self, button, down, t_ns):
        """One raw contact edge of `button` (`A`, `B`, `STOP`): `down` for contact made.

        An edge stamped before an instant the clock has already processed is
        taken at that instant: the clock never goes back in time.
        """
        t_ns = self._catch_up(t_ns)
        self._act(self.gestures.edge(button, down, t_ns, self.state))
        return self._flush()

    def advance(self, t_ns):
        """Run the clock on to `t_ns`: overtime, penalty steps and forfeits, each at its instant."""
        self._catch_up(t_ns)
        return self._flush()

    def status(self, t_ns):
        """Advance to `t_ns` and report the state as a `status` record."""
        self._catch_up(t_ns)
        self._emit("status", self.now_ns)
        return self._flush()

    def adjust(self, t_ns, side, delta_ms, source="serial"):
        """A director's correction from outside the buttons: allowed only while the clock is stopped mid-game."""
        self._catch_up(t_ns)
        if self.state != PAUSED:
            self._emit(
                "error", self.now_ns, detail=f"adjust only while the clock is stopped mid-game ({self.state})"
            )
        else:
            self._correct(side, delta_ms * NS_PER_MS, self.now_ns, source)
        return self._flush()

    def round_over(self, t_ns):
        """The director's "round over" (school rule 21): both sides stop and the game ends at once,
        its penalties as of this instant. On a game already ended it is refused with an `error`."""
        self._catch_up(t_ns)
        game = self.game
        if game.state == ENDED:
            self._emit("error", self.now_ns, detail="round over: the game has already ended")
        else:
            game.stop(self.now_ns, ENDED)
            self._emit(
                "end", self.now_ns, reason="round_over", summary=self.accounting.summary(game, self.now_ns)
            )
        return self._flush()

    def set_scene(self, t_ns, wall_ms=None, round=None, table=None, times_s=None):
        """A director's `set`: the time of day (ms since 1970, UTC) at `t_ns`, the round, the
        table, and the starting times (`{side: s}`), for this game while nobody has pressed,
        else for the next (see scene.py). Recorded in a `set` record."""
        self._catch_up(t_ns)
        fields, this_times = self.scene.set(
            self.now_ns, self.game.t0_ns, self.state == READY, wall_ms, round, table, times_s
        )
        self._set_start_times(this_times)
        self._emit("set", self.now_ns, **fields)
        return self._flush()

    def _set_start_times(self, times_s):
        """Give the current game other starting times (before anyone pressed, or as rebuilt)."""
        self.game.give_start_times({side: s * NS_PER_S for side, s in (times_s or {}).items()})

    def error(self, t_ns, detail, line=None, **more):
        """Answer a bad input (a malformed command, noise on the line) with an `error` record;
        `more` fields say more (how many earlier errors went unanswered)."""
        self._catch_up(t_ns)
        extra = {"detail": detail, **more}
        if line is not None:
            extra["line"] = line
        self._emit("error", self.now_ns, **extra)
        return self._flush()

    def fault(self, t_ns, part, detail, **extra):
        """Record that `part` (`panel A`, `serial`, ...) stopped working, or found damage; the clock
        keeps time regardless. `extra` fields say more (the seqs a `journal` fault skipped)."""
        self._catch_up(t_ns)
        self._emit("fault", self.now_ns, part=part, detail=detail, **extra)
        return self._flush()

    def fault_cleared(self, t_ns, part):
        """Record that `part` works again."""
        self._catch_up(t_ns)
        self._emit("fault_cleared", self.now_ns, part=part)
        return self._flush()

    # ---------------------------------------------------------------- queries

    @property
    def state(self):
        """The game's `State`, or None before the first game."""
        return self._game.state if self._game is not None else None

    @property
    def run(self):
        """Whose clock runs: `A`, `B` or None."""
        return self._game.run if self._game is not None else None

    @property
    def t0_ns(self):
        """The instant the current game opened."""
        return self.game.t0_ns

    def used_ns(self, side, t_ns):
        """Time charged to `side` as of `t_ns`."""
        return self.game.used_ns(side, t_ns)

    def stopped_ns(self, t_ns):
        """Time in this game when no side ran, as of `t_ns`."""
        return self.game.stopped_ns(t_ns)

    def elapsed_ns(self, t_ns):
        """Time since the current game opened, as of `t_ns`."""
        return t_ns - self.game.t0_ns

    def balanced(self, t_ns):
        """Whether the books balance at `t_ns`: both sides' time and the stopped time make the elapsed time."""
        game = self.game
        return game.used_ns("A", t_ns) + game.used_ns("B", t_ns) + game.stopped_ns(t_ns) == self.elapsed_ns(
            t_ns
        )

    def stopped_since_ns(self):
        """Since when no clock has run (None while one runs)."""
        return None if self.state == RUNNING else self.game.stopped_since_ns

    def display_seconds(self, side, t_ns):
        """The signed whole seconds the display shows: limit minus whole seconds used."""
        return self.game.display_seconds(side, t_ns)

    def penalty(self, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`."""
        return self.accounting.penalty(self.game, side, t_ns)

    def view(self, t_ns):
        """What the screens show at `t_ns` (call `advance` first for events up to then)."""
        game = self.game
        sides = {side: self.accounting.side_view(game, side, t_ns) for side in SIDES}
        faults = tuple(f"button {b}" for b in sorted(self.gestures.stuck))
        hint = self.gestures.hint(t_ns, game.state)
        return View(game.state, game.run, sides["A"], sides["B"], hint, game.notice, faults)

    def next_deadline(self):
        """The next instant anything changes without an input: a record, a displayed digit, a hint."""
        timer = earliest(self._timers())
        candidates = [
            Accounting.next_display_change(self.game, self.now_ns),
            self.gestures.next_hint_change(self.now_ns),
            timer.at_ns if timer else None,
        ]
        candidates = [c for c in candidates if c is not None]
        return min(candidates) if candidates else None

    # ------------------------------------------------------------- game state

    def _catch_up(self, t_ns):
        """Before anything happens at `t_ns`: fire what fell due up to then; returns the instant used
        (never earlier than one already processed)."""
        if self._game is None:
            raise ClockError("no game yet: call new_game first")
        t_ns = max(t_ns, self.now_ns)
        self._advance(t_ns)
        return t_ns

    def _start_game(self, t_ns, boot=None):
        start_ns, scene = self.scene.open_game(t_ns, self.start_ns)
        self._game = GameState.new(t_ns, start_ns)
        self.gestures.new_game()
        if boot is not None:
            self._emit("boot", t_ns, **boot)
        self._emit(
            "new_game",
            t_ns,
            rules=self.rules.name,
            time_ms={side: ms(start_ns[side]) for side in SIDES},
            mono_ns=t_ns,
            **scene,
            **({"boot_id": self.boot_id} if self.boot_id else {}),
        )

    # ---------------------------------------------------------------- intents

    def _act(self, intents):
        for intent in intents:
            self._intent(intent)

    def _intent(self, intent):
        game = self.game
        match intent:
            case SidePress(t_ns=t, side=side):
                self._side_press(side, t)
            case StopPress(t_ns=t) if game.state == RUNNING:
                arrived = game.late
                game.late = None
                game.stop(t, PAUSED)
                self._emit("pause", t, button=STOP, **({"arrived": arrived} if arrived else {}))
            case StopHoldRelease(t_ns=t) if game.state == ENDED:
                self._start_game(t)
            case StopHoldRelease(t_ns=t):
                game.stop(t, ENDED)
                self._emit("end", t, reason="stop_hold", summary=self.accounting.summary(game, t))
            case LateStart(t_ns=t, present=present):
                game.late = other(present)
                game.run_side(game.late, t)
                self._emit("late_start", t, button=present, player=game.late)
            case Correction(t_ns=t, side=side, take_off=take_off):
                delta_ns = (-1 if take_off else 1) * self.timing.correction_ms * NS_PER_MS
                self._correct(side, delta_ns, t, "buttons")
            case Ignored(t_ns=t, button=button, reason=reason):
                self._ignore(button, t, reason)
            case Stuck(t_ns=t, button=button):
                detail = f"held down for over {self.timing.stuck_ms // 1000} s"
                self._emit("fault", t, part=f"button {button}", detail=detail)
            case Unstuck(t_ns=t, button=button):
                self._emit("fault_cleared", t, part=f"button {button}")

    def _side_press(self, side, t_ns):
        game = self.game
        if game.state == ENDED:
            self._ignore(side, t_ns, "ended")
        elif game.state in (READY, PAUSED):
            event = "start" if game.state == READY else "resume"
            game.run_side(other(side), t_ns)
            self._emit(event, t_ns, button=side)
        elif game.run != side:
            self._ignore(side, t_ns, "not_running")
        elif t_ns - game.run_since_ns < self.timing.min_turn_ms * NS_PER_MS:
            self._ignore(side, t_ns, "too_soon")
        else:
            arrived = game.late
            game.late = None
            game.turns[side] += 1
            game.run_side(other(side), t_ns)
            self._emit("switch", t_ns, button=side, **({"arrived": arrived} if arrived else {}))

    def _correct(self, side, delta_ns, t_ns, source):
        self.game.correct(side, delta_ns, t_ns)
        self.game.notice = Notice("correction", side, delta_s=delta_ns // NS_PER_S)
        self._emit("adjust", t_ns, player=side, delta_ms=ms(delta_ns), source=source)

    def _ignore(self, button, t_ns, reason):
        self._emit("ignored", t_ns, button=button, reason=reason)

    # ---------------------------------------------------- time-driven events

    def _timers(self):
        """Everything that falls due without an input, as `Timer`s."""
        due = self.accounting.next_due(self.game, self.now_ns)
        if due:
            yield Timer(due[0], TimerKind.RULE, due[1:])
        yield from self.gestures.timers()
        if self.checkpoint_ms is not None and self.state == RUNNING:
            yield Timer(self._last_t_ns + self.checkpoint_ms * NS_PER_MS, TimerKind.CHECKPOINT)

    def _advance(self, t_ns):
        """Fire, in time order, every timer due up to and including `t_ns`."""
        while (timer := earliest(self._timers())) is not None and timer.at_ns <= t_ns:
            self.now_ns = timer.at_ns
            self._handlers[timer.kind](timer.at_ns, timer.subject)
        self.now_ns = t_ns

    def _settle(self, t_ns, button):
        self._act(self.gestures.settle(button, t_ns, self._last_t_ns, self.state))

    def _stuck(self, t_ns, button):
        self._act(self.gestures.mark_stuck(button, t_ns))

    def _checkpoint(self, t_ns, _):
        self._emit("checkpoint", t_ns)

    def _rule_due(self, t_ns, due):
        side, kinds = due
        game = self.game
        forfeit = kinds & {"overtime_limit", "absent"}
        if forfeit:
            reason = "overtime_limit" if "overtime_limit" in forfeit else "absent"
            game.lost = side
            game.lost_reason = reason
            game.stop(t_ns, ENDED)
            self._emit("forfeit", t_ns, player=side, reason=reason)
            self._emit("end", t_ns, reason="forfeit", summary=self.accounting.summary(game, t_ns))
            return
        if "late_penalty" in kinds:
            game.late_pen[side] = self.rules.late_penalty(game.used_ns(side, t_ns))
            self._emit("penalty", t_ns, player=side, kind="late")
        if "overtime" in kinds:
            self._emit("overtime", t_ns, player=side)
        if kinds & {"overtime", "penalty"}:
            self._emit("penalty", t_ns, player=side, kind="overtime")

    # ---------------------------------------------------------------- records

    def _emit(self, ev, t_ns, **extra):
        game = self.game
        if ev in TRANSITIONS:
            extra["at_ns"] = t_ns - game.t0_ns
        if ev == "end":  # where the game sits in the tournament, however it ended
            extra.update(self.scene.record_fields(t_ns))
            extra["summary"] = extra["summary"] | self.scene.summary_fields(t_ns)
        sides = {side: self.accounting.side_state(game, side, t_ns) for side in SIDES}
        record = Record(
            self._seq, ev, game.since_start_ms(t_ns), game.state, game.run, sides["A"], sides["B"], extra
        )
        self._out.append(record)
        self._seq += 1
        self._last_t_ns = t_ns

    def _flush(self):
        out, self._out = self._out, []
        return out
