"""Contact debouncing from raw, timestamped edges: decides whether a press happened, never when.

A press or release is taken on its first edge, at that edge's own timestamp,
when the contact had been quiet for a whole window before it. Edges that come
within a window of the previous one are contact bounce: they make nothing on
their own, and once the contact has been quiet for a window the debounced level
is brought into line with the raw level (the case of a real change hidden in a
bounce train), dated at the first edge that moved towards it.
"""


class Debouncer:
    """One button's debounced level, fed raw edges in time order."""

    def __init__(self, window_ns):
        self.window_ns = window_ns
        self.pressed = False  # debounced level
        self._raw = False
        self._last_edge_ns = None
        self._pending_since_ns = None

    def edge(self, down, t_ns):
        """Feed one raw edge; returns the debounced transition it makes, `(down, t_ns)`, or None."""
        if down == self._raw:
            return None  # a repeated level carries no new information
        quiet = self._last_edge_ns is None or t_ns - self._last_edge_ns >= self.window_ns
        self._raw = down
        self._last_edge_ns = t_ns
        if quiet and down != self.pressed:
            self.pressed = down
            self._pending_since_ns = None
            return down, t_ns
        if down != self.pressed and self._pending_since_ns is None:
            self._pending_since_ns = t_ns
        return None

    @property
    def closed_since(self):
        """Since when the contact has been closed without a break (its last edge), or None if open."""
        return self._last_edge_ns if self._raw else None

    def deadline(self):
        """When the contact will have been quiet for a window after a bounce train, or None."""
        if self._pending_since_ns is None:
            return None
        return self._last_edge_ns + self.window_ns

    def settle(self, t_ns):
        """At or after `deadline()`: the transition a bounce train hid, `(down, t_ns)`, or None."""
        deadline = self.deadline()
        if deadline is None or t_ns < deadline:
            return None
        since, self._pending_since_ns = self._pending_since_ns, None
        if self._raw == self.pressed:
            return None
        self.pressed = self._raw
        return self._raw, since
