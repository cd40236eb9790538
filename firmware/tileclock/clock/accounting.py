"""A game's time against its rules: penalties, the instants at which a record falls due, the summary.

Pure queries over a `GameState` and a `Rules` profile; the clock decides what to
record when something falls due.
"""

from .records import SIDES, SideState
from .state import State
from .timecode import NS_PER_S, format_clock, ms
from .view import SideView


class Accounting:
    """What `rules` make of a game's charged time."""

    def __init__(self, rules):
        self.rules = rules

    def penalty(self, game, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`."""
        if game.lost == side and game.lost_reason == "overtime_limit":
            return self.rules.cap_deduction
        over_s = -game.display_seconds(side, t_ns)
        return self.rules.overtime_penalty(over_s) + game.late_pen[side]

    def side_state(self, game, side, t_ns):
        """`side` as a record reports it at `t_ns`."""
        return SideState(
            used_ms=ms(game.used_ns(side, t_ns)),
            shown=format_clock(game.display_seconds(side, t_ns)),
            pen=self.penalty(game, side, t_ns),
        )

    def side_view(self, game, side, t_ns):
        """`side` as a screen shows it at `t_ns`."""
        shown = game.display_seconds(side, t_ns)
        return SideView(
            used_ms=ms(game.used_ns(side, t_ns)),
            shown=format_clock(shown),
            pen=self.penalty(game, side, t_ns),
            overtime=shown < 0,
            late=game.late == side,
            lost=game.lost == side,
        )

    def summary(self, game, t_ns):
        """The game's result as the `end` record carries it."""
        summary = {}
        for side in SIDES:
            shown = game.display_seconds(side, t_ns)
            summary[side] = {
                "used_ms": ms(game.used_ns(side, t_ns)),
                "shown": format_clock(shown),
                "overtime_s": max(0, -shown),
                "pen": self.penalty(game, side, t_ns),
                "lost_on_time": game.lost == side,
                "turns": game.turns[side],
            }
        summary["stopped_ms"] = ms(game.stopped_ns(t_ns))
        summary["corrections"] = list(game.corrections)
        return summary

    def thresholds(self, game, side, now_ns):
        """(used_ns, kind) instants of `side`'s time at which a record is due."""
        rules = self.rules
        allowance = game.allowance_ns[side]
        first_over = allowance + NS_PER_S  # the display first reads -0:01
        step = rules.overtime_step_s * NS_PER_S
        used = game.used_ns(side, now_ns)
        late = game.late == side
        if used < first_over:
            yield first_over, "overtime"
            if late and rules.late_forfeit_at_overtime:
                yield first_over, "absent"
        else:
            yield first_over + ((used - first_over) // step + 1) * step, "penalty"
        if rules.overtime_cap_s is not None:
            yield allowance + (rules.overtime_cap_s + 1) * NS_PER_S, "overtime_limit"
        if late and rules.late_interval_s:
            interval = rules.late_interval_s * NS_PER_S
            yield (used // interval + 1) * interval, "late_penalty"
        if late and rules.late_forfeit_after_s is not None:
            yield rules.late_forfeit_after_s * NS_PER_S, "absent"

    def next_due(self, game, now_ns):
        """(t_ns, side, kinds) of the next time-driven record, or None."""
        if game.state != State.RUNNING:
            return None
        side = game.run
        used = game.used_ns(side, now_ns)
        due = [(at, kind) for at, kind in self.thresholds(game, side, now_ns) if at > used]
        if not due:
            return None
        first = min(at for at, _ in due)
        kinds = {kind for at, kind in due if at == first}
        return now_ns + (first - used), side, kinds

    @staticmethod
    def next_display_change(game, now_ns):
        """When the running side's display next changes, or None."""
        if game.state != State.RUNNING:
            return None
        used = game.used_ns(game.run, now_ns)
        return now_ns + (used // NS_PER_S + 1) * NS_PER_S - used
