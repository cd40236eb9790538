"""The clock's side of sealed commands (wire/seal.py): its key, and the last counter it took, kept
on disk (`hall.counter` in the state directory, written and synced before the command is done),
so that a command replayed after a restart is refused too; and whether a command is fresh
(`CommandSeal.refusal`), by the time it was made against this clock's own wall clock.

A command is fresh within `wire.seal.FRESH_MS` of this clock's wall clock and, if it acts on a
game, made after the current game began: a `round over` captured while the clock was away and
published later is refused, and so is one for the game before this one. While the kernel says the wall
clock is not synchronised (chrony has not yet reached the laptop: a Pi has no real-time clock, so
it may be days out), the clock cannot judge a command's time, so it refuses every command that
changes a game or what it shows (`TIMED`), saying why: a director expects a refusal on the page
rather than a game ended by a command nobody can date, and can act at the board. The rest
(`status`, `resend`, `ack`) change no game and are harmless when replayed (an answer, records
sent again, a hold said again), so they are taken on their counter alone: the clock's records
still reach the hall while chrony catches up.
"""

import logging
import os
import time

from ...wire.protocol import CommandError
from ...wire.seal import SealError, judge, key_bytes, unseal
from ...wire.segments import replace_file

log = logging.getLogger("tileclock.device.links.hall")

#: the commands that act on the clock's game: made before the game began, they were for another
#: one; and taken only when the clock can judge when they were made
GAME_BOUND = ("adjust", "round_over", "new_game", "late", "reopen", "call", "set")
#: the commands that need a synchronised wall clock (`code` checks its own game besides)
TIMED = (*GAME_BOUND, "code")
#: why a fresh command is refused, as the `error` record's `refused` says it (the hall reads
#: `stale` and `before_game` as a command that never reached the game it was for: not delivered)
STALE, BEFORE_GAME, UNSYNCHRONISED = "stale", "before_game", "unsynchronised"


class CommandSeal:
    """Opens the sealed commands of the hall for `clock_id`, with `key` (64 hex digits)."""

    def __init__(self, key, clock_id, state_dir=None):
        self.key = key_bytes(key)
        self.clock_id = clock_id
        self.path = os.path.join(state_dir, "hall.counter") if state_dir else None
        self.last = self._load()

    def open(self, raw):
        """The `Sealed` command inside the sealed line `raw` (bytes), its counter taken and saved; a
        CommandError naming why the clock refuses it (the handler records it as an `error`). Its
        time is judged after (`refusal`): the counter of any command the director sealed may be
        taken, as the director's later ones are all above it."""
        try:
            sealed = unseal(self.key, self.clock_id, raw, self.last)
        except SealError as error:
            raise CommandError(str(error)) from None
        self.last = sealed.counter
        self._save(sealed.counter)
        return sealed

    @staticmethod
    def refusal(name, made_ms, now_ms, began_ms):
        """(why, detail) if command `name` made at `made_ms` is not to be taken at `now_ms` (this
        clock's wall clock, None while not synchronised) on a game that began at `began_ms` (the
        same clock; None: unknown); None to take it. `why` is `STALE`, `BEFORE_GAME` or
        `UNSYNCHRONISED`."""
        if now_ms is None:
            if name not in TIMED:
                return None
            return UNSYNCHRONISED, (
                "this clock's wall clock is not synchronised (chrony), so it cannot tell a fresh "
                "command from a stale one"
            )
        stale = judge(made_ms, now_ms)
        if stale is not None:
            return STALE, f"a stale command: {stale}"
        if name in GAME_BOUND and began_ms is not None and made_ms < began_ms:
            gone = (began_ms - made_ms) / 1000
            return BEFORE_GAME, f"made {gone:.1f} s before this clock's game began (for a game gone by)"
        return None

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
