"""A disk fault at the director pauses the hall's writing; it does not stop the hall (docs/hall.md,
"What the hall trusts").

When the store cannot write (a full disk, EIO, a folder gone read-only), the message that failed
and every one after it are held in memory, unacknowledged, so the broker still holds them too, and
written in order once a retry succeeds. The page and the console name the file and the error.
Held messages are bounded twice: the broker sends at most its in-flight window (200) of
unacknowledged records, and past `MAX_HELD` a message is let go unacknowledged (the broker sends it
again when the director reconnects, and the clock's journal holds it for a resend).
"""

import os

#: how often a held write is tried again
RETRY_S = 1.0
#: messages held at most
MAX_HELD = 5000


class DiskFault:
    """The messages held for a disk fault, and what to say of it."""

    def __init__(self):
        self.held = []
        self.error = None  # (path, the error's text) while writing fails
        self.next_try = 0.0
        self.let_go = 0  # messages past MAX_HELD, left unacknowledged

    def holding(self):
        """Whether writes wait for the disk now (every new message is held behind the others)."""
        return self.error is not None

    def fault(self, error, path, now):
        """A write failed with `error` (an OSError) on `path`: hold from here, try again later."""
        self.error = (error.filename or path, os.strerror(error.errno) if error.errno else str(error))
        self.next_try = now + RETRY_S

    def hold(self, message):
        if len(self.held) < MAX_HELD:
            self.held.append(message)
        else:
            self.let_go += 1

    def retry(self, now):
        """The held messages to write again now (in order), or none if it is not yet time."""
        if self.error is None or now < self.next_try:
            return []
        self.error = None  # tried again: a new failure holds them again
        held, self.held = self.held, []
        return held

    @property
    def text(self):
        """What the page and the console say while writing fails, else None."""
        if self.error is None:
            return None
        path, why = self.error
        return (
            f"disk: cannot write {path}: {why}; {len(self.held)} records held, "
            f"written when it recovers (trying every {RETRY_S:g} s)"
        )
