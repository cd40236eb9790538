"""The records a clock makes: each numbered (`seq`) and stamped with the game as it stands, kept
until the clock hands them out. A part of `GameClock` (core.py), which owns it.
"""

from ..wire.records import SIDES, TRANSITIONS, Record
from .timecode import NS_PER_MS


class RecordLog:
    """The clock's records not yet handed out, the next `seq`, and the instant of the last record."""

    def __init__(self, accounting, first_seq=0):
        self.accounting = accounting
        #: the seq of the next record
        self.seq = first_seq
        #: the instant of the last record (None before the first)
        self.last_t_ns = None
        self._out = []

    def emit(self, game, scene, ev, t_ns, **extra):
        """A record `ev` at `t_ns` of `game` (a `GameState`, as it stands), in `scene`, with `extra`
        fields."""
        at_ns = t_ns - game.t0_ns
        if ev in TRANSITIONS or at_ns % NS_PER_MS:  # an instant t_ms alone would floor: exact
            extra["at_ns"] = at_ns
        if ev == "end":  # where the game sits in the tournament, however it ended
            extra.update(scene.record_fields(t_ns))
            extra["summary"] = extra["summary"] | scene.summary_fields(t_ns)
        sides = {side: self.accounting.side_state(game, side, t_ns) for side in SIDES}
        record = Record(
            self.seq, ev, game.since_start_ms(t_ns), game.state, game.run, sides["A"], sides["B"], extra
        )
        self._out.append(record)
        self.seq += 1
        self.last_t_ns = t_ns

    def flush(self):
        """The records made since the last flush, oldest first."""
        out, self._out = self._out, []
        return out
