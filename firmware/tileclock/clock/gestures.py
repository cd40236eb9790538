"""Gestures: debounced button edges turned into what the player or director means (intents).

Holds, chords and stuck buttons live here; what an intent does to the game is the
clock's business (`core.py`). See docs/rules.md for the table of gestures.
"""

from dataclasses import dataclass

from .debounce import Debouncer
from .records import BUTTONS
from .state import State
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind
from .view import Hint

STOP = "STOP"


@dataclass(frozen=True)
class ButtonTiming:
    """How presses are told apart: settings of the clock, not of a rulebook."""

    #: Edges closer together than this are contact bounce.
    bounce_ms: int = 20
    #: A side's press ends its turn only once its clock has run this long (collisions).
    min_turn_ms: int = 250
    #: Hold STOP this long on a stopped clock, then release, to end (or start) a game.
    end_hold_ms: int = 2000
    #: In a correction, a side held at least this long takes time off instead of adding it.
    correction_hold_ms: int = 1000
    #: The size of one correction.
    correction_ms: int = 60_000
    #: A button held down longer than this is stuck: a fault, and its release does nothing.
    stuck_ms: int = 10_000


# --- intents


@dataclass(frozen=True)
class SidePress:
    """A side's button went down, with no modifier."""

    t_ns: int
    side: str


@dataclass(frozen=True)
class StopPress:
    """STOP went down: a running clock stops."""

    t_ns: int


@dataclass(frozen=True)
class StopHoldRelease:
    """STOP was held `end_hold` on a stopped clock and let go: end the game (or start a new one)."""

    t_ns: int


@dataclass(frozen=True)
class LateStart:
    """On a fresh game, STOP held and `present`'s button pressed: the absent side's clock runs."""

    t_ns: int
    present: str


@dataclass(frozen=True)
class Correction:
    """On a stopped clock, STOP held and `side` tapped (add a minute) or held (`take_off` a minute)."""

    t_ns: int
    side: str
    take_off: bool


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
    used: bool = False  # a chord was made during this hold


class Gestures:
    """The three buttons, from raw edges to intents, per `timing`."""

    def __init__(self, timing):
        self.timing = timing
        self.stuck = set()
        self._buttons = {name: Debouncer(timing.bounce_ms * NS_PER_MS) for name in BUTTONS}
        self._down_since = {}  # button -> when its debounced press began
        self._stop_hold = None
        self._chord = {}  # side -> when it went down under a held STOP

    def new_game(self):
        """A new game begins: no hold or chord carries over into it."""
        self._stop_hold = None
        self._chord = {}

    def edge(self, button, down, t_ns, state):
        """One raw contact edge; the intents it makes (usually none or one)."""
        change = self._buttons[button].edge(down, t_ns)
        return self._transition(button, *change, state) if change else []

    def settle(self, button, t_ns, not_before_ns, state):
        """A bounce train on `button` ended at `t_ns`: the intents of the press or release it hid."""
        change = self._buttons[button].settle(t_ns)
        if not change:
            return []
        down, since = change
        return self._transition(button, down, max(since, not_before_ns), state)

    def mark_stuck(self, button, t_ns):
        """`button`'s stuck timer fired."""
        self.stuck.add(button)
        return [Stuck(t_ns, button)]

    def timers(self):
        """What falls due without input: the end of a bounce train, a button held long enough to be stuck."""
        for name, debouncer in self._buttons.items():
            if debouncer.deadline() is not None:
                yield Timer(debouncer.deadline(), TimerKind.SETTLE, name)
        for name, since in self._down_since.items():
            if name not in self.stuck:
                yield Timer(since + self.timing.stuck_ms * NS_PER_MS, TimerKind.STUCK, name)

    def hint(self, t_ns, state):
        """What letting go of a held STOP would do at `t_ns`, or None."""
        if self._end_hold_from() is None or t_ns < self._end_hold_from():
            return None
        return Hint.NEW_GAME if state == State.ENDED else Hint.END_GAME

    def next_hint_change(self, now_ns):
        """When the hint next changes without input, or None."""
        at = self._end_hold_from()
        return at if at is not None and at > now_ns else None

    # --------------------------------------------------------------- internals

    def _end_hold_from(self):
        """From when letting go of the current STOP hold would end (or start) a game, or None."""
        hold = self._stop_hold
        if not hold or not hold.began_stopped or hold.used:
            return None
        return hold.since_ns + self.timing.end_hold_ms * NS_PER_MS

    def _transition(self, button, down, t_ns, state):
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
        self._stop_hold = _StopHold(t_ns, began_stopped=state != State.RUNNING)
        return [StopPress(t_ns)]

    def _stop_up(self, t_ns, state):
        hold_from = self._end_hold_from()
        self._stop_hold = None
        if hold_from is None:
            return []
        if t_ns < hold_from:
            return [Ignored(t_ns, STOP, "stopped" if state != State.ENDED else "ended")]
        return [StopHoldRelease(t_ns)]

    def _side_down(self, side, t_ns, state):
        hold = self._stop_hold
        if hold and hold.began_stopped and state in (State.READY, State.PAUSED):
            hold.used = True
            if state == State.READY:
                return [LateStart(t_ns, side)]
            self._chord[side] = t_ns
            return []
        if hold:
            return [Ignored(t_ns, side, "stop_held")]
        return [SidePress(t_ns, side)]

    def _side_up(self, side, t_ns, state):
        since = self._chord.pop(side, None)
        if since is None or state != State.PAUSED:
            return []
        held = t_ns - since >= self.timing.correction_hold_ms * NS_PER_MS
        return [Correction(t_ns, side, take_off=held)]
