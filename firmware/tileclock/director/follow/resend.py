"""When to ask a clock again for records it is missing: once, then only when nothing has moved.

A fresh collector on a clock with a long journal is missing thousands of
records; on a slow line they take minutes to come. Asking again each time the
first missing seq moves would have the clock send the remainder over and over
(a resend storm). So a gap is asked for once; while records keep arriving in
order nothing more is asked; only after `FIRST_WAIT_S` without progress is the
(now smaller) gap asked for again, and each time again without progress the
wait doubles, up to `MAX_WAIT_S`.
"""

FIRST_WAIT_S = 2.0
MAX_WAIT_S = 30.0


class ResendPlan:
    """The resend requests for one clock."""

    def __init__(self):
        self.asked = None  # (first, last) of the request outstanding
        self.asked_count = 0
        self._progress_at = None  # when the first missing seq last moved
        self._seen = None  # the first missing seq then
        self._wait_s = FIRST_WAIT_S

    def due(self, expected, gap, now):
        """The (first, last) to ask for now, or None. `gap` is the clock's first missing run
        (or None), `expected` the first seq not yet in order."""
        if gap is None:
            self.asked = None
            self._wait_s = FIRST_WAIT_S
            return None
        if expected != self._seen:
            self._seen, self._progress_at = expected, now
            self._wait_s = FIRST_WAIT_S
        if self.asked is not None and expected <= self.asked[1]:
            if now - self._progress_at < self._wait_s:
                return None  # it is coming: wait
            self._wait_s = min(self._wait_s * 2, MAX_WAIT_S)
            self._progress_at = now
        self.asked = gap
        self.asked_count += 1
        return gap
