"""The clock's timeline: the instant it has been taken to, and everything up to a later one taken
in time order (schedule.py), each handed to the part it concerns: a button's real press or release
to the self-test or the gestures (their intents to `play`), a timer that fell due to the part
that set it. A part of `GameClock` (core.py), which holds the game and opens it.
"""

from dataclasses import replace
from functools import partial

from .due import due_timers
from .intents import BothChord, Chord, SelfTestHold
from .play import Refused
from .schedule import Schedule
from .timers import TimerKind


class Timeline:
    """How far the clock has been taken, and the inputs and timers applied in time order.

    Handed the parts it feeds, `emit(ev, t_ns, **fields)` for the records, and what it reads of
    the clock as it goes: `game()` the current game (`core.ClockError` before the first),
    `last_t_ns()` the instant of the last record, `checkpoint_ms()` how often a running side's
    `checkpoint` record is made (None: never).
    """

    def __init__(self, contacts, gestures, selftests, play, accounting, emit, game, last_t_ns, checkpoint_ms):
        self.contacts, self.gestures, self.selftests = contacts, gestures, selftests
        self.play, self.accounting, self._emit = play, accounting, emit
        self._game, self._last_t_ns, self._checkpoint_ms = game, last_t_ns, checkpoint_ms
        #: the last instant the clock has taken (it never goes back), None before the first game
        self.now_ns = None
        self.schedule = Schedule()
        self._handlers = {
            TimerKind.RULE: lambda t_ns, due: self.play.rule_due(self._game(), t_ns, due),
            TimerKind.ROUND: lambda t_ns, _: self.play.end(self._game(), t_ns, "round_over"),
            TimerKind.ROUND_START: lambda t_ns, _: self.play.round_start(self._game(), t_ns),
            TimerKind.STUCK: lambda t_ns, button: self._act(self.gestures.mark_stuck(button, t_ns)),
            TimerKind.CHECKPOINT: lambda t_ns, _: self._emit("checkpoint", t_ns),
            TimerKind.SELFTEST: lambda t_ns, _: self.selftests.fire(t_ns),
        }

    def reset(self):
        """Forget how far the clock was taken and every waiting input (a journal not taken up)."""
        self.schedule, self.now_ns = Schedule(), None

    def catch_up(self, t_ns, checkpoints=True):
        """Take the clock on to `t_ns` (never back): fire what fell due and apply what waited
        (with no `checkpoints`: none for time nobody was there); returns the instant used."""
        self._game()  # ClockError before the first game
        t_ns = max(t_ns, self.now_ns)
        self.now_ns = t_ns
        self._process(t_ns, checkpoints)
        return t_ns

    def submit(self, t_ns, action, *args, **kwargs):
        """Apply `action` at `t_ns`, in time order with everything else (one held back behind a
        press still being told from a glitch is applied once that is decided)."""
        t_ns = self.catch_up(t_ns)
        self.schedule.put(t_ns, action, *args, **kwargs)
        self._process(t_ns)

    def edge(self, button, down, t_ns):
        """One raw contact edge of `button` at `t_ns` (taken no earlier than the clock has come)."""
        t_ns = self.catch_up(t_ns)
        order = self.schedule.next_order()  # edges at one instant are taken in the order they came
        for button_, down_, at, order_ in self.contacts.edge(
            button, down, t_ns, self.schedule.done_ns, order
        ):
            self.schedule.put(at, self._transition, button_, down_, order=order_)
        self._process(t_ns)

    def timers(self, checkpoints=True):
        """The game's time-driven work from where it has been taken to (see due.py)."""
        done_ns, last_ns = self.schedule.done_ns, self._last_t_ns()
        every_ms = self._checkpoint_ms() if checkpoints else None
        yield from due_timers(self._game(), done_ns, self.accounting, self.gestures, every_ms, last_ns)
        yield from self.selftests.timers()

    def _process(self, t_ns, checkpoints=True):
        """Everything up to `t_ns`, in time order (see schedule.py)."""
        timers = partial(self.timers, checkpoints)
        self.schedule.run(t_ns, self.contacts, timers, self._fire, self._transition)

    def _fire(self, timer):
        self._handlers[timer.kind](timer.at_ns, timer.subject)
        self.selftests.check(self._game(), timer.at_ns)  # a round's start cancels a self-test

    def _transition(self, t_ns, button, down):
        if self.selftests.take(button, down, t_ns):
            return
        self._act(self.gestures.transition(button, down, t_ns, self._game().state))
        self.selftests.check(self._game(), t_ns)  # the first press of a game cancels a self-test

    def _act(self, intents):
        for intent in intents:
            if isinstance(intent, Chord | BothChord):
                intent = self._dated_in_order(intent)
            try:
                if isinstance(intent, SelfTestHold):
                    self.selftests.start(self._game(), intent.t_ns, "buttons")
                    continue
                self.play.intent(self._game(), intent)
            except Refused as why:
                self._emit("error", intent.t_ns, detail=str(why))

    def _dated_in_order(self, chord):
        """A chord is known at its release but takes effect at its first edge (CLOCK_RULES §10), dated
        no earlier than the last record; what falls due after that instant fires at its own instant."""
        t_ns = max(chord.t_ns, self._last_t_ns())
        self.schedule.done_ns = min(self.schedule.done_ns, t_ns)
        return replace(chord, t_ns=t_ns)
