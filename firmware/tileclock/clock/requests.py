"""The director's requests from outside the buttons: adjust, late start, round over, reopen, set.

A mixin of `GameClock` (core.py). The buttons' chords reach the same corrections and late starts;
a request the game does not allow now is refused with an `error` record that says why.
"""

from .records import SIDES
from .state import State
from .timecode import NS_PER_MS, NS_PER_S, format_clock, ms
from .view import Notice

READY, PAUSED, ENDED = State.READY, State.PAUSED, State.ENDED


class Refused(Exception):
    """A director's request the game does not allow now; the message says why (an `error` record)."""


class DirectorRequests:
    """The director's requests of `GameClock`, and the corrections and late starts they share with the buttons."""

    def adjust(self, t_ns, side, delta_ms, source="serial"):
        """A director's correction from outside the buttons (the same rules as the buttons' chord)."""
        return self._submit(t_ns, self._request, self._correct, side, delta_ms * NS_PER_MS, source)

    def late_start(self, t_ns, player, source="serial"):
        """A director's late start of `player` (`A`, `B` or `both`): only on a fresh game."""
        absent = SIDES if player == "both" else (player,)
        return self._submit(t_ns, self._request, self._late_start, absent, source)

    def round_over(self, t_ns, source="serial"):
        """The director's "round over" (school rule 21): both sides stop and the game ends at once
        (`round_over`), its penalties as of this instant; refused with an `error` on an ended game."""
        return self._submit(t_ns, self._request, self._round_over, source)

    def reopen(self, t_ns, source="serial"):
        """The director reopens an ended game (not a forfeit), stopped, exactly as it was."""
        return self._submit(t_ns, self._request, self._reopen, source)

    def set_scene(self, t_ns, wall_ms=None, round=None, table=None, times_s=None):
        """A director's `set`: the time of day (ms since 1970, UTC) at `t_ns`, the round, the
        table, and the starting times (`{side: s}`), for this game while nobody has pressed,
        else for the next (see scene.py). Recorded in a `set` record."""
        return self._submit(t_ns, self._set_scene, wall_ms, round, table, times_s)

    def _set_scene(self, t_ns, wall_ms, round, table, times_s):
        fields, this_times = self.scene.set(
            t_ns, self.game.t0_ns, self.state == READY, wall_ms, round, table, times_s
        )
        self._set_start_times(this_times)
        self._emit("set", t_ns, **fields)

    def _set_start_times(self, times_s):
        """Give the current game other starting times (before anyone pressed, or as rebuilt)."""
        self.game.give_start_times({side: s * NS_PER_S for side, s in (times_s or {}).items()})

    def _request(self, t_ns, action, *args):
        """A director's request at `t_ns`: done, or refused with an `error` record saying why."""
        try:
            action(t_ns, *args)
        except Refused as why:
            self._emit("error", t_ns, detail=str(why))

    # ---------------------------------------------------------------- intents

    def _late_start(self, t_ns, absent, source, button=None):
        game = self.game
        if game.state != READY:
            raise Refused(f"late start only on a fresh game ({game.state})")
        game.absent = dict.fromkeys(absent, t_ns)
        game.start_round(t_ns)
        game.charge(set(absent) if self.rules.absence_runs_clock else set(), t_ns)
        player = absent[0] if len(absent) == 1 else "both"
        self._emit("late_start", t_ns, player=player, source=source, **({"button": button} if button else {}))

    def _correct(self, t_ns, side, delta_ns, source):
        game, accounting, rules = self.game, self.accounting, self.rules
        if game.state not in (PAUSED, ENDED):
            raise Refused(f"adjust only while the clock is stopped mid-game or after the end ({game.state})")
        if game.lost:
            raise Refused("adjust: the game was forfeited")
        limit_s = (game.allowance_ns[side] + delta_ns) // NS_PER_S
        if abs(delta_ns) > rules.max_correction_s * NS_PER_S or not 0 <= limit_s <= rules.max_limit_s:
            raise Refused(
                f"adjust {side} {ms(delta_ns):+d}: one correction is at most "
                f"{format_clock(rules.max_correction_s)}, and a side's limit stays within "
                f"0:00 to {format_clock(rules.max_limit_s)} (it would be {format_clock(limit_s)})"
            )
        shown_before = game.display_seconds(side, t_ns)
        pen_before = accounting.overtime_pen(game, side, t_ns)
        game.correct(side, delta_ns, t_ns)
        game.notice = Notice("correction", side, delta_s=delta_ns // NS_PER_S)
        self._emit("adjust", t_ns, player=side, delta_ms=ms(delta_ns), source=source)
        if shown_before >= 0 > game.display_seconds(side, t_ns):
            self._emit("overtime", t_ns, player=side)
        if accounting.overtime_pen(game, side, t_ns) != pen_before:
            self._emit("penalty", t_ns, player=side, kind="overtime")
        if accounting.past_cap(game, side, t_ns):
            self._end(t_ns, "forfeit", side, "overtime_limit")
        elif game.state == ENDED:
            self._end(t_ns, game.end_reason)  # the summary again, as corrected

    def _round_over(self, t_ns, source):
        if self.game.state == ENDED:
            raise Refused("round over: the game has already ended")
        self._end(t_ns, "round_over")

    def _reopen(self, t_ns, source):
        game = self.game
        if game.state != ENDED:
            raise Refused(f"reopen: the game has not ended ({game.state})")
        if game.lost or game.end_reason != "stop_hold":
            why = "a forfeit stands" if game.lost else "the round is over"
            raise Refused(f"reopen: {why}")
        game.reopen(t_ns)
        self._emit("reopen", t_ns, source=source, reopens=game.end_seq)
