"""The clock itself: raw button edges in, records out, in exact integer time.

`GameClock` is pure: it never reads a clock, sleeps or touches hardware. Every input carries its own
timestamp (nanoseconds of one monotonic clock), every query names the instant it asks about, and
`next_deadline()` tells the caller when something will next change without any input, so the caller
can sleep until then. Time is charged only at transitions, from edge to edge; nothing is accumulated
tick by tick.

It is assembled from parts, each with one concern:

- `state.GameState`: one game's state, replaced whole at each new game (or at a take-up);
- `contacts.Contacts`: raw edges made real presses and releases; `gestures.Gestures`: those
  turned into `intents` (holds, chords, stuck buttons); both timed by `button_timing.ButtonTiming`;
- `accounting.Accounting`: time against the rules (penalties, what falls due, the summary);
- `play.Play`: what intents, due events and requests do to the game, and the records that say so;
- `requests.DirectorRequests`: the director's requests, from adjust to a call's answer (`calls`);
- `timeline.Timeline`: how far the clock has been taken, and everything up to an instant in time
  order (`schedule.Schedule`), each handed to the part it concerns;
- `record_log.RecordLog`: the records made; `due`, `readings`: what falls due with no input, and
  the queries, as plain functions;
- `selftest.SelfTests`: the self-test before a round (its presses never the game's);
- `recovery.take_up`: the journal's last game, a pure function of its records (history.rebuild).

Each part owns its state and is handed what it needs of the others (no mixins); the clock owns
the game and wires them. The gestures are tabled in docs/rules.md.
"""

from dataclasses import replace

from ..wire.records import SIDES
from . import readings
from .accounting import Accounting
from .button_timing import ButtonTiming
from .contacts import Contacts
from .gestures import Gestures
from .play import Play
from .record_log import RecordLog
from .recovery import take_up
from .requests import DirectorRequests
from .scene import Scene
from .selftest import SelfTests
from .state import GameState, State, other
from .timecode import NS_PER_MS, NS_PER_S, ms
from .timeline import Timeline
from .timers import earliest
from .view import Notice, SideView, View

# The names other layers import from here.
__all__ = ["ButtonTiming", "ClockError", "GameClock", "SideView", "State", "View", "other"]

RUNNING = State.RUNNING


class ClockError(Exception):
    """A call the clock cannot take (a programming error, never a player's)."""


class GameClock:
    """The tournament clock for one board: every rule of `rules`, buttons per `timing`.

    `dark_after_ms`: the panels go dark after this long idle (a press then only wakes them; None:
    never). `wall(t_ns)`: the device's time of day (ms) a call says, else a director's `set wall=`.
    """

    def __init__(
        self, rules, timing=ButtonTiming(), times_s=None, first_seq=0, checkpoint_ms=None,
        checkpoint_lag_ms=0, dark_after_ms=None, wall=None,
    ):  # fmt: skip  # the arguments on two lines, as the rooms' line budget asks
        self.rules = rules
        self.timing = timing
        self.accounting = Accounting(rules)
        self.contacts = Contacts(timing)
        self.gestures = Gestures(timing, is_dark=self._is_dark)
        #: while a side runs, a `checkpoint` record this often bounds what a power cut can lose
        self.checkpoint_ms = checkpoint_ms
        #: how long a checkpoint may not be on the card (its write is not waited for): adds to the doubt
        self.checkpoint_lag_ms = checkpoint_lag_ms
        self.dark_after_ms = dark_after_ms
        times_s = times_s or {}
        self.start_ns = {side: times_s.get(side, rules.time_s) * NS_PER_S for side in SIDES}
        #: the director's settings: time of day, round, table, starting times (`set`)
        self.scene = Scene()
        self._game = None
        #: the kernel's id of the boot this process runs in, if known: new games carry it, so a
        #: restart knows a game's origin without reading back to the `boot` before it
        self.boot_id = None
        #: (seq, why) of each record `recover` could not play back, and left out
        self.unplayable = []
        self.log = RecordLog(self.accounting, first_seq)
        self.play = Play(rules, timing, self.accounting, self._emit, lambda: self.log.seq, self._start_game)
        self.play.wall, self.play.scene_wall = wall, lambda t_ns: self.scene.wall_ms(t_ns)  # a call's
        self.requests = DirectorRequests(self.play, self._emit)
        self.selftests = SelfTests(timing, self.contacts, self._emit, self._touched)
        self.timeline = Timeline(
            self.contacts, self.gestures, self.selftests, self.play, self.accounting, self._emit,
            game=lambda: self.game, last_t_ns=lambda: self.log.last_t_ns,
            checkpoint_ms=lambda: self.checkpoint_ms,
        )  # fmt: skip  # the parts, then what it reads of the clock as it goes

    @property
    def game(self):
        """The current game's `GameState`; ClockError before the first `new_game` or `recover`."""
        if self._game is None:
            raise ClockError("no game yet: call new_game first")
        return self._game

    # ---------------------------------------------------------------- queries

    @property
    def now_ns(self):
        """The last instant the clock has taken (it never goes back), None before the first game."""
        return self.timeline.now_ns

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
        """Whether the books balance at `t_ns` (see `readings.balanced`)."""
        return readings.balanced(self.game, t_ns)

    def stopped_since_ns(self):
        """Since when no clock has run (None while one runs)."""
        return None if self.state == RUNNING else self.game.stopped_since_ns

    def idle_ns(self, t_ns):
        """How long the clock has sat with no clock running and no button touched, or None."""
        return readings.idle_ns(self.game, self.gestures.last_input_ns, t_ns)

    def display_seconds(self, side, t_ns):
        """The signed whole seconds the display shows: limit minus whole seconds used."""
        return self.accounting.shown_seconds(self.game, side, t_ns)

    def penalty(self, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`."""
        return self.accounting.penalty(self.game, side, t_ns)

    def view(self, t_ns):
        """What the screens show at `t_ns` (call `advance` first for events up to then)."""
        view = readings.view(self.game, self.accounting, self.gestures, t_ns, self.play.calls.shown())
        test = self.selftests.view()
        return view if test is None else replace(view, selftest=test)

    def contacts_decided_by(self):
        """When every contact change made so far will have been decided, or None if none is undecided."""
        return readings.contacts_decided_by(self.contacts)

    def next_deadline(self):
        """The next instant anything changes without an input: a record, a displayed digit, a hint."""
        timer = earliest(self.timeline.timers())
        return readings.next_deadline(
            self.game, self.accounting, self.gestures, self.contacts, timer, self.now_ns
        )

    # ----------------------------------------------------------------- inputs

    def new_game(self, t_ns, boot=None, **asked):
        """Start a fresh game at `t_ns` (at power-on; later games by the STOP gesture).

        `boot`, at power-on, is what a `boot` record before the game says of the clock (board,
        firmware, ...); `asked`, a director's `new game` (`source`, `by`): refused unless it ended.
        """
        if asked:  # the director's: in time order with everything else, as any request
            return self._submit(t_ns, self._on_game, self.requests.next_game, asked)
        if self.now_ns is not None:
            self.advance(t_ns)
            t_ns = max(t_ns, self.now_ns)
        if boot is not None:
            self.boot_id = boot.get("boot_id")
        self.timeline.now_ns = t_ns
        self._start_game(t_ns, boot)
        return self._flush()

    def edge(self, button, down, t_ns):
        """One raw contact edge of `button` (`A`, `B`, `STOP`): `down` for contact made.

        An edge stamped before an instant the clock has already processed is
        taken at that instant: the clock never goes back in time.
        """
        self.timeline.edge(button, down, t_ns)
        return self._flush()

    def advance(self, t_ns):
        """Run the clock on to `t_ns`: overtime, penalty steps and forfeits, each at its instant."""
        self.timeline.catch_up(t_ns)
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

    def recover(self, records, now_ns, boot):
        """Take up the journal's last game from its `records` (dicts, oldest first) and go on at
        `now_ns` (`boot`: this start's boot record) as `recovery.take_up` says, with a `recovered`
        record. With no game in `records`, or one that cannot be taken up at all (then with a
        `fault` saying why), a new game opens: whatever the journal holds, the clock starts.
        `unplayable` lists each record left out, with why."""
        seq = self.log.seq
        self.play.calls.rebuild(records)  # the board's open call, whatever becomes of the game
        try:
            taken = take_up(
                records, now_ns, boot, self.rules, self.start_ns, self.checkpoint_ms, self.checkpoint_lag_ms
            )
            return self.new_game(now_ns, boot) if taken is None else self._go_on(taken, now_ns, boot)
        except Exception as error:  # noqa: BLE001 - no journal may stop the clock
            self.log, self.scene = RecordLog(self.accounting, seq), Scene()
            self.timeline.reset()
            self.unplayable = []
            made = self.new_game(now_ns, boot)
            detail = (
                f"the last game could not be taken up ({type(error).__name__} {error}): a new game "
                "is opened; the journal's records are kept"
            )
            return made + self.fault(now_ns, "journal", detail)

    def _go_on(self, taken, now_ns, boot):
        """Go on at `now_ns` from a game taken up (a `recovery.TakenUp`), and say so."""
        self._game, self.scene, self.unplayable = taken.game, taken.scene, taken.unplayable
        self.boot_id, self.log.seq = boot.get("boot_id"), max(self.log.seq, taken.next_seq)
        self.gestures.new_game()
        timeline = self.timeline
        timeline.now_ns = self.log.last_t_ns = timeline.schedule.done_ns = taken.last_ns
        self.gestures.last_input_ns = now_ns
        if taken.same_boot:  # penalties and forfeits that fell due while down; no checkpoints
            timeline.catch_up(max(now_ns, self.now_ns), checkpoints=False)
        else:
            timeline.now_ns = timeline.schedule.done_ns = now_ns
        self._emit("boot", self.now_ns, **boot)
        self.game.notice = Notice("recovered", uncertain_s=taken.uncertain_s)
        self._emit(
            "recovered", self.now_ns, was_running=taken.was_running, mono_ns=self.game.t0_ns, **taken.down
        )
        for note in taken.notes:  # what the records before the newest did not rebuild
            self._emit("fault", self.now_ns, part="journal", detail=f"the game taken up: {note}")
        return self._flush()

    # ------------------------------------------------------------ the director

    def adjust(self, t_ns, side, delta_ms, source="serial", by=None):
        """A director's correction from outside the buttons (the same rules as the buttons' chord)."""
        return self._submit(t_ns, self._on_game, self.requests.adjust, side, delta_ms, source, by)

    def late_start(self, t_ns, player, source="serial", by=None):
        """A director's late start of `player` (`A`, `B` or `both`): only on a fresh game."""
        return self._submit(t_ns, self._on_game, self.requests.late_start, player, source, by)

    def round_over(self, t_ns, source="serial", by=None):
        """The director's "round over" (school rule 21): the game ends at once; refused on an ended one."""
        return self._submit(t_ns, self._on_game, self.requests.round_over, source, by)

    def reopen(self, t_ns, source="serial", by=None):
        """The director reopens an ended game (not a forfeit), stopped, exactly as it was."""
        return self._submit(t_ns, self._on_game, self.requests.reopen, source, by)

    def selftest(self, t_ns, source="serial", by=None):
        """A director's self-test (selftest.py): only on a fresh game, as the buttons' gesture."""
        return self._submit(t_ns, self._on_game, self.requests.selftest, self.selftests, source, by)

    def take_over(self, t_ns, taken, source="serial", by=None):
        """A spare takes over a dead clock's game where the hall's copy of its records ends
        (`taken`, a `spare.Handover`), stopped: only on a fresh game; a `takeover` record."""
        return self._submit(t_ns, self._on_game, self.requests.take_over, taken, source, by)

    def moved(self, t_ns, game_seq, to, source="serial", by=None):
        """The hall's word that game `game_seq` moved to the spare `to` (spare.py): the game ends
        here, a `moved` record; refused for another game or one that has ended."""
        return self._submit(t_ns, self._on_game, self.requests.moved, game_seq, to, source, by)

    def answer_call(self, t_ns, call, answer, source="serial", by=None):
        """The director's answer to the board's call `call`, `taken` or `done`; refused if not open."""
        return self._submit(t_ns, self._on_game, self.requests.answer_call, call, answer, source, by)

    def set_scene(
        self, t_ns, wall_ms=None, round=None, table=None, times_s=None, start_ms=None, by=None, source=None,
        speech=None, large=None,
    ):  # fmt: skip  # laid out by hand, the way it reads best
        """A director's `set` (scene.py): the time of day at `t_ns`, round, table, starting times,
        and the round's start (`start_ms`: this game, while nobody has pressed), who hears the
        clock (`speech`: "A", "B", "AB" or "", said by the record for the device's voice), whose
        panel shows the large-digits face (`large`, likewise, for the device's panels); a `set` record."""
        scene = (wall_ms, round, table, times_s, start_ms, by, source, speech, large)
        return self._submit(t_ns, self._on_game, self.requests.set_scene, self.scene, *scene)

    # ------------------------------------------------------------- game state

    def _submit(self, t_ns, action, *args, **kwargs):
        """Apply `action` at `t_ns`, in time order with everything else; returns the records made
        (those of an input held back behind a press still being told from a glitch come later)."""
        self.timeline.submit(t_ns, action, *args, **kwargs)
        return self._flush()

    def _on_game(self, t_ns, action, *args):
        action(self.game, t_ns, *args)
        self.selftests.check(self.game, t_ns)  # a director's late start cancels a self-test

    def _touched(self, t_ns):
        self.gestures.last_input_ns = t_ns  # as a button's input: the panels light, idle from here

    def _is_dark(self, t_ns):
        if self.dark_after_ms is None or self._game is None:
            return False
        idle = self.idle_ns(t_ns)
        return idle is not None and idle >= self.dark_after_ms * NS_PER_MS

    def _start_game(self, t_ns, boot=None, **asked):
        start_ns, scene = self.scene.open_game(t_ns, self.start_ns)
        self._game = GameState.new(t_ns, start_ns)
        self.timeline.schedule.done_ns = t_ns
        self.gestures.new_game()
        self.gestures.last_input_ns = t_ns
        if boot is not None:
            self._emit("boot", t_ns, **boot)
        changes = self.rules.changes()
        self._game.seq = self.log.seq
        self._emit(
            "new_game",
            t_ns,
            rules=self.rules.name,
            time_ms={side: ms(start_ns[side]) for side in SIDES},
            mono_ns=t_ns,
            **scene,
            **({"boot_id": self.boot_id} if self.boot_id else {}),
            **({"rules_set": changes} if changes else {}),
            **self.play.calls.carried(),
            **asked,  # a director's `new game`: the way it came, who asked
        )

    # ---------------------------------------------------------------- records

    def _record(self, t_ns, ev, **extra):
        self._emit(ev, t_ns, **extra)

    def _emit(self, ev, t_ns, **extra):
        self.log.emit(self.game, self.scene, ev, t_ns, **extra)

    def _flush(self):
        return self.log.flush()
