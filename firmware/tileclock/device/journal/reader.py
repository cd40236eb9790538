"""A journal read back and nothing else: for tests, the benchmarks and tools that read a card.

Opening a `Journal` is the clock's start-up: it repairs damaged segments and
moves the seq reservation mark, with an fsync of the folder (`numbering.py`).
A reader does none of that. It lists the segments and reads their good lines
as they are, and it never creates, renames, writes or fsyncs anything. So it
may read the journal of a clock that is running (it sees every record that
has been through a write) or of a card taken out of one, and leave it exactly
as it was.
"""

import os
from bisect import bisect_right

from ...wire import segments as files


class JournalReader:
    """The records of the journal folder `directory`, read-only. Building it reads nothing; each
    call reads the folder as it is then (a running clock may add, repair or prune meanwhile)."""

    def __init__(self, directory):
        self.directory = directory

    def read(self, first=0, last=None):
        """(seq, line) of every good record from `first` to `last` (None: the newest), streamed a
        segment at a time. Damaged lines are left out, as the clock's own read leaves them out; a
        folder not made yet holds nothing. OSError if the folder cannot be listed."""
        for seq, line, _ in self._entries(first, last):
            yield seq, line

    def records(self, first=0):
        """Every good record from `first` on, decoded."""
        return [record for _, _, record in self._entries(first, None)]

    @property
    def lines(self):
        """Every good framed line, oldest first."""
        return [line for _, line in self.read()]

    def _entries(self, first, last):
        try:
            firsts = files.list_segments(self.directory)
        except FileNotFoundError:
            return
        seq = first
        for segment in firsts[max(0, bisect_right(firsts, first) - 1) :]:
            try:
                for entry in files.iter_lines(os.path.join(self.directory, files.segment_name(segment))):
                    if last is not None and entry[0] > last:
                        return
                    if entry[0] >= seq:  # (each seq once, in order, as `Journal.read` gives them)
                        yield entry
                        seq = entry[0] + 1
            except FileNotFoundError:
                continue  # pruned by the running clock since the listing: its records are gone
