"""Gestures: debounced button edges turned into what the player or director means (intents).

Holds, chords, taps (the call to the director), the end's confirmation, glitches, wake
presses and stuck buttons live here, timed by `button_timing.ButtonTiming`; the intents are
intents.py's, the real presses and releases contacts.py's, and what an intent does to the game
is the clock's business (`core.py`).
The gestures are tabled in docs/rules.md.
"""

from dataclasses import dataclass

from ..wire.records import SIDES
from .intents import (
    BothChord,
    CallDirector,
    Chord,
    ConfirmEnd,
    Ignored,
    SelfTestHold,
    SidePress,
    StopHoldRelease,
    StopPress,
    Stuck,
    Unstuck,
)
from .state import State, other
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind
from .view import Hint

STOP = "STOP"


@dataclass
class _StopHold:
    since_ns: int
    began_stopped: bool  # a STOP that stopped a running clock never makes a gesture
    used: bool = False  # a chord or a press was made during this hold


class Gestures:
    """The three buttons' real presses and releases turned into intents, per `timing`.

    `is_dark(t_ns)` says whether the panels are dark at `t_ns`: a press then only wakes them.
    """

    def __init__(self, timing, is_dark=lambda t_ns: False):
        self.timing = timing
        self.is_dark = is_dark
        self.stuck = set()
        #: the last instant a button's contact was taken as made or broken (not a glitch)
        self.last_input_ns = None
        self._down_since = {}  # button -> when its press began
        self._swallowed = set()  # buttons whose press only woke the panels: so does the release
        self._stop_hold = None
        self._chord = {}  # side -> when it went down under a held STOP
        self._both = False  # both sides were down together in this chord
        self._both_long = False  # ... and held together `selftest_hold` before either was let go
        self._chord_from_ns = None  # the first edge of the chord's first side press
        self._chord_activity_ns = None  # the last chord edge: a STOP in use is not stuck
        self._confirm_until = None  # a STOP press before this confirms the end
        self._taps = []  # the first edges of the STOP taps that may be a call, oldest first
        self._selftest_armed = False  # a self-test hold made: STOP's release starts it

    def new_game(self):
        """A new game begins: no chord, pending confirmation or tap carries over into it."""
        self._taps = []
        self._chord = {}
        self._both = False
        self._chord_from_ns = None
        self._confirm_until = None
        self._selftest_armed = False

    def transition(self, button, down, t_ns, state):
        """A real press (`down`) or release of `button` at `t_ns`: the intents it makes."""
        if not down and button in self._swallowed:
            self._swallowed.discard(button)
            self._down_since.pop(button, None)
            self.last_input_ns = t_ns  # the release of a wake press
            return []
        return self._accepted(button, down, t_ns, state)

    def mark_stuck(self, button, t_ns):
        """`button`'s stuck timer fired."""
        self.stuck.add(button)
        self._taps = []
        self._selftest_armed = False
        return [Stuck(t_ns, button)]

    def timers(self):
        """What falls due without input: a button held long enough to be stuck."""
        for name, since in self._down_since.items():
            if name not in self.stuck:
                if name == STOP and self._chord_activity_ns is not None:
                    since = max(since, self._chord_activity_ns)  # held as a modifier: in use, not stuck
                yield Timer(since + self.timing.stuck_ms * NS_PER_MS, TimerKind.STUCK, name)

    def hint(self, t_ns, state):
        """What the panels should ask or say about a STOP gesture at `t_ns`, or None."""
        hold_from = self._end_hold_from()
        if hold_from is not None and t_ns >= hold_from:
            return Hint.NEW_GAME if state == State.ENDED else Hint.END_GAME
        if self._confirm_until is not None and t_ns < self._confirm_until and state != State.ENDED:
            return Hint.CONFIRM_END
        return None

    def next_hint_change(self, now_ns):
        """When the hint next changes without input, or None."""
        changes = [
            at for at in (self._end_hold_from(), self._confirm_until) if at is not None and at > now_ns
        ]
        return min(changes) if changes else None

    # --------------------------------------------------------------- internals

    def _end_hold_from(self):
        """From when letting go of the current STOP hold would end (or start) a game, or None."""
        hold = self._stop_hold
        if not hold or not hold.began_stopped or hold.used or STOP in self.stuck:
            return None
        return hold.since_ns + self.timing.end_hold_ms * NS_PER_MS

    def _tapped(self, since_ns, t_ns):
        """A STOP tap (down at `since_ns`, let go at `t_ns`) on a stopped clock: whether it makes
        `call_taps` taps within `call_window` (then the count starts again)."""
        window_ns = self.timing.call_window_ms * NS_PER_MS
        self._taps = [at for at in self._taps if t_ns - at <= window_ns] + [since_ns]
        if len(self._taps) < self.timing.call_taps:
            return False
        self._taps = []
        return True

    def _accepted(self, button, down, t_ns, state):
        """A press or release that really happened, at `t_ns`."""
        if down and self.is_dark(t_ns):
            self._swallowed.add(button)
            self._down_since[button] = t_ns
            self.last_input_ns = t_ns
            return [Ignored(t_ns, button, "wake")]
        self.last_input_ns = t_ns
        if down:
            self._down_since[button] = t_ns
        else:
            self._down_since.pop(button, None)
            if button in self.stuck:
                self.stuck.discard(button)
                if button == STOP:
                    self._stop_hold = None
                self._chord.pop(button, None)
                return [Unstuck(t_ns, button)]  # a stuck button's release is not a gesture
        if button == STOP:
            return self._stop_down(t_ns, state) if down else self._stop_up(t_ns, state)
        return self._side_down(button, t_ns, state) if down else self._side_up(button, t_ns, state)

    def _stop_down(self, t_ns, state):
        confirming = self._confirm_until is not None and t_ns < self._confirm_until
        self._confirm_until = None
        if confirming and state in (State.READY, State.PAUSED):
            self._taps = []  # a press that confirms the end is no tap (docs/rules.md)
            self._stop_hold = _StopHold(t_ns, began_stopped=True, used=True)  # its release does nothing
            return [ConfirmEnd(t_ns)]
        if state == State.RUNNING:
            self._taps = []  # the press that stops a running clock is no tap
        self._stop_hold = _StopHold(t_ns, began_stopped=state != State.RUNNING)
        self._chord_activity_ns = None
        return [StopPress(t_ns)]

    def _stop_up(self, t_ns, state):
        hold_from, since_ns = self._end_hold_from(), self._stop_hold.since_ns if self._stop_hold else None
        self._stop_hold = None
        if self._selftest_armed:
            self._selftest_armed = False
            if state == State.READY and not self._chord:
                self._taps = []
                return [SelfTestHold(t_ns)]
        if hold_from is None:
            self._taps = []  # a chord, a confirmation, or a STOP that stopped the clock: no tap
            return []
        if t_ns < hold_from:
            if self._tapped(since_ns, t_ns):
                return [CallDirector(t_ns)]  # taps that pass through no other gesture
            return [Ignored(t_ns, STOP, "stopped" if state != State.ENDED else "ended")]
        self._taps = []  # a hold is no tap
        if state == State.ENDED:
            return [StopHoldRelease(t_ns)]
        self._confirm_until = t_ns + self.timing.confirm_end_ms * NS_PER_MS  # the panels ask to confirm
        return []

    def _side_down(self, side, t_ns, state):
        self._confirm_until = None
        self._taps = []  # a side's press between (or during) taps: the count starts again
        hold = self._stop_hold
        if hold is None or STOP in self.stuck:
            return [SidePress(t_ns, side)]  # a stuck STOP is never a modifier
        if not hold.began_stopped or state == State.RUNNING:
            return [Ignored(t_ns, side, "stop_held")]
        hold.used = True
        if t_ns - hold.since_ns < self.timing.chord_after_ms * NS_PER_MS:
            return [SidePress(t_ns, side)]  # STOP touched just before: the press counts on its own
        if other(side) in self._chord:
            self._both = True
        else:
            self._chord_from_ns = t_ns
            self._both_long = False
        self._chord[side] = t_ns
        self._chord_activity_ns = t_ns
        return []

    def _side_up(self, side, t_ns, state):
        since = self._chord.pop(side, None)
        if since is None:
            return []
        self._chord_activity_ns = t_ns
        if self._both:
            if any(s in self._chord for s in SIDES):
                together_ns = t_ns - max(since, self._chord[other(side)])  # both down, STOP held
                self._both_long = together_ns >= self.timing.selftest_hold_ms * NS_PER_MS
                return []  # the chord ends when both sides are let go
            self._both = False
            if self._both_long and state == State.READY:  # a self-test, once STOP is let go too
                self._selftest_armed = True
                return []
            return [BothChord(self._chord_from_ns)]
        held = t_ns - since >= self.timing.correction_hold_ms * NS_PER_MS
        return [Chord(since, side, held)]
