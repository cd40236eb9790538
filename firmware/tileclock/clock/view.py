"""What the screens need at one instant: the clock's view, as data; `device/render.py` words it."""

from dataclasses import dataclass
from enum import StrEnum


class Hint(StrEnum):
    """What a held STOP will do when it is let go."""

    END_GAME = "end_game"
    NEW_GAME = "new_game"


@dataclass(frozen=True)
class Notice:
    """Something the panels say until the clock next runs.

    `kind` is `correction` (with `side` and `delta_s`) or `recovered` (with `uncertain_s`, the time
    a power cut may have lost, 0 after a restart).
    """

    kind: str
    side: str | None = None
    delta_s: int = 0
    uncertain_s: int = 0


@dataclass(frozen=True)
class SideView:
    """One side as a screen shows it."""

    used_ms: int
    shown: str
    pen: int
    overtime: bool
    late: bool
    lost: bool


@dataclass(frozen=True)
class View:
    """Everything a screen needs, at one instant."""

    state: str
    run: str | None
    A: SideView
    B: SideView
    #: What a held STOP will do on release.
    hint: Hint | None = None
    #: The last correction, or a recovery, shown while the clock stays stopped.
    notice: Notice | None = None
    #: Parts at fault: `button A` (stuck), and those the device adds (`serial`, `journal`, `panel B`).
    faults: tuple = ()

    def side(self, name):
        return self.A if name == "A" else self.B
