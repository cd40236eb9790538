"""The last seq the hall's broker acknowledged, kept on disk (`hall.acked` in the state directory),
so that every start publishes again from the record after it. Written at most once a second.

Owned by a `HallLink` (hall_link.py), which keeps the acknowledged seq itself (under its `_lock`)
and hands this file a way to read it; this owns only the file, its timer and what it last wrote.
"""

import logging
import os
import threading
import time

from ...wire.segments import replace_file

# the uplink's own logger, so its warnings read as one part's whichever module says them
log = logging.getLogger("tileclock.device.links.hall")

#: the acknowledged seq goes to disk at most this often
SAVE_EVERY_S = 1.0


class AckedFile:
    """`hall.acked` in `state_dir` (None: nothing kept), written from `acked()` at most once a second."""

    def __init__(self, state_dir, acked):
        self.path = os.path.join(state_dir, "hall.acked") if state_dir else None
        self._acked = acked  # () -> the seq to write, read under its owner's lock
        self._lock = threading.Lock()  # the timer's bookkeeping
        self._write_lock = threading.Lock()  # the timer's thread and `close` may both save
        self._timer = None
        self._saved_at = 0.0
        self.saved = None

    def load(self, journal):
        """The last seq the broker acknowledged before this start, or the one before `journal`'s
        first (send the whole journal)."""
        self.saved = self._load(journal)
        return self.saved

    def _load(self, journal):
        if self.path is None:
            return journal.first_seq - 1
        try:
            with open(self.path, encoding="ascii") as file:
                acked = int(file.read().strip())
        except FileNotFoundError:
            return journal.first_seq - 1
        except (OSError, ValueError, UnicodeDecodeError) as error:
            log.warning("hall: %s unreadable (%s): sending the whole journal again", self.path, error)
            return journal.first_seq - 1
        # a journal started afresh has nothing above its own end
        return min(max(acked, journal.first_seq - 1), journal.next_seq - 1)

    def schedule(self):
        """Save within `SAVE_EVERY_S` (one timer at a time)."""
        with self._lock:
            if self._timer is not None:
                return
            delay = max(0.0, self._saved_at + SAVE_EVERY_S - time.monotonic())
            self._timer = threading.Timer(delay, self.save)
            self._timer.daemon = True
            self._timer.start()

    def cancel(self):
        """Stop the timer, saving nothing (what a crash leaves)."""
        with self._lock:
            timer = self._timer
        if timer:
            timer.cancel()

    def close(self):
        """Stop the timer and save now."""
        self.cancel()
        self.save()

    def save(self):
        with self._write_lock:
            with self._lock:
                self._timer = None
            acked = self._acked()
            if self.path is None or acked == self.saved:
                return
            try:
                replace_file(self.path, f"{acked}\n".encode("ascii"))
            except OSError as error:
                log.warning(
                    "hall: cannot save %s (%s); records after %d may be sent again",
                    self.path,
                    error,
                    self.saved,
                )
                return
            self.saved = acked
            self._saved_at = time.monotonic()
