"""Seq numbering across starts: seqs are never used twice, even after a stop without closing.

A durable mark (`reserved-N`, in the journal's folder) is kept `HEADROOM` seqs
ahead of the newest record, so a start goes on from it if the last run stopped
without closing the journal; a mark in a folder that lasts as long as the
boot (`runtime`) lets a restart in the same boot go on exactly where the last
run stopped. Where neither can be read or moved, a start goes on from a block
chosen at random far above any used (`far_block`). A `fault` says what was skipped.
"""

import os
import secrets

from ...wire import segments as files

#: seqs reserved ahead of the newest record (at least what the journal's backlog can hold)
HEADROOM = 10_000
#: where the used seqs cannot be known or marked (see `far_block`): a run numbers from one of
#: these blocks, chosen at random below the largest seq a segment's 12-digit name holds
JUMP_BLOCK = 10**7
LAST_SEQ = 10**12 - 1

JUMPED = "numbering goes on from a block of seqs chosen at random, far above any a start can have used"


class Numbering:
    """The journal's seq marks in `directory`: the durable reservation, and this boot's mark in
    `runtime` (a folder that lasts as long as the boot, and the boot's id; None: no such folder).
    `note(detail, extra)` says what was skipped (the journal's faults)."""

    def __init__(self, directory, runtime, note):
        self.directory = directory
        self.runtime = runtime
        self.note = note
        #: the seq the durable mark reserves up to (the next start goes on from it after a stop
        #: without closing)
        self.reserved = 0

    def read(self):
        """Read the durable mark (at start). Raises OSError if the folder cannot be read."""
        self.reserved = files.read_mark(self.directory, files.RESERVED) or 0

    def note_skipped(self, start, next_seq, why):
        """Say that the seqs from `start` to `next_seq` are never used, and why."""
        if next_seq > start:
            last = next_seq - 1
            self.note(f"seq {start}-{last} skipped: {why}", {"skipped": [start, last]})

    def reserve(self, next_seq):
        """Keep the durable mark `HEADROOM` ahead of `next_seq` (moved by half of it at a time).
        Raises OSError if it cannot be moved."""
        if next_seq + HEADROOM // 2 > self.reserved:
            files.set_mark(self.directory, files.RESERVED, next_seq + HEADROOM)
            self.reserved = next_seq + HEADROOM

    def close(self, next_seq):
        """A clean stop: the next start goes on from `next_seq` (no seqs skipped). Raises OSError."""
        files.set_mark(self.directory, files.RESERVED, next_seq)

    def _runtime_path(self):
        folder, _boot_id = self.runtime
        return os.path.join(folder, "journal-sent")

    def runtime_mark(self):
        """The highest seq a run in this boot may have sent, if a run in this boot left one."""
        if self.runtime is None:
            return None
        try:
            with open(self._runtime_path()) as file:
                boot_id, seq = file.read().split()
            return int(seq) if boot_id == self.runtime[1] else None
        except (OSError, ValueError):
            return None

    def set_runtime_mark(self, seq):
        """Mark `seq` as the highest this run may have sent (for a restart in this boot)."""
        if self.runtime is None:
            return
        path = self._runtime_path()
        try:
            with open(path + ".new", "w") as file:
                file.write(f"{self.runtime[1]} {seq}\n")
            os.replace(path + ".new", path)  # memory only (tmpfs): no fsync needed
        except OSError:
            try:
                os.unlink(path)  # better no mark than a wrong one: the reservation then holds
            except OSError:
                pass


def far_block(above):
    """The first seq of a block no other start can have used: where a start can neither read nor
    move the mark of used seqs, a start in a later boot would go on from the same place, so each
    goes on from a block of `JUMP_BLOCK` seqs chosen at random (one of some 100,000) above `above`
    and well clear of it, within the 12 digits of a segment's name."""
    low, high = above // JUMP_BLOCK + 2, (LAST_SEQ + 1) // JUMP_BLOCK - 1
    if low > high:
        return above  # (over 10**12 records: not in a clock's life)
    return (low + secrets.randbelow(high - low + 1)) * JUMP_BLOCK
