"""What falls due with no input: rule events (overtime, penalties, forfeits), the round's end, a
stuck button, a checkpoint. A mixin of `GameClock` (core.py), which fires these in time order.
"""

from .accounting import FORFEITS
from .records import SIDES
from .state import State
from .timecode import NS_PER_MS
from .timers import Timer, TimerKind

RUNNING = State.RUNNING


class DueWork:
    """The `GameClock`'s time-driven work: the timers it has, and what each does when it fires."""

    def _timers(self):
        """The game's time-driven work from where it has been taken to, as `Timer`s."""
        game, done = self.game, self._done_ns
        due = self.accounting.next_due(game, done)
        if due:
            yield Timer(due[0], TimerKind.RULE, due[1])
        round_end = self.accounting.round_end_ns(game)
        if round_end is not None:
            yield Timer(max(round_end, done), TimerKind.ROUND)
        yield from self.gestures.timers()
        if self.checkpoint_ms is not None and self.state == RUNNING:
            yield Timer(self._last_t_ns + self.checkpoint_ms * NS_PER_MS, TimerKind.CHECKPOINT)

    def _stuck(self, t_ns, button):
        self._act(self.gestures.mark_stuck(button, t_ns))

    def _checkpoint(self, t_ns, _):
        self._emit("checkpoint", t_ns)

    def _rule_due(self, t_ns, due):
        game = self.game
        forfeits = sorted((kind, side) for side, kind in due if kind in FORFEITS)
        if forfeits:
            kind, side = forfeits[-1]  # the cap before absence (sorted: "overtime_limit" > "absent")
            both = kind == "absent" and (len(game.absent) == 2 or len(forfeits) == 2)
            self._end(t_ns, "forfeit", "both" if both else side, kind)
            return
        for side in SIDES:
            kinds = {kind for s, kind in due if s == side}
            if "late_penalty" in kinds:
                game.late_pen[side] = self.rules.late_penalty(game.absence_ns(side, t_ns))
                self._emit("penalty", t_ns, player=side, kind="late")
            if "overtime" in kinds:
                self._emit("overtime", t_ns, player=side)
            if kinds & {"overtime", "penalty"}:
                self._emit("penalty", t_ns, player=side, kind="overtime")
