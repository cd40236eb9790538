"""Time-driven work: what falls due at an instant without any input, as typed values."""

from dataclasses import dataclass, field
from enum import IntEnum


class TimerKind(IntEnum):
    """What falls due; on a tie the lower value fires first (a rule event before a button's)."""

    RULE = 0  # a penalty step, overtime, a forfeit (subject: {(side, kind), ...})
    ROUND = 1  # the round limit ends the game
    SETTLE = 2  # a contact has held its level a glitch window: a change decided (subject: button)
    ROUND_START = 3  # the round starts at the instant the director set (`set start=`)
    STUCK = 4  # a button held down too long is a fault (subject: button)
    CHECKPOINT = 5  # a checkpoint record while a side runs
    SELFTEST = 6  # a self-test moves on: a button not answered in time, the light ends


@dataclass(frozen=True, order=True)
class Timer:
    """One thing due at `at_ns`."""

    at_ns: int
    kind: TimerKind
    subject: object = field(default=None, compare=False)


def earliest(timers):
    """The timer that fires first, or None."""
    timers = [timer for timer in timers if timer is not None]
    return min(timers) if timers else None
