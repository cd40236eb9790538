"""The clock's side of sealed commands (wire/seal.py): its key, and the last counter it took, kept
on disk (`hall.counter` in the state directory, written and synced before the command is done),
so that a command replayed after a restart is refused too."""

import logging
import os
import time

from ...wire.protocol import CommandError
from ...wire.seal import SealError, key_bytes, unseal
from ...wire.segments import replace_file

log = logging.getLogger("tileclock.device.links.hall")


class CommandSeal:
    """Opens the sealed commands of the hall for `clock_id`, with `key` (64 hex digits)."""

    def __init__(self, key, clock_id, state_dir=None):
        self.key = key_bytes(key)
        self.clock_id = clock_id
        self.path = os.path.join(state_dir, "hall.counter") if state_dir else None
        self.last = self._load()

    def open(self, raw):
        """The command line inside the sealed line `raw` (bytes), its counter taken and saved; a
        CommandError naming why the clock refuses it (the handler records it as an `error`)."""
        try:
            counter, line = unseal(self.key, self.clock_id, raw, self.last)
        except SealError as error:
            raise CommandError(str(error)) from None
        self.last = counter
        self._save(counter)
        return line

    def _load(self):
        if self.path is None:
            return 0
        try:
            with open(self.path, encoding="ascii") as file:
                return int(file.read().strip())
        except FileNotFoundError:
            return 0
        except (OSError, ValueError, UnicodeDecodeError) as error:
            # unreadable: refuse everything up to now rather than take a replay (the director's
            # counters are microseconds since 1970, so its next command is above this)
            log.warning("hall: %s unreadable (%s): commands before now are refused", self.path, error)
            return time.time_ns() // 1000

    def _save(self, counter):
        if self.path is None:
            return
        try:
            replace_file(self.path, f"{counter}\n".encode("ascii"))
        except OSError as error:  # the card failing: the counter in memory still holds until a restart
            log.warning("hall: cannot save %s (%s)", self.path, error)
