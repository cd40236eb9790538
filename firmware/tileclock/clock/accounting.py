"""A game's time against its rules: penalties, the instants at which a record falls due, the summary.

Pure queries over a `GameState` and a `Rules` profile; the clock decides what to
record when something falls due.
"""

from ..wire.records import SIDES, SideState
from .state import State
from .timecode import NS_PER_S, format_clock, ms
from .view import SideView

#: Rule events that end the game.
FORFEITS = ("overtime_limit", "absent")


class Accounting:
    """What `rules` make of a game's charged time."""

    def __init__(self, rules):
        self.rules = rules

    # ------------------------------------------------------------- penalties

    def shown_seconds(self, game, side, t_ns):
        """The signed whole seconds `side`'s display shows: never past the overtime cap."""
        shown = game.display_seconds(side, t_ns)
        cap = self.rules.overtime_cap_s
        return shown if cap is None else max(shown, -(cap + 1))

    def past_cap(self, game, side, t_ns):
        """Whether `side`'s overtime exceeds the cap (NASPA V.G.3), however it got there."""
        cap = self.rules.overtime_cap_s
        return cap is not None and game.display_seconds(side, t_ns) <= -(cap + 1)

    def overtime_pen(self, game, side, t_ns):
        """`side`'s overtime penalty as of `t_ns`; past the cap, the cap's deduction in its place."""
        if self.past_cap(game, side, t_ns):
            return self.rules.cap_deduction
        return self.rules.overtime_penalty(-self.shown_seconds(game, side, t_ns))

    def penalty(self, game, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`: overtime and late penalties."""
        return self.overtime_pen(game, side, t_ns) + game.late_pen[side]

    def absent_s(self, game, side, t_ns):
        """Whole seconds `side` has been absent, while absence shows on the panels (else None)."""
        if side not in game.absent or self.rules.absence_runs_clock:
            return None
        return game.absence_ns(side, t_ns) // NS_PER_S

    def side_state(self, game, side, t_ns):
        """`side` as a record reports it at `t_ns`."""
        return SideState(
            used_ms=ms(game.used_ns(side, t_ns)),
            shown=format_clock(self.shown_seconds(game, side, t_ns)),
            pen=self.penalty(game, side, t_ns),
            late_pen=game.late_pen[side],
        )

    def side_view(self, game, side, t_ns):
        """`side` as a screen shows it at `t_ns`."""
        shown = self.shown_seconds(game, side, t_ns)
        return SideView(
            used_ms=ms(game.used_ns(side, t_ns)),
            shown=format_clock(shown),
            pen=self.penalty(game, side, t_ns),
            overtime=shown < 0,
            late=side in game.absent,
            lost=game.lost in (side, "both"),
            absent_s=self.absent_s(game, side, t_ns),
            late_pen=game.late_pen[side],
        )

    def summary(self, game, t_ns):
        """The game's result as the `end` record carries it (docs/protocol.md)."""
        forfeit = {"player": game.lost, "reason": game.lost_reason} if game.lost else None
        summary = {"reason": game.end_reason, "forfeit": forfeit, "first": game.first}
        for side in SIDES:
            shown = self.shown_seconds(game, side, t_ns)
            lost = game.lost in (side, "both")
            summary[side] = {
                "start_ms": ms(game.start_ns[side]),
                "corrections_ms": sum(c["delta_ms"] for c in game.corrections if c["player"] == side),
                "used_ms": ms(game.used_ns(side, t_ns)),
                "shown": format_clock(shown),
                "overtime_s": max(0, -shown),
                "overtime_pen": self.overtime_pen(game, side, t_ns),
                "late_pen": game.late_pen[side],
                "pen": self.penalty(game, side, t_ns),
                "absent_ms": ms(game.absence_ns(side, t_ns)),
                "lost_on_time": lost and game.lost_reason == "overtime_limit",
                "lost_absent": lost and game.lost_reason == "absent",
                "turns": game.turns[side],
            }
        summary["stopped_ms"] = ms(game.stopped_ns(t_ns))
        summary["shared_ms"] = ms(game.shared_ns(t_ns))
        summary["corrections"] = list(game.corrections)
        return summary

    # -------------------------------------------------------- what falls due

    def _charged_thresholds(self, game, side, used):
        """(used_ns, kind) instants of a charged side's time at which a record is due."""
        rules = self.rules
        allowance = game.allowance_ns[side]
        first_over = allowance + NS_PER_S  # the display first reads -0:01
        step = rules.overtime_step_s * NS_PER_S
        if used < first_over:
            yield first_over, "overtime"
            if side in game.absent and rules.late_forfeit_at_overtime:
                yield first_over, "absent"
        else:
            yield first_over + ((used - first_over) // step + 1) * step, "penalty"
        if rules.overtime_cap_s is not None:
            yield allowance + (rules.overtime_cap_s + 1) * NS_PER_S, "overtime_limit"

    def _absence_thresholds(self, absent):
        """(absence_ns, kind) instants of an absent side's absence at which a record is due."""
        rules = self.rules
        if rules.late_interval_s:
            interval = rules.late_interval_s * NS_PER_S
            yield (absent // interval + 1) * interval, "late_penalty"
        if rules.late_forfeit_after_s is not None:
            yield rules.late_forfeit_after_s * NS_PER_S, "absent"

    def next_due(self, game, now_ns):
        """(t_ns, {(side, kind), ...}) of the next time-driven rule event, or None."""
        if game.state != State.RUNNING:
            return None
        due = []
        for side in game.charged:
            used = game.used_ns(side, now_ns)
            due += [
                (now_ns + at - used, side, kind) for at, kind in self._charged_thresholds(game, side, used)
            ]
        for side in game.absent:
            absent = game.absence_ns(side, now_ns)
            due += [(now_ns + at - absent, side, kind) for at, kind in self._absence_thresholds(absent)]
        due = [item for item in due if item[0] > now_ns]
        if not due:
            return None
        first = min(at for at, _, _ in due)
        return first, frozenset((side, kind) for at, side, kind in due if at == first)

    def round_end_ns(self, game):
        """When the round limit ends the game, or None."""
        if self.rules.round_limit_s is None or game.round_start_ns is None or game.state == State.ENDED:
            return None
        return game.round_start_ns + self.rules.round_limit_s * NS_PER_S

    def round_left_s(self, game, t_ns):
        """Whole seconds left in the round while the panels show it (its last minutes), else None."""
        end = self.round_end_ns(game)
        if end is None:
            return None
        left = self.rules.round_limit_s - (t_ns - game.round_start_ns) // NS_PER_S
        return max(0, left) if left <= self.rules.round_warning_s else None

    def next_display_change(self, game, now_ns):
        """When anything the panels show next changes with time alone, or None."""
        changes = []
        if game.state == State.RUNNING:
            for side in game.charged:
                used = game.used_ns(side, now_ns)
                changes.append(now_ns + (used // NS_PER_S + 1) * NS_PER_S - used)
            for side in game.absent:
                if self.absent_s(game, side, now_ns) is not None:
                    absent = game.absence_ns(side, now_ns)
                    changes.append(now_ns + (absent // NS_PER_S + 1) * NS_PER_S - absent)
        end = self.round_end_ns(game)
        if end is not None:
            warn_from = end - self.rules.round_warning_s * NS_PER_S
            if now_ns < warn_from:
                changes.append(warn_from)
            else:
                elapsed = now_ns - game.round_start_ns
                changes.append(game.round_start_ns + (elapsed // NS_PER_S + 1) * NS_PER_S)
        return min(changes) if changes else None
