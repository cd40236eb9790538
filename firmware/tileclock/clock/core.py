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

import heapq
import itertools

from .accounting import FORFEITS, Accounting
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
from .history import Game, last_game, playable, rebuild, reconcile, record_instant_ns, stand_in_opening
from .records import SIDES, TRANSITIONS, Record
from .scene import Scene
from .state import GameState, State, other
from .timecode import NS_PER_MS, NS_PER_S, format_clock, ms
from .timers import Timer, TimerKind, earliest
from .view import Notice, SideView, View

# The names other layers import from here.
__all__ = ["ButtonTiming", "ClockError", "GameClock", "SideView", "State", "View", "other"]

READY, RUNNING, PAUSED, ENDED = State.READY, State.RUNNING, State.PAUSED, State.ENDED


class ClockError(Exception):
    """A call the clock cannot take (a programming error, never a player's)."""


class Refused(Exception):
    """A director's request the game does not allow now; the message says why (an `error` record)."""


class GameClock:
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

    def recover(self, records, now_ns, boot):
        """Rebuild the journal's last game from its `records` (dicts, oldest first) and go on at `now_ns`.

        `boot` is this start's boot record (with `boot_id`, the kernel's id of this boot). If the
        game's monotonic origin is from this boot, the process was restarted and the monotonic
        clock kept running: the game goes on exactly, the running side charged for the time the
        process was down, and whatever fell due meanwhile is recorded at its own instant. After a
        power cut the game comes back stopped as of its last record; the running side's time since
        that record is unknown: at most one checkpoint interval, and the time a checkpoint may take to
        stay on the card. Either way a `recovered` record
        says what happened. With no game in `records`, a new game starts.

        A record that cannot be played back is left out (`unplayable` lists each, with why: the
        device keeps it aside as damage); a game that cannot be taken up at all opens a new one,
        with a `fault` that says why. Whatever the journal holds, the clock starts.
        """
        seq = self._seq
        try:
            return self._take_up(records, now_ns, boot)
        except Exception as error:  # noqa: BLE001 - no journal may stop the clock
            self._seq, self._out, self._queue, self.now_ns = seq, [], [], None
            self.scene, self.unplayable = Scene(), []
            made = self.new_game(now_ns, boot)
            detail = (
                f"the last game could not be taken up ({type(error).__name__} {error}): a new game "
                "is opened; the journal's records are kept"
            )
            return made + self.fault(now_ns, "journal", detail)

    def _take_up(self, records, now_ns, boot):
        game = self._game_in(records)
        if game is None:
            return self.new_game(now_ns, boot)
        _, self.unplayable = playable(game.records, self.rules)
        if self.unplayable:
            left_out = {seq for seq, _ in self.unplayable}
            records = [record for record in records if record["seq"] not in left_out]
            game = self._game_in(records)
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
        notes = self._opening_note(game.first) + reconcile(self._game, game.records[-1], origin, self.rules)
        # the scene; the starting times a `set` gave this game are in the rebuilt state already
        self.scene.rebuild(records, boot.get("boot_id"), same_boot)
        self.gestures.new_game()
        self.now_ns = self._last_t_ns = self._done_ns = origin + last_at
        self.gestures.last_input_ns = now_ns
        was_running, running = self.run, self.state == RUNNING
        if same_boot:
            checkpoint_ms, self.checkpoint_ms = self.checkpoint_ms, None  # none for time nobody was there
            self._catch_up(max(now_ns, self.now_ns))  # penalties and forfeits that fell due while down
            self.checkpoint_ms = checkpoint_ms
            extra = {"reason": "restart", "down_ms": ms(now_ns - (origin + last_at))}
        else:
            if running:
                self.game.stop(self.now_ns, PAUSED)
            self.now_ns = self._done_ns = now_ns
            if not running:
                doubt_ms = 0
            elif self.checkpoint_ms is None:
                doubt_ms = None  # no checkpoints: no bound
            else:
                doubt_ms = self.checkpoint_ms + self.checkpoint_lag_ms
            extra = {"reason": "power_cut", "uncertain_ms": doubt_ms}
        self._emit("boot", self.now_ns, **boot)
        doubt_ms = extra.get("uncertain_ms")
        uncertain_s = -(-doubt_ms // 1000) if doubt_ms else 0  # shown in whole seconds, rounded up
        self.game.notice = Notice("recovered", uncertain_s=uncertain_s)
        self._emit("recovered", self.now_ns, was_running=was_running, mono_ns=self.game.t0_ns, **extra)
        for note in notes:  # what the records before the newest did not rebuild
            self._emit("fault", self.now_ns, part="journal", detail=f"the game taken up: {note}")
        return self._flush()

    def _game_in(self, records):
        """The game a restart takes up from `records` (a `Game`), or None: the last game; or, if its
        `new_game` is lost (damaged) but later records are there, the game they play, opened by a
        stand-in (see `stand_in_opening`)."""
        game = last_game(records)
        played = [index for index, record in enumerate(records) if record["ev"] != "boot"]
        if game is not None or not played:
            return game
        start_ms = {side: ms(self.start_ns[side]) for side in SIDES}
        lead = records[: played[0]]
        opening = stand_in_opening(records, self.rules.name, start_ms)
        return Game([opening, *records[played[0] :]], lead=lead, opened_in=lead[-1] if lead else None)

    def _opening_note(self, first):
        """What a game whose `new_game` is lost was taken up with."""
        if not first.get("stand_in"):
            return []
        times = ", ".join(f"{side} {format_clock(first['time_ms'][side] // 1000)}" for side in SIDES)
        return [
            f"its opening (new_game) is damaged: played under this clock's rules ({first['rules']}), "
            f"starting times {times} as its first record shows them, its start in this boot unknown"
        ]

    def edge(self, button, down, t_ns):
        """One raw contact edge of `button` (`A`, `B`, `STOP`): `down` for contact made.

        An edge stamped before an instant the clock has already processed is
        taken at that instant: the clock never goes back in time.
        """
        t_ns = self._catch_up(t_ns)
        for button_, down_, at in self.contacts.edge(button, down, t_ns, self._done_ns):
            self._enqueue(at, self._transition, button_, down_)
        self._process(t_ns)
        return self._flush()

    def advance(self, t_ns):
        """Run the clock on to `t_ns`: overtime, penalty steps and forfeits, each at its instant."""
        self._catch_up(t_ns)
        return self._flush()

    def status(self, t_ns):
        """Advance to `t_ns` and report the state as a `status` record."""
        return self._submit(t_ns, self._record, "status")

    def adjust(self, t_ns, side, delta_ms, source="serial"):
        """A director's correction from outside the buttons (the same rules as the buttons' chord)."""
        return self._submit(t_ns, self._request, self._correct, side, delta_ms * NS_PER_MS, source)

    def late_start(self, t_ns, player, source="serial"):
        """A director's late start of `player` (`A`, `B` or `both`): only on a fresh game."""
        absent = SIDES if player == "both" else (player,)
        return self._submit(t_ns, self._request, self._late_start, absent, source)

    def round_over(self, t_ns, source="serial"):
        """The director's "round over" (school rule 21): both sides stop and the game ends at once
        (`round_over`), its penalties as of this instant; refused with an `error` on an ended game."""
        return self._submit(t_ns, self._request, self._round_over, source)

    def reopen(self, t_ns, source="serial"):
        """The director reopens an ended game (not a forfeit), stopped, exactly as it was."""
        return self._submit(t_ns, self._request, self._reopen, source)

    def set_scene(self, t_ns, wall_ms=None, round=None, table=None, times_s=None):
        """A director's `set`: the time of day (ms since 1970, UTC) at `t_ns`, the round, the
        table, and the starting times (`{side: s}`), for this game while nobody has pressed,
        else for the next (see scene.py). Recorded in a `set` record."""
        return self._submit(t_ns, self._set_scene, wall_ms, round, table, times_s)

    def _set_scene(self, t_ns, wall_ms, round, table, times_s):
        fields, this_times = self.scene.set(
            t_ns, self.game.t0_ns, self.state == READY, wall_ms, round, table, times_s
        )
        self._set_start_times(this_times)
        self._emit("set", t_ns, **fields)

    def _set_start_times(self, times_s):
        """Give the current game other starting times (before anyone pressed, or as rebuilt)."""
        self.game.give_start_times({side: s * NS_PER_S for side, s in (times_s or {}).items()})

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
        """Time in this game charged to no side, as of `t_ns`."""
        return self.game.stopped_ns(t_ns)

    def shared_ns(self, t_ns):
        """Time charged to both sides at once (both players late), as of `t_ns`."""
        return self.game.shared_ns(t_ns)

    def elapsed_ns(self, t_ns):
        """Time since the current game opened, as of `t_ns`."""
        return t_ns - self.game.t0_ns

    def balanced(self, t_ns):
        """Whether the books balance at `t_ns`: both sides' time and the stopped time, less the time
        charged to both at once, make the elapsed time."""
        game = self.game
        books = (
            game.used_ns("A", t_ns) + game.used_ns("B", t_ns) + game.stopped_ns(t_ns) - game.shared_ns(t_ns)
        )
        return books == self.elapsed_ns(t_ns)

    def stopped_since_ns(self):
        """Since when no clock has run (None while one runs)."""
        return None if self.state == RUNNING else self.game.stopped_since_ns

    def idle_ns(self, t_ns):
        """How long the clock has sat with no clock running and no button touched, or None."""
        if self.state == RUNNING:
            return None
        last_input = self.gestures.last_input_ns
        since = (
            self.game.stopped_since_ns if last_input is None else max(last_input, self.game.stopped_since_ns)
        )
        return max(0, t_ns - since)

    def display_seconds(self, side, t_ns):
        """The signed whole seconds the display shows: limit minus whole seconds used."""
        return self.accounting.shown_seconds(self.game, side, t_ns)

    def penalty(self, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`."""
        return self.accounting.penalty(self.game, side, t_ns)

    def view(self, t_ns):
        """What the screens show at `t_ns` (call `advance` first for events up to then)."""
        game = self.game
        sides = {side: self.accounting.side_view(game, side, t_ns) for side in SIDES}
        faults = tuple(f"button {b}" for b in sorted(self.gestures.stuck))
        hint = self.gestures.hint(t_ns, game.state)
        round_left = self.accounting.round_left_s(game, t_ns)
        return View(
            game.state,
            game.run,
            sides["A"],
            sides["B"],
            hint,
            game.notice,
            faults,
            round_left,
            game.end_reason,
        )

    def next_deadline(self):
        """The next instant anything changes without an input: a record, a displayed digit, a hint."""
        safe = self.contacts.safe_until()
        timer = earliest(self._timers())
        contact = earliest(self.contacts.timers())
        candidates = [
            self.accounting.next_display_change(self.game, self.now_ns),
            self.gestures.next_hint_change(self.now_ns),
            timer.at_ns if timer and (safe is None or timer.at_ns <= safe) else None,
            contact.at_ns if contact else None,
        ]
        candidates = [c for c in candidates if c is not None]
        return min(candidates) if candidates else None

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

    def _enqueue(self, t_ns, action, *args, **kwargs):
        heapq.heappush(self._queue, (t_ns, next(self._order), action, args, kwargs))

    def _process(self, t_ns):
        """Everything up to `t_ns`, in time order: contact timers first (they only make inputs),
        then rule timers and waiting inputs, never past a press still pending (rule events first on
        a tie)."""
        while True:
            contact = earliest(self.contacts.timers())
            if contact is not None and contact.at_ns <= t_ns:
                for button, down, at in self.contacts.fire(contact, self._done_ns):
                    self._enqueue(at, self._transition, button, down)
                continue
            safe = self.contacts.safe_until()
            limit = t_ns if safe is None else min(t_ns, safe)
            timer = earliest(self._timers())
            waiting = self._queue[0] if self._queue else None
            if timer is not None and timer.at_ns <= limit and (waiting is None or timer.at_ns <= waiting[0]):
                self._done_ns = max(self._done_ns, timer.at_ns)
                self._handlers[timer.kind](timer.at_ns, timer.subject)
            elif waiting is not None and waiting[0] <= limit:
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

    def _request(self, t_ns, action, *args):
        """A director's request at `t_ns`: done, or refused with an `error` record saying why."""
        try:
            action(t_ns, *args)
        except Refused as why:
            self._emit("error", t_ns, detail=str(why))

    # ---------------------------------------------------------------- intents

    def _act(self, intents):
        for intent in intents:
            try:
                self._intent(intent)
            except Refused as why:
                self._emit("error", intent.t_ns, detail=str(why))

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

    def _late_start(self, t_ns, absent, source, button=None):
        game = self.game
        if game.state != READY:
            raise Refused(f"late start only on a fresh game ({game.state})")
        game.absent = dict.fromkeys(absent, t_ns)
        game.start_round(t_ns)
        game.charge(set(absent) if self.rules.absence_runs_clock else set(), t_ns)
        player = absent[0] if len(absent) == 1 else "both"
        self._emit("late_start", t_ns, player=player, source=source, **({"button": button} if button else {}))

    def _correct(self, t_ns, side, delta_ns, source):
        game, accounting, rules = self.game, self.accounting, self.rules
        if game.state not in (PAUSED, ENDED):
            raise Refused(f"adjust only while the clock is stopped mid-game or after the end ({game.state})")
        if game.lost:
            raise Refused("adjust: the game was forfeited")
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
            self._end(t_ns, "forfeit", side, "overtime_limit")
        elif game.state == ENDED:
            self._end(t_ns, game.end_reason)  # the summary again, as corrected

    def _round_over(self, t_ns, source):
        if self.game.state == ENDED:
            raise Refused("round over: the game has already ended")
        self._end(t_ns, "round_over")

    def _reopen(self, t_ns, source):
        game = self.game
        if game.state != ENDED:
            raise Refused(f"reopen: the game has not ended ({game.state})")
        if game.lost or game.end_reason != "stop_hold":
            why = "a forfeit stands" if game.lost else "the round is over"
            raise Refused(f"reopen: {why}")
        game.reopen(t_ns)
        self._emit("reopen", t_ns, source=source, reopens=game.end_seq)

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

    # ---------------------------------------------------- time-driven events

    def _timers(self):
        """The game's time-driven work from where it has been taken to, as `Timer`s."""
        game, done = self.game, self._done_ns
        due = self.accounting.next_due(game, done)
        if due:
            yield Timer(due[0], TimerKind.RULE, due[1])
        round_end = self.accounting.round_end_ns(game)
        if round_end is not None:
            yield Timer(max(round_end, done), TimerKind.ROUND)
        yield from self.gestures.timers()
        if self.checkpoint_ms is not None and self.state == RUNNING:
            yield Timer(self._last_t_ns + self.checkpoint_ms * NS_PER_MS, TimerKind.CHECKPOINT)

    def _stuck(self, t_ns, button):
        self._act(self.gestures.mark_stuck(button, t_ns))

    def _checkpoint(self, t_ns, _):
        self._emit("checkpoint", t_ns)

    def _rule_due(self, t_ns, due):
        game = self.game
        forfeits = sorted((kind, side) for side, kind in due if kind in FORFEITS)
        if forfeits:
            kind, side = forfeits[-1]  # the cap before absence (sorted: "overtime_limit" > "absent")
            both = kind == "absent" and (len(game.absent) == 2 or len(forfeits) == 2)
            self._end(t_ns, "forfeit", "both" if both else side, kind)
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

    # ---------------------------------------------------------------- records

    def _record(self, t_ns, ev, **extra):
        self._emit(ev, t_ns, **extra)

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
