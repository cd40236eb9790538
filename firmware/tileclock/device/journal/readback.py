"""Start-up: the journal read back, from the newest segment to the last game's start, and repaired.

A damaged segment costs its damaged records alone: its good lines are written
back and its bytes kept aside (`damaged/`), never deleted; if the disk will not
take the repair it waits, and nothing is written into that segment meanwhile.
A single-file journal of an earlier version is split into segments on first start
(`takeover.py`: streamed, in constant memory, and a kill meanwhile loses nothing).
"""

import os
from dataclasses import dataclass, field

from ...clock.history import opening_lost, reaches_last_game
from .numbering import HEADROOM

#: no framed record is shorter: a damaged segment of N bytes held at most N / this many records
MIN_RECORD_BYTES = 64


@dataclass
class ReadBack:
    """What a start found on reading the journal's folder back (`read_back`)."""

    #: the seq above every one the journal may have held
    used_below: int = 0
    #: the seq after the newest good record of the newest segment
    good_next: int = 0
    #: whether new records may go on in the newest segment (it could be read, and repaired if it
    #: had to be): then `size` bytes of it are good, and `has_game` says whether it holds a game
    writable: bool = False
    size: int = 0
    has_game: bool = False
    #: the records a restart needs: the last game's, from its `new_game` (or the `boot` before it)
    records: list = field(default_factory=list)


def read_back(store):
    """Read `store`'s segments (a `SegmentStore`, listed) from the newest back until the last
    game's start, repairing damaged ones."""
    found = ReadBack()
    records = []
    for first in reversed(store.segments):
        segment = store.load(first)
        if first == store.segments[-1]:
            found.used_below = _used_below(store, first, segment, found)
        if segment is None:
            continue
        if first == store.segments[-1]:
            found.writable = segment.repaired
            found.has_game = any(r["ev"] != "boot" for _, _, r in segment.entries)
            found.size = len(segment.clean_bytes) if segment.needs_repair else len(segment.data)
        records[:0] = [record for _, _, record in segment.entries]
        if reaches_last_game(records) or opening_lost(records, first):
            break  # (a game whose opening is damaged still begins at its segment)
    found.records = records
    return found


def _used_below(store, first, segment, found):
    """Above every seq the newest segment may have held: after its last good record, or, with
    lines damaged or unreadable, after as many records as its bytes could have held."""
    good = found.good_next = segment.entries[-1][0] + 1 if segment is not None and segment.entries else first
    if segment is not None and not segment.problems:
        return good
    try:
        size = len(segment.data) if segment is not None else os.path.getsize(store.path(first))
    except OSError:
        size = HEADROOM * MIN_RECORD_BYTES
    return max(good, first + size // MIN_RECORD_BYTES + 1)
