"""The last seq the hall's broker acknowledged, kept on disk (`hall.acked` in the state directory),
so that every start publishes again from the record after it. Written at most once a second.

A mixin of `HallLink` (hall_link.py); the ack bookkeeping it reads is under the link's `_lock`.
"""

import logging
import os
import threading
import time

# the uplink's own logger, so its warnings read as one part's whichever module says them
log = logging.getLogger("tileclock.device.hardware.hall_link")

#: the acknowledged seq goes to disk at most this often
SAVE_EVERY_S = 1.0


class AckedOnDisk:
    """Loads and saves `HallLink.acked`."""

    def _load_acked(self):
        """The last seq the broker acknowledged before this start, or -1 (send the whole journal)."""
        if self._acked_path is None:
            return self.journal.first_seq - 1
        try:
            with open(self._acked_path, encoding="ascii") as file:
                acked = int(file.read().strip())
        except FileNotFoundError:
            return self.journal.first_seq - 1
        except (OSError, ValueError, UnicodeDecodeError) as error:
            log.warning("hall: %s unreadable (%s): sending the whole journal again", self._acked_path, error)
            return self.journal.first_seq - 1
        # a journal started afresh has nothing above its own end
        return min(max(acked, self.journal.first_seq - 1), self.journal.next_seq - 1)

    def _schedule_save(self):
        with self._lock:
            if self._save_timer is not None:
                return
            delay = max(0.0, self._saved_at + SAVE_EVERY_S - time.monotonic())
            self._save_timer = threading.Timer(delay, self._save_acked)
            self._save_timer.daemon = True
            self._save_timer.start()

    def _save_acked(self):
        with self._save_lock:  # the timer's thread and `close` may both save
            self._save_acked_now()

    def _save_acked_now(self):
        with self._lock:
            self._save_timer = None
            acked = self.acked
        if self._acked_path is None or acked == self._saved:
            return
        temporary = self._acked_path + ".new"
        try:
            with open(temporary, "w", encoding="ascii") as file:
                file.write(f"{acked}\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self._acked_path)
        except OSError as error:
            log.warning(
                "hall: cannot save %s (%s); records after %d may be sent again",
                self._acked_path,
                error,
                self._saved,
            )
            return
        self._saved = acked
        self._saved_at = time.monotonic()
