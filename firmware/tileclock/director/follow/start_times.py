"""Starting times the director gives the clock on one port for one game: a player's medical extra
time (NASPA III.A.3), `tileclock collect PORT --time PORT A=30:00`.

The clock's `set A=30:00` is for its current game while nobody has pressed (`ready`), and for the
next game otherwise (docs/protocol.md, "The time of day, the round and the table"). So the
collector sends it only when the clock says it is ready (its answer to `status`, or a record as it
happens), at most once each time the port opens or the clock starts, until the clock's `set`
record shows it took the times; never after that, so a cable put back or a power cut mid-game
never gives the next game the extra time as well.
"""

from ...clock.timecode import NS_PER_S, format_clock, parse_clock_time
from ...wire.protocol import CommandError, parse_command, with_crc
from ...wire.records import SIDES


class StartTimes:
    """The starting times still to give the clock on one port (`times`: side -> seconds)."""

    def __init__(self, times):
        self.times = dict(sorted(times.items()))
        self.words = " ".join(f"{side}={format_clock(s)}" for side, s in self.times.items())  # A=30:00
        self.command = f"set {self.words} by=cli"  # the audit trail: who gave the extra time
        self.taken = False  # the clock recorded a `set` with these times
        self._sent = False  # sent since the port opened or the clock last started

    def again(self):
        """The port opened, or the clock started again: what was sent may not have got there."""
        self._sent = False

    def due(self, state):
        """The command (without its CRC) to send now that the clock is in `state`, or None."""
        if self.taken or self._sent or state != "ready":
            return None
        self._sent = True
        return self.command

    def heard(self, record):
        """A record the clock made just now: a notice for the director when it is the `set` that
        took the times (for this game, or, if a press came first, for the next), else None."""
        wanted = {side: s * 1000 for side, s in self.times.items()}
        if self.taken or record["ev"] != "set" or record.get("time_ms") != wanted:
            return None
        self.taken = True
        which = "this game" if record.get("applies") == "this" else "the NEXT game (a press came first)"
        return f"{self.words} taken for {which} (seq {record['seq']})"


def _shown(text):
    """`text` as typed, or its repr if anything in it is unprintable (a newline): errors stay one line."""
    return text if text.isprintable() else repr(text)


def read_start_times(items, ports):
    """Port -> `StartTimes` from `--time PORT SIDE=m:ss` pairs; ValueError names a bad one."""
    given = {}
    for port, item in items:
        where = f"--time {_shown(port)} {_shown(item)}"
        if port not in ports:
            raise ValueError(f"{where}: {_shown(port)} is not one of the ports to collect from")
        side, _, text = item.partition("=")
        if side not in SIDES or not text:
            raise ValueError(f"{where}: expected A=m:ss or B=m:ss")
        if side in given.setdefault(port, {}):
            raise ValueError(f"{where}: {side}'s time on {_shown(port)} is already given")
        try:
            given[port][side] = parse_clock_time(text) // NS_PER_S
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    plans = {port: StartTimes(times) for port, times in given.items()}
    for port, plan in plans.items():
        try:
            parse_command(with_crc(plan.command).encode("ascii"))  # what the clock will take
        except CommandError as error:
            raise ValueError(f"--time {_shown(port)}: {error}") from None
    return plans
