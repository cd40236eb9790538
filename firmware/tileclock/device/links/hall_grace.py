"""A broken connection to the hall's broker, and its grace: it shows as a fault (`failing`) only
once it has lasted `DOWN_GRACE_S` (Wi-Fi blips are not news), and the loop is asked to wake then
(`wake_ns`) with no timer of its own.

Owned by a `HallLink` (hall.py), whose paho callbacks say when the connection came (`up`) or went
(`down`), and why; this owns only since when it has been down, why, and the wake it asked for.
"""

import threading
import time

from ...clock.timecode import NS_PER_S

#: a broken connection shows as a fault only once it has lasted this long (Wi-Fi blips are not news)
DOWN_GRACE_S = 5.0
#: how long after the grace the loop wakes to show the fault (a hair after: `failing` is then sure)
GRACE_MARGIN_S = 0.05


class DownGrace:
    """Since when the broker has been out of reach and why (`reason`, a word for the fault), down
    from the start ("not connected yet"); `now_ns` is the loop's time, which the wake counts on."""

    def __init__(self, now_ns=time.monotonic_ns):
        self._now_ns = now_ns
        self._lock = threading.Lock()  # the wake asked for, shared by paho's thread and the loop's
        self.since = time.monotonic()
        self.reason = "not connected yet"
        self._due_ns = None  # when (the loop's time) a broken connection's fault falls due, or None

    @property
    def failing(self):
        """Why the broker is out of reach, once that has lasted `DOWN_GRACE_S`; else None."""
        since = self.since
        if since is None or time.monotonic() - since < DOWN_GRACE_S:
            return None
        return self.reason

    def wake_ns(self, woke_ns):
        """When the loop must wake to show the fault, having last woken at `woke_ns`; else None."""
        with self._lock:
            if self._due_ns is not None and woke_ns >= self._due_ns:
                self._due_ns = None  # the loop has woken since: `failing` was asked then
            return self._due_ns

    def ask_wake(self):
        """Have the loop wake once the connection has been down `DOWN_GRACE_S` (`wake_ns`)."""
        with self._lock:
            self._due_ns = self._now_ns() + int((DOWN_GRACE_S + GRACE_MARGIN_S) * NS_PER_S)

    def up(self):
        """The connection came: back within the grace, there is no fault to show."""
        self.since = None
        with self._lock:
            self._due_ns = None

    def down(self, reason):
        """The connection went, for `reason`: whether it was up until now (its grace then begins,
        and the loop must wake to take the new deadline)."""
        self.reason = reason
        if self.since is not None:
            return False
        self.since = time.monotonic()
        self.ask_wake()
        return True
