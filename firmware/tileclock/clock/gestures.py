"""Gestures: debounced button edges turned into what the player or director means (intents).

Holds, chords, taps (the call to the director), the end's confirmation, glitches, wake
presses and stuck buttons live here; what an intent does to the game is the clock's business
(`core.py`).
The gestures are tabled in docs/rules.md.
"""

from dataclasses import dataclass

from ..wire.records import BUTTONS, SIDES
from .debounce import Debouncer
from .state import State, other
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind
from .view import Hint

STOP = "STOP"


@dataclass(frozen=True)
class ButtonTiming:
    """How presses are told apart: settings of the clock, not of a rulebook."""

    #: Accepted so that older configs load; no longer used: since CLOCK_RULES §10 one window,
    #: `min_press_ms`, tells a change from bounce and chatter in both directions.
    bounce_ms: int = 20
    #: The glitch window: a contact must stay closed this long to be a press, and open this long to
    #: be a release (each still counts from its first edge); shorter pulses are chatter.
    min_press_ms: int = 5
    #: A side's press ends its turn only once its clock has run this long (collisions).
    min_turn_ms: int = 250
    #: Hold STOP this long on a stopped clock, then release, to end (or start) a game.
    end_hold_ms: int = 2000
    #: After that, a STOP press within this long confirms the end.
    confirm_end_ms: int = 5000
    #: Tap STOP this many times within `call_window_ms`, on a clock already stopped (fresh,
    #: stopped or ended), to call the director; a tap is let go before `end_hold_ms`.
    call_taps: int = 3
    call_window_ms: int = 2000
    #: STOP must have been held this long before a side's press for the two to be a chord.
    chord_after_ms: int = 500
    #: In a correction, a side held at least this long takes time off instead of adding it.
    correction_hold_ms: int = 1000
    #: The size of one correction.
    correction_ms: int = 60_000
    #: A button held down longer than this is stuck: a fault, and its release does nothing.
    stuck_ms: int = 10_000
    #: On a fresh game, hold STOP, then both sides together this long, and let all go: a self-test
    #: (selftest.py); shorter, the same chord is both players late.
    selftest_hold_ms: int = 3000
    #: In a self-test, each button asked must be pressed, and let go, within this long.
    selftest_wait_ms: int = 10_000
    #: In a self-test, every pixel of both panels is lit this long.
    selftest_light_ms: int = 2000

    def conflict(self):
        """(key, why) for the first setting the others make useless or unsafe, or None."""
        if self.end_hold_ms >= self.stuck_ms:
            return "end_hold_ms", f"must be shorter than stuck_ms ({self.stuck_ms}): no game could end"
        if self.selftest_hold_ms >= self.stuck_ms:
            return (
                "selftest_hold_ms",
                f"must be shorter than stuck_ms ({self.stuck_ms}): no self-test could start",
            )
        if not 2 <= self.call_taps <= 5:
            return (
                "call_taps",
                "expected 2 to 5 (one tap would make any STOP press on a stopped clock a call)",
            )
        least = 2 * self.call_taps * self.min_press_ms  # each press and release lasts the glitch window
        if not least <= self.call_window_ms <= self.confirm_end_ms:
            return "call_window_ms", (
                f"expected {least} (room for {self.call_taps} taps) to confirm_end_ms ({self.confirm_end_ms}):"
                " taps further apart are no one deliberate gesture"
            )
        return None


# --- intents: each says what was meant, and when


@dataclass(frozen=True)
class SidePress:
    """A side's button went down, as a press on its own."""

    t_ns: int
    side: str


@dataclass(frozen=True)
class StopPress:
    """STOP went down: a running clock stops."""

    t_ns: int


@dataclass(frozen=True)
class StopHoldRelease:
    """On an ended game, STOP was held `end_hold` and let go: a new game."""

    t_ns: int


@dataclass(frozen=True)
class CallDirector:
    """On a stopped, fresh or ended clock, STOP was tapped `call_taps` times within `call_window`:
    call the director (dated at the last tap's release)."""

    t_ns: int


@dataclass(frozen=True)
class ConfirmEnd:
    """STOP pressed to confirm the end the panels asked about."""

    t_ns: int


@dataclass(frozen=True)
class Chord:
    """STOP held, and `side` tapped (or `held` long) and let go: a late start or a correction.

    Dated at the first edge of the side's press (CLOCK_RULES §10), though known only at its release.
    """

    t_ns: int
    side: str
    held: bool


@dataclass(frozen=True)
class BothChord:
    """STOP held, and both sides pressed together and let go: both late, or reopen an ended game.

    Dated at the first edge of the first side's press.
    """

    t_ns: int


@dataclass(frozen=True)
class SelfTestHold:
    """On a fresh game, STOP held, both sides held together `selftest_hold` and all let go: a
    self-test (dated at STOP's release, when all three are up)."""

    t_ns: int


@dataclass(frozen=True)
class Ignored:
    """A press that means nothing here, and why."""

    t_ns: int
    button: str
    reason: str


@dataclass(frozen=True)
class Stuck:
    """`button` has been held down too long: a fault; its release will mean nothing."""

    t_ns: int
    button: str


@dataclass(frozen=True)
class Unstuck:
    """A stuck `button` was let go."""

    t_ns: int
    button: str


@dataclass
class _StopHold:
    since_ns: int
    began_stopped: bool  # a STOP that stopped a running clock never makes a gesture
    used: bool = False  # a chord or a press was made during this hold


class Contacts:
    """The three contacts: raw edges in, presses and releases that really happened out.

    Debounce decides whether a change happened (never when): a press or a release is real only
    once its contact has held the new level for the glitch window (`min_press`), and is dated at
    its first edge (debounce.py). Until then the contact is *unsettled*: `safe_until()` says from
    when the clock must not act on anything else, so a change is never applied after something
    that happened after its first edge. Nothing here depends on the game: that is `Gestures`'s part.
    """

    def __init__(self, timing):
        window_ns = timing.min_press_ms * NS_PER_MS
        self._buttons = {name: Debouncer(window_ns) for name in BUTTONS}
        #: pulses each contact made that came back before the glitch window (chatter), ever
        self.chatter = dict.fromkeys(BUTTONS, 0)

    def edge(self, button, down, t_ns, not_before_ns, order):
        """One raw edge (`order`: its place among all edges): the (button, down, t_ns, order)
        transitions it makes real (often none)."""
        return self._settled(button, self._buttons[button].edge(down, t_ns, order), not_before_ns)

    def timers(self):
        """Each unsettled contact's deadline: when its change is decided (or found to be chatter)."""
        for name, debouncer in self._buttons.items():
            if debouncer.deadline() is not None:
                yield Timer(debouncer.deadline(), TimerKind.SETTLE, name)

    def fire(self, timer, not_before_ns):
        """The transitions a contact timer makes real."""
        debouncer = self._buttons[timer.subject]
        change = debouncer.settle(timer.at_ns)
        if change is None and debouncer.deadline() is None:  # decided, and back where it was
            self.chatter[timer.subject] += 1
        return self._settled(timer.subject, change, not_before_ns)

    def safe_until(self):
        """(t_ns, order) of the first edge of the earliest undecided change, or None: nothing after
        it may be acted on yet (an input at its very instant only if it came before it)."""
        unsettled = [d.unsettled for d in self._buttons.values() if d.unsettled is not None]
        return min(unsettled, default=None)

    @staticmethod
    def _settled(button, change, not_before_ns):
        if change is None:
            return []
        down, t_ns, order = change
        # an edge stamped before what is already done (delivered late) is taken at that instant
        return [(button, down, max(t_ns, not_before_ns), order)]


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
