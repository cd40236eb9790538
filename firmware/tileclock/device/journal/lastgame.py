"""The last game as start-up read it back: held until a restart takes it up, and what it left out.

A start reads the journal back only to the last game's start (`readback.py`);
those records wait here until the clock takes them up (`recovery_records`, once),
with the first seq of that game, which the hall's retained state starts from.
A record the clock could not play back is damage like any other (`set_aside`):
its segment's bytes are kept aside, the segment is written back without it,
and a note says so. A journal in memory has nothing read back: its last game
is found among the records the outbox holds.
"""

from ...clock.history import reaches_last_game
from ...wire import segments as files
from ...wire.protocol import unframe


class LastGame:
    """The last game's records as read at start, until a restart takes them, and its first seq.

    Handed the journal's `directory` (None: in memory), the `store`, the `writer` and the
    `outbox` it repairs into, and `note` for the faults it finds."""

    def __init__(self, directory, store, writer, outbox, note):
        self.directory = directory
        self.store = store
        self.writer = writer
        self.outbox = outbox
        self._note = note
        self._records = []  # the last game's records as read at start, until a restart takes them
        self.first_seq = None

    def found(self, records):
        """What start-up read back (`ReadBack.records`): the last game's records, oldest first."""
        self._records = records
        self.first_seq = records[0]["seq"] if records else None

    def take(self):
        """The records a restart needs (the last game's, from its `new_game`): read from disk at
        start, once, or (in memory) found among the records held."""
        if self.directory is None:
            newest_first = []
            for line in self.outbox.newest_first():
                newest_first.append(unframe(line))
                if newest_first[-1]["ev"] in ("new_game", "boot") and reaches_last_game(newest_first[::-1]):
                    break
            return newest_first[::-1]
        records, self._records = self._records, []
        return records

    def set_aside(self, unplayable):
        """Records a start could not play back (`(seq, why)` each): their segment's bytes kept
        aside, the segment written back without them, and a note says so."""
        whys = dict(unplayable)
        if not whys:
            return
        if self.directory is None or self.store.blind:
            for seq, why in whys.items():
                self._note(f"seq {seq} left out: {why}", {})
            return
        self.store.forget_cache()
        for first in reversed(self.store.segments):  # the last game's, newest first
            if first > max(whys):
                continue
            try:
                segment = files.Segment(self.store.path(first))
            except OSError as error:
                self._note(f"{files.segment_name(first)} cannot be read ({error.strerror})", {})
                break
            if segment.reject(whys):
                self.store.repair(segment, whys)
                if first == self.writer.segment and segment.repaired:
                    self.writer.resume(first, len(segment.clean_bytes))
                elif first == self.writer.segment:  # not repaired: new records start another segment
                    self.writer.leave()
                    self.outbox.leave_segment()
            if first <= min(whys):
                break
