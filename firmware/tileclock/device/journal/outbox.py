"""The journal's outbox: this run's records in memory, in seq order, and how many are not on disk yet.

The links send from it (what has been through a write is settled), the journal
writes from it (the unwritten ones, a wake's together), and it keeps the newest
on-disk records for the line to send from without reading the card. While the
disk does not take records at most `backlog` wait here; older ones are given up,
and `take_lost` says which, once.
"""

from collections import deque
from itertools import islice

#: records already on disk also kept in memory, for the line to send from
RECENT = 2_000


class Outbox:
    """(seq, line, segment) of this run's records, oldest first. `backlog`: how many may wait
    unwritten before the oldest of them are given up."""

    def __init__(self, backlog, recent=RECENT):
        self.backlog = backlog
        self.recent = recent
        self._entries = deque()
        self._unwritten = 0  # how many of the newest are not on disk yet
        self._unsettled = 0  # how many of them have not been through a write yet (the links wait)
        self._urgent = 0  # how many of the unwritten must be fsynced before they go
        self._lost = None  # [first, last] seqs given up while the disk failed, not yet reported
        self._active = None  # the segment new records go to
        self._active_has_game = False  # it holds more than `boot` records: a `new_game` starts another

    # ------------------------------------------------------------ where records go

    def resume(self, segment, has_game):
        """New records go on in `segment` (read at start), which holds a game already or not."""
        self._active, self._active_has_game = segment, has_game

    def leave_segment(self):
        """New records start another segment (the one written is not to be written into)."""
        self._active = None

    def place(self, seq, ev):
        """The segment record `seq` (event `ev`) goes to: the active one, or a new one from `seq`
        (the first record, or a `new_game` after a game)."""
        if self._active is None or (ev == "new_game" and self._active_has_game):
            self._active, self._active_has_game = seq, False
        self._active_has_game |= ev != "boot"
        return self._active

    # ------------------------------------------------------------ keeping them

    def keep(self, seq, line, segment=None):
        """Keep a record that needs no writing (a journal in memory keeps every one)."""
        self._entries.append((seq, line, segment))

    def add(self, seq, line, segment, urgent):
        """Keep a record to be written (`urgent`: it must be fsynced before it goes)."""
        self._entries.append((seq, line, segment))
        self._unwritten += 1
        self._unsettled += 1
        self._urgent += urgent
        self._trim()

    def _trim(self):
        while len(self._entries) - self._unwritten > self.recent:
            self._entries.popleft()
        while self._unwritten > self.backlog:
            if len(self._entries) > self._unwritten:
                self._entries.popleft()
                continue
            seq = self._entries.popleft()[0]
            self._unwritten -= 1
            self._lost = [self._lost[0] if self._lost else seq, seq]

    # ------------------------------------------------------------ reading them

    @property
    def oldest(self):
        """The oldest seq held in memory, or None."""
        return self._entries[0][0] if self._entries else None

    def line(self, seq):
        """The framed line of record `seq` if it is held in memory, else None."""
        if self._entries:
            index = seq - self._entries[0][0]
            if 0 <= index < len(self._entries):
                return self._entries[index][1]
        return None

    def newest_first(self):
        """The lines held, newest first."""
        return (line for _, line, _ in reversed(self._entries))

    # ------------------------------------------------------------ writing them

    @property
    def unwritten(self):
        """How many records wait to be written."""
        return self._unwritten

    @property
    def unsettled(self):
        """How many records have not been through a write yet (the links do not send them)."""
        return self._unsettled

    @property
    def urgent(self):
        """Whether a record waiting must be fsynced before it goes (not only checkpoints)."""
        return self._urgent > 0

    def settle(self):
        """Every record kept so far goes through a write now (whether the disk takes it or not)."""
        self._unsettled = 0

    def waiting(self):
        """(seq, line, segment) of each record not yet written, oldest first."""
        return list(islice(self._entries, len(self._entries) - self._unwritten, None))

    def written(self, count):
        """The oldest `count` records waiting are on disk now."""
        self._unwritten -= count

    def all_written(self):
        """Every record waiting is on disk."""
        self._urgent = 0

    def take_lost(self):
        """[first, last] of the seqs given up since this was last asked (while the disk failed), or None."""
        lost, self._lost = self._lost, None
        return lost
