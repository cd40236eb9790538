"""The three contacts: raw edges in, the presses and releases that really happened out (debounce.py
decides each contact's), and from when the clock must not act on anything else. Nothing here
depends on the game: what a press means is gestures.py's.
"""

from ..wire.records import BUTTONS
from .debounce import Debouncer
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind


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
