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
- `history`: the game rebuilt from its records after a restart;

and its methods by concern: `recovery.Recovery` (taking up the journal's last game),
`requests.DirectorRequests` (the director's adjust, late start, round over, reopen, set),
`readings.Readings` (the queries) and `due.DueWork` (what falls due with no input).

The clock turns intents and timers into transitions of the game and the records
that say so. The gestures are tabled in docs/rules.md.
"""

import heapq
import itertools
from dataclasses import replace

from .accounting import Accounting
from .due import DueWork
from .gestures import (
    STOP,
    BothChord,
    ButtonTiming,
    Chord,
    ConfirmEnd,
    Contacts,
    Gestures,
    Ignored,
    SidePress,
    StopHoldRelease,
    StopPress,
    Stuck,
    Unstuck,
)
from .readings import Readings
from .records import SIDES, TRANSITIONS, Record
from .recovery import Recovery
from .requests import DirectorRequests, Refused
from .scene import Scene
from .state import GameState, State, other
from .timecode import NS_PER_MS, NS_PER_S, ms
from .timers import TimerKind, earliest
from .view import SideView, View

# The names other layers import from here.
__all__ = ["ButtonTiming", "ClockError", "GameClock", "SideView", "State", "View", "other"]

READY, RUNNING, PAUSED, ENDED = State.READY, State.RUNNING, State.PAUSED, State.ENDED


class ClockError(Exception):
    """A call the clock cannot take (a programming error, never a player's)."""


class GameClock(Recovery, DirectorRequests, Readings, DueWork):
    """The tournament clock for one board: every rule of `rules`, buttons per `timing`.

    `dark_after_ms`: the panels go dark after this long idle (the device's idle care); a press
    while they are dark only wakes them. None: never dark.
    """

    def __init__(
        self,
        rules,
        timing=ButtonTiming(),
        times_s=None,
        first_seq=0,
        checkpoint_ms=None,
        checkpoint_lag_ms=0,
        dark_after_ms=None,
    ):
        self.rules = rules
        self.timing = timing
        self.accounting = Accounting(rules)
        self.contacts = Contacts(timing)
        self.gestures = Gestures(timing, is_dark=self._is_dark)
        #: while a side runs, a `checkpoint` record this often bounds what a power cut can lose
        self.checkpoint_ms = checkpoint_ms
        #: how long after it is made a checkpoint may still not be on the card (its write is not
        #: waited for): after a power cut the last one may be missing, so this adds to the doubt
        self.checkpoint_lag_ms = checkpoint_lag_ms
        self.dark_after_ms = dark_after_ms
        times_s = times_s or {}
        self.start_ns = {side: times_s.get(side, rules.time_s) * NS_PER_S for side in SIDES}
        #: the director's settings: time of day, round, table, starting times (`set`)
        self.scene = Scene()
        self.now_ns = None
        self._game = None
        #: the kernel's id of the boot this process runs in, if known: new games carry it, so a
        #: restart knows a game's origin without reading back to the `boot` before it
        self.boot_id = None
        #: (seq, why) of each record `recover` could not play back, and left out
        self.unplayable = []
        self._seq = first_seq
        self._out = []
        self._last_t_ns = None  # the instant of the last record
        self._done_ns = None  # how far the game has been taken (never past a pending press)
        self._queue = []  # heap of (t_ns, order, action, args): inputs waiting to be applied in time order
        self._order = itertools.count()
        self._handlers = {
            TimerKind.RULE: self._rule_due,
            TimerKind.ROUND: lambda t_ns, _: self._end(t_ns, "round_over"),
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

    def edge(self, button, down, t_ns):
        """One raw contact edge of `button` (`A`, `B`, `STOP`): `down` for contact made.

        An edge stamped before an instant the clock has already processed is
        taken at that instant: the clock never goes back in time.
        """
        t_ns = self._catch_up(t_ns)
        order = next(self._order)  # edges at one instant are taken in the order they came
        for button_, down_, at, order_ in self.contacts.edge(button, down, t_ns, self._done_ns, order):
            self._enqueue(at, self._transition, button_, down_, order=order_)
        self._process(t_ns)
        return self._flush()

    def advance(self, t_ns):
        """Run the clock on to `t_ns`: overtime, penalty steps and forfeits, each at its instant."""
        self._catch_up(t_ns)
        return self._flush()

    def status(self, t_ns):
        """Advance to `t_ns` and report the state as a `status` record."""
        return self._submit(t_ns, self._record, "status")

    def error(self, t_ns, detail, line=None, **more):
        """Answer a bad input (a malformed command, noise on the line) with an `error` record;
        `more` fields say more (how many earlier errors went unanswered)."""
        extra = {"detail": detail, **more}
        if line is not None:
            extra["line"] = line
        return self._submit(t_ns, self._record, "error", **extra)

    def fault(self, t_ns, part, detail, **extra):
        """Record that `part` (`panel A`, `serial`, ...) stopped working, or found damage; the clock
        keeps time regardless. `extra` fields say more (the seqs a `journal` fault skipped)."""
        return self._submit(t_ns, self._record, "fault", part=part, detail=detail, **extra)

    def fault_cleared(self, t_ns, part):
        """Record that `part` works again."""
        return self._submit(t_ns, self._record, "fault_cleared", part=part)

    # ------------------------------------------------------------- game state

    def _catch_up(self, t_ns):
        """Take the clock on to `t_ns` (never back): fire what fell due and apply what waited;
        returns the instant used."""
        if self._game is None:
            raise ClockError("no game yet: call new_game first")
        t_ns = max(t_ns, self.now_ns)
        self.now_ns = t_ns
        self._process(t_ns)
        return t_ns

    def _submit(self, t_ns, action, *args, **kwargs):
        """Apply `action` at `t_ns`, in time order with everything else; returns the records made
        (those of an input held back behind a press still being told from a glitch come later)."""
        t_ns = self._catch_up(t_ns)
        self._enqueue(t_ns, action, *args, **kwargs)
        self._process(t_ns)
        return self._flush()

    def _enqueue(self, t_ns, action, *args, order=None, **kwargs):
        order = next(self._order) if order is None else order
        heapq.heappush(self._queue, (t_ns, order, action, args, kwargs))

    def _process(self, t_ns):
        """Everything up to `t_ns`, in time order: contact timers first (they only make inputs),
        then rule timers and waiting inputs, never past a press still pending (rule events first on
        a tie)."""
        while True:
            contact = earliest(self.contacts.timers())
            if contact is not None and contact.at_ns <= t_ns:
                for button, down, at, order in self.contacts.fire(contact, self._done_ns):
                    self._enqueue(at, self._transition, button, down, order=order)
                continue
            safe = self.contacts.safe_until()
            limit = t_ns if safe is None else min(t_ns, safe[0])
            timer = earliest(self._timers())
            waiting = self._queue[0] if self._queue else None
            if timer is not None and timer.at_ns <= limit and (waiting is None or timer.at_ns <= waiting[0]):
                self._done_ns = max(self._done_ns, timer.at_ns)
                self._handlers[timer.kind](timer.at_ns, timer.subject)
            elif waiting is not None and waiting[0] <= limit and (safe is None or waiting[:2] < safe):
                at, _, action, args, kwargs = heapq.heappop(self._queue)
                self._done_ns = max(self._done_ns, at)
                action(self._done_ns, *args, **kwargs)
            else:
                break
        if self.contacts.safe_until() is None and not self._queue:
            self._done_ns = max(self._done_ns, t_ns)

    def _transition(self, t_ns, button, down):
        self._act(self.gestures.transition(button, down, t_ns, self.state))

    def _is_dark(self, t_ns):
        if self.dark_after_ms is None or self._game is None:
            return False
        idle = self.idle_ns(t_ns)
        return idle is not None and idle >= self.dark_after_ms * NS_PER_MS

    def _start_game(self, t_ns, boot=None):
        start_ns, scene = self.scene.open_game(t_ns, self.start_ns)
        self._game = GameState.new(t_ns, start_ns)
        self._done_ns = t_ns
        self.gestures.new_game()
        self.gestures.last_input_ns = t_ns
        if boot is not None:
            self._emit("boot", t_ns, **boot)
        changes = self.rules.changes()
        self._emit(
            "new_game",
            t_ns,
            rules=self.rules.name,
            time_ms={side: ms(start_ns[side]) for side in SIDES},
            mono_ns=t_ns,
            **scene,
            **({"boot_id": self.boot_id} if self.boot_id else {}),
            **({"rules_set": changes} if changes else {}),
        )

    def _act(self, intents):
        for intent in intents:
            if isinstance(intent, Chord | BothChord):
                intent = self._dated_in_order(intent)
            try:
                self._intent(intent)
            except Refused as why:
                self._emit("error", intent.t_ns, detail=str(why))

    def _dated_in_order(self, chord):
        """A chord is known only at its release but takes effect at its first edge (CLOCK_RULES
        §10); whatever was recorded while it was held stays before it (it is dated no earlier than
        the last record), and what falls due after its instant is then fired at its own instant."""
        t_ns = max(chord.t_ns, self._last_t_ns)
        self._done_ns = min(self._done_ns, t_ns)
        return replace(chord, t_ns=t_ns)

    def _intent(self, intent):
        game = self.game
        match intent:
            case SidePress(t_ns=t, side=side):
                self._side_press(side, t)
            case StopPress(t_ns=t) if game.state == RUNNING:
                self._stop_press(t)
            case ConfirmEnd(t_ns=t) if game.state in (READY, PAUSED):
                self._end(t, "stop_hold")
            case StopHoldRelease(t_ns=t) if game.state == ENDED:
                self._start_game(t)
            case Chord(t_ns=t, side=side) if game.state == READY:
                self._late_start(t, (other(side),), "buttons", button=side)
            case Chord(t_ns=t, side=side, held=held) if game.state in (PAUSED, ENDED):
                delta_ns = (-1 if held else 1) * self.timing.correction_ms * NS_PER_MS
                self._correct(t, side, delta_ns, "buttons")
            case BothChord(t_ns=t) if game.state == READY:
                self._late_start(t, SIDES, "buttons")
            case BothChord(t_ns=t) if game.state == ENDED:
                self._reopen(t, "buttons")
            case BothChord(t_ns=t):
                self._ignore(STOP, t, "both_sides")
            case Ignored(t_ns=t, button=button, reason=reason):
                self._ignore(button, t, reason)
            case Stuck(t_ns=t, button=button):
                detail = f"held down for over {self.timing.stuck_ms // 1000} s"
                self._emit("fault", t, part=f"button {button}", detail=detail)
            case Unstuck(t_ns=t, button=button):
                self._emit("fault_cleared", t, part=f"button {button}")

    def _stop_press(self, t_ns):
        game = self.game
        if len(game.absent) == 2:
            self._ignore(STOP, t_ns, "both_late")  # each arriving player presses their own button
            return
        arrived = next(iter(game.absent), None)
        game.stop(t_ns, PAUSED)
        self._emit("pause", t_ns, button=STOP, **({"arrived": arrived} if arrived else {}))

    def _side_press(self, side, t_ns):
        game = self.game
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

    def _end(self, t_ns, reason, lost=None, lost_reason=None):
        """End the game at `t_ns` (or issue its summary again): `forfeit` and `end` records."""
        game = self.game
        supersedes = game.end_seq
        game.end(t_ns, reason, lost, lost_reason)
        if lost is not None:
            self._emit("forfeit", t_ns, player=lost, reason=lost_reason)
        game.end_seq = self._seq
        summary = self.accounting.summary(game, t_ns)
        self._emit(
            "end",
            t_ns,
            reason=reason,
            summary=summary,
            **({"supersedes": supersedes} if supersedes is not None else {}),
        )

    def _ignore(self, button, t_ns, reason):
        self._emit("ignored", t_ns, button=button, reason=reason)

    # ---------------------------------------------------------------- records

    def _record(self, t_ns, ev, **extra):
        self._emit(ev, t_ns, **extra)

    def _emit(self, ev, t_ns, **extra):
        game = self.game
        at_ns = t_ns - game.t0_ns
        if ev in TRANSITIONS or at_ns % NS_PER_MS:  # an instant t_ms alone would floor: exact
            extra["at_ns"] = at_ns
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
