"""Sealed commands: who sent a command, and that it is new (docs/hall.md, "What the hall trusts").

The CRC of a command (docs/protocol.md) only guards against line noise: anyone can compute it.
On the hall's broker a command is also sealed with the clock's own key, which `tileclock
hall-setup` makes and installs with the clock's password, and carries a counter:

    sig COUNTER MAC LINE

LINE is the command as on the serial line (its CRC included), COUNTER a whole number the director
raises with every command it sends, and MAC the first 32 hex digits of HMAC-SHA256(key,
"CLOCK COUNTER LINE"), CLOCK the clock's id. A clock takes a sealed command only if its MAC is
right and its counter is above the last one it took: the same command published again (a replay)
is refused, and so is one for another clock.
"""

import hashlib
import hmac
import re

from .decoder import Reason, WireError

PREFIX = b"sig "
#: a key, as `hall-setup` writes it: 64 hex digits (32 random bytes)
KEY = re.compile(r"[0-9a-f]{64}")
_SEALED = re.compile(rb"sig ([0-9]{1,20}) ([0-9a-f]{32}) (.+)", re.DOTALL)
#: the longest sealed line: the longest command and what the seal adds
MAX_SEALED = 120 + 60


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


def _mac(key, clock_id, counter, line):
    message = f"{clock_id} {counter} ".encode("ascii") + line
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]


def seal(key, clock_id, counter, line):
    """`line` (str, a command with its CRC) sealed for `clock_id` with `key` and `counter`, as str."""
    raw = line.encode("ascii")
    return f"sig {counter} {_mac(key, clock_id, counter, raw)} {line}"


def unseal(key, clock_id, raw, last_counter):
    """(counter, command line as bytes) of a sealed line `raw` (bytes) for `clock_id`, if its MAC is
    right and its counter above `last_counter`; SealError naming why not."""
    if len(raw) > MAX_SEALED:
        raise SealError(f"refused: a sealed command longer than {MAX_SEALED} bytes")
    match = _SEALED.fullmatch(raw)
    if match is None:
        raise SealError("refused: a command without this clock's seal (sig COUNTER MAC COMMAND)")
    counter, mac, line = int(match.group(1)), match.group(2).decode("ascii"), match.group(3)
    if not hmac.compare_digest(mac, _mac(key, clock_id, counter, line)):
        raise SealError("refused: a command whose seal is not this clock's key")
    if counter <= last_counter:
        raise SealError(f"refused: a replayed command (counter {counter}, this clock took {last_counter})")
    return counter, line


class Sealer:
    """The director's side: seals each command for its clock with that clock's key (`keys`: clock id
    -> key bytes) and a counter that only rises, across restarts too: the microseconds since 1970
    the caller gives (`now_us`), or one more than the last if the clock stood still."""

    def __init__(self, keys):
        self.keys = dict(keys)
        self.counter = 0

    def line(self, clock_id, line, now_us):
        """`line` as `clock_id` takes it: sealed if the director holds its key, else as it is."""
        key = self.keys.get(clock_id)
        if key is None:
            return line
        self.counter = max(self.counter + 1, now_us)
        return seal(key, clock_id, self.counter, line)


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
