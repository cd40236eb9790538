"""When to tell a clock its games are on file: the `ack` that lets its journal prune them.

Every way records reach the director (`collect`'s serial ports, the hall's
broker) tells the clock the same thing at the same moment: once a game has
ended and every record up to the last one taken is written to the store, the
clock is sent `ack SEQ` (SEQ the last of them). The clock marks as held only
the games its journal has closed up to there (docs/reliability.md,
"Retention"), so an `ack` never lets it prune a game still open.
"""


class AckPlan:
    """The `ack`s for the clocks heard one way (a port, the broker)."""

    def __init__(self):
        self._games = {}  # clock id -> games ended when its last `ack` was sent

    def due(self, log):
        """The command (without its CRC) to send the clock of `log` (a `ClockLog`) now, or None:
        `ack SEQ` once a game more has ended, SEQ the last record written before `log.expected`."""
        if log.games <= self._games.get(log.clock_id, 0):
            return None
        self._games[log.clock_id] = log.games
        return f"ack {log.expected - 1}"
