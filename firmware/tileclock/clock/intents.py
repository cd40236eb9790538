"""Intents: what the player or director means by a gesture of the buttons, and when.

The gestures (gestures.py) make them from real presses and releases; what each does to the game is
play.py's. The gestures are tabled in docs/rules.md.
"""

from dataclasses import dataclass


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
