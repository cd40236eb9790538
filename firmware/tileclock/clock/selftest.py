"""The self-test before a round (issue 40): the panels ask for A, B and STOP in turn, light every
pixel, and say PASS or what failed; the result is a `selftest` record.

It runs only on a fresh game (nobody has pressed yet), started by the buttons' gesture (STOP held,
both sides held together `selftest_hold_ms`, all let go: gestures.py) or a director's `selftest`.
While it asks, every press answers the test and never the game (no record, no time charged); once
it has asked its last button the buttons are the game's again, and a game that starts (a press, a
director's late start or round start) cancels a test still lighting its panels. It never changes a
game: the game's records and times are those it would have had without it.

Each button answers by a press and its release within `selftest_wait_ms` each: its contact time
(`held_ms`, press to release, as debounced) and how long it took to answer (`answer_ms`) go in the
record, with the chatter seen on each contact during the test (pulses shorter than the glitch
window that came back: `Contacts.chatter`). A button not pressed, or not let go, in time, or any
chatter, is a failure named in `failed`.
"""

from dataclasses import dataclass

from ..wire.records import BUTTONS
from .play import Refused
from .state import State
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind

ASK, LIGHT, RESULT = "ask", "light", "result"


@dataclass(frozen=True)
class SelfTestView:
    """What the panels show of a self-test: `phase` (`ask`, `light`, `result`), the button asked
    (while asking), the buttons that answered so far, and once done `result` (`pass`, `fail`) and
    the failures, each a few words (`A not pressed`)."""

    phase: str
    asked: str | None = None
    answered: tuple = ()
    result: str | None = None
    failed: tuple = ()


class SelfTest:
    """One self-test, from `t_ns`: asks each button in turn (`BUTTONS`) for `wait_ms`, then lights
    the panels for `light_ms`; `chatter` is the contacts' chatter counts as it starts."""

    def __init__(self, t_ns, wait_ms, light_ms, chatter, source, by=None):
        self.wait_ns, self.light_ns = wait_ms * NS_PER_MS, light_ms * NS_PER_MS
        self.source, self.by = source, by
        self.phase = ASK
        self._index = 0
        self._since_ns = t_ns  # when the button asked was asked, or (once down) pressed
        self._asked_ns = t_ns
        self._down = False
        self._chatter_from = dict(chatter)
        self.buttons = {button: {"answer_ms": None, "held_ms": None, "chatter": 0} for button in BUTTONS}
        self.failed = []
        self.result = None

    @property
    def asked(self):
        return BUTTONS[self._index] if self.phase == ASK else None

    @property
    def asking(self):
        """Whether presses answer the test (not the game)."""
        return self.phase == ASK

    def view(self):
        answered = tuple(b for b in BUTTONS if self.buttons[b]["held_ms"] is not None)
        return SelfTestView(self.phase, self.asked, answered, self.result, tuple(self.failed))

    def transition(self, button, down, t_ns):
        """A real press or release while asking: the asked button's answers; others mean nothing."""
        if button != self.asked:
            return
        entry = self.buttons[button]
        if down and not self._down:
            self._down = True
            entry["answer_ms"] = (t_ns - self._asked_ns) // NS_PER_MS
            self._since_ns = t_ns
        elif not down and self._down:
            entry["held_ms"] = (t_ns - self._since_ns) // NS_PER_MS
            self._next(t_ns)

    def timers(self):
        """When the test next moves on without input."""
        if self.phase == ASK:
            yield Timer(self._since_ns + self.wait_ns, TimerKind.SELFTEST)
        elif self.phase == LIGHT:
            yield Timer(self._since_ns + self.light_ns, TimerKind.SELFTEST)

    def fire(self, t_ns, chatter):
        """A timer of `timers` is due: a button not answered in time fails; the light ends (then
        True: the result is known, and `record_fields(chatter)` says it)."""
        if self.phase == ASK:
            self.failed.append(f"{self.asked} not {'let go' if self._down else 'pressed'}")
            self._next(t_ns)
            return False
        self.phase = RESULT
        for button in BUTTONS:
            seen = chatter[button] - self._chatter_from[button]
            self.buttons[button]["chatter"] = seen
            if seen:
                self.failed.append(f"{button} chatter")
        self.result = "fail" if self.failed else "pass"
        return True

    def record_fields(self, result=None):
        """The `selftest` record's fields (`result`: `cancelled` for a test a game stopped)."""
        fields = {
            "result": result or self.result,
            "buttons": {button: dict(entry) for button, entry in self.buttons.items()},
            "failed": list(self.failed),
            "source": self.source,
        }
        return fields | ({"by": self.by} if self.by else {})

    def _next(self, t_ns):
        self._down = False
        self._since_ns = self._asked_ns = t_ns
        self._index += 1
        if self._index == len(BUTTONS):
            self.phase = LIGHT


class SelfTests:
    """The clock's self-tests: the one running (or showing its result), started, fed and ended.

    A part of `GameClock` (core.py): `contacts` (their chatter counts), `emit(ev, t_ns, **fields)`
    for the `selftest` record, `wake(t_ns)` to count an instant as a button's (dark panels light)."""

    def __init__(self, timing, contacts, emit, wake):
        self.timing, self.contacts, self._emit, self._wake = timing, contacts, emit, wake
        self.current = None

    def start(self, game, t_ns, source, by=None):
        """Start a self-test at `t_ns`: refused unless `game` is fresh and none is running."""
        if game.state != State.READY:
            raise Refused(f"self-test only on a fresh game ({game.state})")
        if self.current is not None and self.current.phase != RESULT:
            raise Refused("a self-test is already running")
        timing = self.timing
        self.current = SelfTest(
            t_ns, timing.selftest_wait_ms, timing.selftest_light_ms, self.contacts.chatter, source, by
        )
        self._wake(t_ns)  # a test from the hall between rounds lights dark panels

    def take(self, button, down, t_ns):
        """A real press or release: whether the test took it (then it is never the game's). A press
        on the result screen clears it, and is the game's."""
        test = self.current
        if test is not None and test.asking:
            test.transition(button, down, t_ns)
            self._wake(t_ns)  # the test's presses keep the panels awake
            return True
        if test is not None and down:
            self.current = None if test.phase == RESULT else test
        return False

    def timers(self):
        return self.current.timers() if self.current is not None else ()

    def fire(self, t_ns):
        if self.current.fire(t_ns, self.contacts.chatter):
            self._emit("selftest", t_ns, **self.current.record_fields())

    def check(self, game, t_ns):
        """After anything that may have started `game`: a test still running is cancelled."""
        test = self.current
        if test is not None and game.state != State.READY:
            self.current = None
            if test.phase != RESULT:
                self._emit("selftest", t_ns, **test.record_fields("cancelled"))

    def view(self):
        return self.current.view() if self.current is not None else None
