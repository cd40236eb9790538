"""The clock's schedule: inputs waiting to be applied in time order, and how far the game has
been taken. A part of the clock's `Timeline` (timeline.py), which owns it; it holds no game state.

Everything up to an instant is taken in time order: contact timers first (they only make inputs),
then the game's timers and the waiting inputs, never past a press still pending (a timer first on
a tie).
"""

import heapq
import itertools

from .timers import earliest


class Schedule:
    """The inputs waiting to be applied, in time order, and how far the game has been taken."""

    def __init__(self):
        #: how far the game has been taken (never past a pending press)
        self.done_ns = None
        self._queue = []  # heap of (t_ns, order, action, args, kwargs)
        self._order = itertools.count()

    def next_order(self):
        """The next place in the order of arrival (edges at one instant are taken in that order)."""
        return next(self._order)

    def put(self, t_ns, action, *args, order=None, **kwargs):
        """`action(t, *args, **kwargs)` to be applied at `t_ns`, in time order with everything else."""
        order = next(self._order) if order is None else order
        heapq.heappush(self._queue, (t_ns, order, action, args, kwargs))

    def clear(self):
        """Drop every waiting input."""
        self._queue = []

    def run(self, t_ns, contacts, timers, fire, transition):
        """Take everything up to `t_ns`: `contacts` (a `contacts.Contacts`) make button changes,
        each applied as `transition(t, button, down)`; `timers()` the game's `Timer`s from
        `done_ns`, each handed to `fire(timer)` when due."""
        while True:
            contact = earliest(contacts.timers())
            if contact is not None and contact.at_ns <= t_ns:
                for button, down, at, order in contacts.fire(contact, self.done_ns):
                    self.put(at, transition, button, down, order=order)
                continue
            safe = contacts.safe_until()
            limit = t_ns if safe is None else min(t_ns, safe[0])
            timer = earliest(timers())
            waiting = self._queue[0] if self._queue else None
            if timer is not None and timer.at_ns <= limit and (waiting is None or timer.at_ns <= waiting[0]):
                self.done_ns = max(self.done_ns, timer.at_ns)
                fire(timer)
            elif waiting is not None and waiting[0] <= limit and (safe is None or waiting[:2] < safe):
                at, _, action, args, kwargs = heapq.heappop(self._queue)
                self.done_ns = max(self.done_ns, at)
                action(self.done_ns, *args, **kwargs)
            else:
                break
        if contacts.safe_until() is None and not self._queue:
            self.done_ns = max(self.done_ns, t_ns)
