"""What a `GameClock` reads out without changing anything: its state, the books, the view, the next deadline.

A mixin of `GameClock` (core.py).
"""

from .records import SIDES
from .state import State
from .timers import earliest
from .view import View

RUNNING = State.RUNNING


class Readings:
    """The queries of `GameClock`: each names the instant it asks about."""

    @property
    def state(self):
        """The game's `State`, or None before the first game."""
        return self._game.state if self._game is not None else None

    @property
    def run(self):
        """Whose clock runs: `A`, `B` or None."""
        return self._game.run if self._game is not None else None

    @property
    def t0_ns(self):
        """The instant the current game opened."""
        return self.game.t0_ns

    def used_ns(self, side, t_ns):
        """Time charged to `side` as of `t_ns`."""
        return self.game.used_ns(side, t_ns)

    def stopped_ns(self, t_ns):
        """Time in this game charged to no side, as of `t_ns`."""
        return self.game.stopped_ns(t_ns)

    def shared_ns(self, t_ns):
        """Time charged to both sides at once (both players late), as of `t_ns`."""
        return self.game.shared_ns(t_ns)

    def elapsed_ns(self, t_ns):
        """Time since the current game opened, as of `t_ns`."""
        return t_ns - self.game.t0_ns

    def balanced(self, t_ns):
        """Whether the books balance at `t_ns`: both sides' time and the stopped time, less the time
        charged to both at once, make the elapsed time."""
        game = self.game
        books = (
            game.used_ns("A", t_ns) + game.used_ns("B", t_ns) + game.stopped_ns(t_ns) - game.shared_ns(t_ns)
        )
        return books == self.elapsed_ns(t_ns)

    def stopped_since_ns(self):
        """Since when no clock has run (None while one runs)."""
        return None if self.state == RUNNING else self.game.stopped_since_ns

    def idle_ns(self, t_ns):
        """How long the clock has sat with no clock running and no button touched, or None."""
        if self.state == RUNNING:
            return None
        last_input = self.gestures.last_input_ns
        since = (
            self.game.stopped_since_ns if last_input is None else max(last_input, self.game.stopped_since_ns)
        )
        return max(0, t_ns - since)

    def display_seconds(self, side, t_ns):
        """The signed whole seconds the display shows: limit minus whole seconds used."""
        return self.accounting.shown_seconds(self.game, side, t_ns)

    def penalty(self, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`."""
        return self.accounting.penalty(self.game, side, t_ns)

    def view(self, t_ns):
        """What the screens show at `t_ns` (call `advance` first for events up to then)."""
        game = self.game
        sides = {side: self.accounting.side_view(game, side, t_ns) for side in SIDES}
        faults = tuple(f"button {b}" for b in sorted(self.gestures.stuck))
        hint = self.gestures.hint(t_ns, game.state)
        round_left = self.accounting.round_left_s(game, t_ns)
        return View(
            game.state,
            game.run,
            sides["A"],
            sides["B"],
            hint,
            game.notice,
            faults,
            round_left,
            game.end_reason,
        )

    def contacts_decided_by(self):
        """When every contact change made so far will have been decided (held the glitch window or
        found to be chatter), or None if none is undecided."""
        deadlines = [timer.at_ns for timer in self.contacts.timers()]
        return max(deadlines, default=None)

    def next_deadline(self):
        """The next instant anything changes without an input: a record, a displayed digit, a hint."""
        safe = self.contacts.safe_until()
        timer = earliest(self._timers())
        contact = earliest(self.contacts.timers())
        candidates = [
            self.accounting.next_display_change(self.game, self.now_ns),
            self.gestures.next_hint_change(self.now_ns),
            timer.at_ns if timer and (safe is None or timer.at_ns <= safe[0]) else None,
            contact.at_ns if contact else None,
        ]
        candidates = [c for c in candidates if c is not None]
        return min(candidates) if candidates else None
