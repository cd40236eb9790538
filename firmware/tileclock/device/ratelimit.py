"""A budget for answers the line can provoke, so that noise on it cannot flood the card."""

from ..clock.timecode import NS_PER_S


class AnswerBudget:
    """At most `burst` answers at once, then one every `interval_ns`; the rest are counted as dropped.

    The count goes out with the next answer allowed, or on its own when the budget allows one
    (`due_ns`), so the director always learns how many answers it did not get. The budget is
    kept in whole nanoseconds of credit, so `due_ns` is exact.
    """

    def __init__(self, burst=5, interval_ns=10 * NS_PER_S):
        self.interval_ns = interval_ns
        self.most_ns = burst * interval_ns
        self.credit_ns = self.most_ns
        self.updated_ns = None
        self.dropped = 0

    def allow(self, now_ns):
        """Whether an answer may go out at `now_ns` (if not, it is counted as dropped)."""
        if self.updated_ns is not None:
            self.credit_ns = min(self.most_ns, self.credit_ns + max(0, now_ns - self.updated_ns))
        self.updated_ns = now_ns if self.updated_ns is None else max(self.updated_ns, now_ns)
        if self.credit_ns >= self.interval_ns:
            self.credit_ns -= self.interval_ns
            return True
        self.dropped += 1
        return False

    def take_dropped(self):
        """How many answers were dropped since the last call."""
        dropped, self.dropped = self.dropped, 0
        return dropped

    def due_ns(self):
        """When an answer may next go out, if dropped ones wait to be counted; else None."""
        if not self.dropped or self.updated_ns is None:
            return None
        return self.updated_ns + max(0, self.interval_ns - self.credit_ns)
