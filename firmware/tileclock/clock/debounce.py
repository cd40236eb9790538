"""Contact debouncing from raw, timestamped edges: decides whether a change happened, never when.

One rule for both directions (CLOCK_RULES §9, §10): a contact must stay at a new level for the
glitch window (`buttons.min_press_ms`, 5 ms) before the change counts. A change that counts is
dated at the first edge that left the old level, so bounce on the way in, however long, never
moves a press or a release. A pulse shorter than the window, open inside a hold or closed while
idle, ends where it began: it is chatter, and makes nothing at all.
"""


class Debouncer:
    """One contact's settled level, fed raw edges in time order.

    While the raw level has left the settled one and not yet held the window (or has come back
    and not yet held it either), the contact is *unsettled*: `unsettled` is the first edge
    that left the settled level, the instant a change would be dated at, and `deadline()` says
    when it will be decided.
    """

    def __init__(self, window_ns):
        self.window_ns = window_ns
        self.pressed = False  # the settled level
        self._raw = False
        self._last_edge_ns = None
        self._left_at_ns = None  # the first edge that left the settled level, while unsettled
        self._left_order = None  # that edge's place among every contact's edges (ties at one instant)

    @property
    def unsettled(self):
        """(t_ns, order) of the first edge of a change not yet decided, or None: the instant it would
        be dated at, and the edge's place among all edges (`order`, as `edge` was given it)."""
        return None if self._left_at_ns is None else (self._left_at_ns, self._left_order)

    def edge(self, down, t_ns, order=0):
        """Feed one raw edge (`order`: its place among all contacts' edges, for ties); returns the
        settled change it makes at once, `(down, t_ns, order)`, or None (only a zero window settles
        at once: otherwise `settle` decides at `deadline()`)."""
        if down == self._raw:
            return None  # a repeated level carries no new information
        self._raw = down
        self._last_edge_ns = t_ns
        if self._left_at_ns is None:
            self._left_at_ns, self._left_order = t_ns, order  # raw differs from settled only while unsettled
        return self.settle(t_ns) if self.window_ns == 0 else None

    def deadline(self):
        """When the raw level will have held a whole window since its last edge, or None if settled."""
        if self._left_at_ns is None:
            return None
        return self._last_edge_ns + self.window_ns

    def settle(self, t_ns):
        """At or after `deadline()`: the change decided, `(down, dated_at, order)`, or None for
        chatter (the contact came back to where it was)."""
        deadline = self.deadline()
        if deadline is None or t_ns < deadline:
            return None
        left_at, self._left_at_ns = self._left_at_ns, None
        if self._raw == self.pressed:
            return None
        self.pressed = self._raw
        return self._raw, left_at, self._left_order
