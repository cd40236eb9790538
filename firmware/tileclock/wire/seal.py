"""Sealed commands: who sent a command, and that it is new (docs/hall.md, "What the hall trusts").

The CRC of a command (docs/protocol.md) only guards against line noise: anyone can compute it.
On the hall's broker a command is also sealed with the clock's own key, which `tileclock
hall-setup` makes and installs with the clock's password, and carries a counter and the time it
was made:

    sig COUNTER MADE MAC LINE

LINE is the command as on the serial line (its CRC included), COUNTER a whole number the director
raises with every command it sends, MADE the director's wall clock when it sealed it (ms since 1970
UTC), and MAC the first 32 hex digits of HMAC-SHA256(key, "CLOCK COUNTER MADE LINE"), CLOCK the
clock's id. A clock takes a sealed command only if its MAC is right and its counter is above the
last one it took: the same command published again (a replay) is refused, and so is one for
another clock. MADE is sealed with the rest, so nobody can freshen a captured command; the clock
then refuses one more than `FRESH_MS` from its own wall clock (device/links/hall_seal.py): a
command it never got, published later, has a counter it has not seen, but not a fresh time.

The older seal (`sig COUNTER MAC LINE`, no MADE) is refused by name; a clock older than MADE
refuses the new one as having no seal at all: the clocks and the hall are updated together.
"""

import hashlib
import hmac
import re
from typing import NamedTuple

from .decoder import Reason, WireError
from .protocol import MAX_COMMAND

PREFIX = b"sig "
#: a key, as `hall-setup` writes it: 64 hex digits (32 random bytes)
KEY = re.compile(r"[0-9a-f]{64}")
_SEALED = re.compile(rb"sig ([0-9]{1,20}) ([0-9]{1,15}) ([0-9a-f]{32}) (.+)", re.DOTALL)
#: the seal before it carried the time it was made (refused, saying so)
_UNTIMED = re.compile(rb"sig [0-9]{1,20} [0-9a-f]{32} .+", re.DOTALL)
#: the longest sealed line: the longest command and what the seal adds (`sig `, a 20-digit counter,
#: a 15-digit time, the MAC and three spaces)
MAX_SEALED = MAX_COMMAND + 4 + 20 + 1 + 15 + 1 + 32 + 1
#: how far (ms) a sealed command's time may be from the clock's own wall clock, either way. chrony
#: keeps a clock within a few ms of the laptop, and a command reaches it in well under a second
#: (a Wi-Fi retry, a busy broker): 10 s is far above both. A command held back longer was not the
#: director's to that game: it was captured (sent while the clock was away) and published again
#: (the attack of issue 37 waited 32 s); within 10 s, a clock away has rarely even been marked
#: offline, let alone started its next game.
FRESH_MS = 10_000


class Sealed(NamedTuple):
    """A sealed command opened: its counter, when the director made it (ms since 1970 UTC), and
    the command line inside (bytes)."""

    counter: int
    made_ms: int
    line: bytes


class SealError(WireError):
    """A command the clock refuses for its seal (`bad_command`); the message says why (it goes in an
    `error` record)."""

    def __init__(self, detail):
        super().__init__(Reason.BAD_COMMAND, detail)


def key_bytes(text):
    """The key of its 64 hex digits; ValueError for anything else."""
    if not isinstance(text, str) or not KEY.fullmatch(text):
        raise ValueError("a key is 64 hex digits (tileclock hall-setup makes one for each clock)")
    return bytes.fromhex(text)


def _mac(key, clock_id, counter, made_ms, line):
    message = f"{clock_id} {counter} {made_ms} ".encode("ascii") + line
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]


def seal(key, clock_id, counter, line, made_ms):
    """`line` (str, a command with its CRC) sealed for `clock_id` with `key`, `counter` and the
    time it was made (`made_ms`, the director's wall clock, ms since 1970 UTC), as str."""
    raw = line.encode("ascii")
    return f"sig {counter} {made_ms} {_mac(key, clock_id, counter, made_ms, raw)} {line}"


def unseal(key, clock_id, raw, last_counter):
    """The `Sealed` command of a sealed line `raw` (bytes) for `clock_id`, if its MAC is right and
    its counter above `last_counter`; SealError naming why not. Whether it is fresh is the
    clock's to judge, against its own wall clock (`judge`)."""
    if len(raw) > MAX_SEALED:
        raise SealError(f"refused: a sealed command longer than {MAX_SEALED} bytes")
    match = _SEALED.fullmatch(raw)
    if match is None:
        if _UNTIMED.fullmatch(raw):
            raise SealError(
                "refused: a sealed command without the time it was made (an older hall: update "
                "tileclock on the director's laptop)"
            )
        raise SealError("refused: a command without this clock's seal (sig COUNTER MADE MAC COMMAND)")
    counter, made_ms = int(match.group(1)), int(match.group(2))
    mac, line = match.group(3).decode("ascii"), match.group(4)
    if not hmac.compare_digest(mac, _mac(key, clock_id, counter, made_ms, line)):
        raise SealError("refused: a command whose seal is not this clock's key")
    if counter <= last_counter:
        raise SealError(f"refused: a replayed command (counter {counter}, this clock took {last_counter})")
    return Sealed(counter, made_ms, line)


def judge(made_ms, now_ms):
    """Why a command made at `made_ms` is not fresh at `now_ms` (the clock's wall clock, both ms
    since 1970 UTC), or None when it is: within `FRESH_MS` either way."""
    off_ms = now_ms - made_ms
    if abs(off_ms) <= FRESH_MS:
        return None
    way = "before" if off_ms > 0 else "after"
    return f"made {abs(off_ms) / 1000:.1f} s {way} this clock's time (more than {FRESH_MS // 1000} s)"


class Sealer:
    """The director's side: seals each command for its clock with that clock's key (`keys`: clock id
    -> key bytes), a counter that only rises, across restarts too (the microseconds since 1970
    the caller gives, `now_us`, or one more than the last if the clock stood still), and the time
    it is made (`made_ms`: the director's wall clock, which the clocks' chrony follows)."""

    def __init__(self, keys):
        self.keys = dict(keys)
        self.counter = 0

    def line(self, clock_id, line, now_us, made_ms=None):
        """`line` as `clock_id` takes it: sealed if the director holds its key, else as it is;
        made at `made_ms` (default: `now_us` in ms)."""
        key = self.keys.get(clock_id)
        if key is None:
            return line
        self.counter = max(self.counter + 1, now_us)
        return seal(key, clock_id, self.counter, line, now_us // 1000 if made_ms is None else made_ms)


def read_keys(text):
    """The keys of a keys file (`CLOCK KEY` a line, `#` comments), as clock id -> key bytes;
    ValueError naming the line for anything else."""
    keys = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError("expected CLOCK KEY")
            keys[parts[0]] = key_bytes(parts[1])
        except ValueError as error:
            raise ValueError(f"line {number}: {error}") from None
    return keys
