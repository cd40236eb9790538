"""What the screens need at one instant: the clock's view, as data; `device/screen/face.py` words it."""

from dataclasses import dataclass
from enum import StrEnum


class Hint(StrEnum):
    """What a held STOP will do when it is let go."""

    END_GAME = "end_game"  # letting go asks to confirm the end
    CONFIRM_END = "confirm_end"  # a STOP press now ends the game
    NEW_GAME = "new_game"


@dataclass(frozen=True)
class Notice:
    """Something the panels say until the clock next runs.

    `kind` is `correction` (with `side` and `delta_s`), `recovered` (with `uncertain_s`, the time
    a power cut may have lost, 0 after a restart) `call_done` (the director closed the call) `takeover` (a spare took a game over) or `moved` (this
    clock's game moved to a spare: it ended here).
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
    #: whole seconds absent while this side is late (counting up), else None
    absent_s: int | None = None
    #: the part of `pen` that is the late penalty
    late_pen: int = 0


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
    #: Whole seconds left in the round, in its last minutes (a round limit), else None.
    round_left_s: int | None = None
    #: Why the game ended (`stop_hold`, `forfeit`, `round_over`), once it has; and why a forfeit.
    end_reason: str | None = None
    lost_reason: str | None = None
    #: The board's open call to the director: `called` (waiting), `taken` (on the way), else None.
    call: str | None = None
    #: The hall's score links of this game, as (base, (token A, token B)): side S's is
    #: `base/S/token_S`, its own side's form alone (the device
    #: adds it, never the core: it is not in any record); and the sides whose panel shows it.
    score_link: tuple | None = None
    code: tuple = ()
    #: A self-test running or showing its result (`selftest.SelfTestView`), else None.
    selftest: object = None

    def side(self, name):
        return self.A if name == "A" else self.B
