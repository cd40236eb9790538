"""The score links' tokens on disk, so a restarted hall keeps every phone link it made (docs/hall.md,
"Scores at the board").

`OUT/scores/tokens.json` holds the tokens of every round not yet locked, one object a token:
`{"version": 2, "tokens": [{"token": "7Q4K2M9X", "round": 3, "table": "12", "side": "A",
"entries": 1}, ...]}`: a token opens one side's form of one table's game, and `entries` counts the
entries it has made (bounded: `entries.MAX_ENTRIES`). A token is a credential (whoever holds it
enters that side's scores), so the file is created 0600 and renamed over
the old one (`wire/segments.replace_file`): a crash leaves the old list or the new, never part of
one. It is read back through the one decoder (`wire/decoder.load_object`, with the limits below)
and its schema (`wire/schema.py`); a file that is not one (cut short, edited, planted) is kept aside
as `tokens.json.bad-TIME` and named in words, and the hall starts with no tokens: never a crash.
A version 1 file (a token a table, before each side had its own) is such a file: its tokens opened
both sides' forms, so they are not taken up.
"""

import contextlib
import os
import re
import stat
import time
from typing import NamedTuple

from ...wire.decoder import Limits, WireError, load_object
from ...wire.labels import is_label
from ...wire.schema import BASIC, ListOf, Obj, check_fields, natural
from ...wire.segments import replace_file

FILE = "tokens.json"
#: tokens kept at most: a round's tables, for every round not yet locked (locked rounds' are dropped)
MAX_TOKENS = 50_000
#: an honest file is about 75 bytes a token, two levels deep
LIMITS = Limits(max_bytes=MAX_TOKENS * 100, max_depth=3, max_int_digits=6)
#: the alphabet and length `entries.ScoreBook` makes tokens of (no 0/O, no 1/I)
TOKEN = re.compile(r"[2-9A-HJ-NP-Z]{8}")

KINDS = {
    **BASIC,
    "token": lambda value: isinstance(value, str) and TOKEN.fullmatch(value) is not None,
    "round": lambda value: natural(value) and 1 <= value <= 9999,
    "table": lambda value: is_label(value) and not (value.isdigit() and str(int(value)) != value),
    "side": lambda value: value in ("A", "B"),
    "version": lambda value: value == 2,
}
SCHEMA = Obj(
    {
        "version": "version",
        "tokens": ListOf(
            Obj({"token": "token", "round": "round", "table": "table", "side": "side", "entries": "natural"}),
            MAX_TOKENS,
        ),
    }
)


class Grant(NamedTuple):
    """What a token opens: one side's form of the game at `table` in `round`."""

    round: int
    table: str
    side: str

    @property
    def game(self):
        """(round, table): the game, whichever side."""
        return self.round, self.table


class TokensRefused(ValueError):
    """The tokens file is not one the hall wrote: why, in words."""


def read_tokens(path):
    """({token: Grant}, {token: entries made}) from `path` (both {} if there is none);
    TokensRefused or OSError if it cannot be taken. At most `LIMITS.max_bytes` are read, whatever
    the file claims to be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}, {}
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TokensRefused("not a regular file")
        data = file.read(LIMITS.max_bytes + 1)
    try:
        value = load_object(data, LIMITS)
        check_fields(value, SCHEMA, KINDS, "tokens")
    except WireError as error:
        raise TokensRefused(f"{error.reason}: {error}") from None
    tokens, used = {}, {}
    for item in value["tokens"]:
        if item["token"] in tokens:
            raise TokensRefused(f"the token {item['token'][:2]}... is listed twice")
        tokens[item["token"]] = Grant(item["round"], item["table"], item["side"])
        if item["entries"]:
            used[item["token"]] = item["entries"]
    if len(set(tokens.values())) != len(tokens):
        raise TokensRefused("a side of a table's game holds two tokens")
    return tokens, used


def write_tokens(path, tokens, used=None):
    """Replace `path` with `tokens` ({token: Grant}) and the entries each made (`used`), 0600,
    atomically."""
    used = used or {}
    items = ",\n".join(
        f'{{"token":"{token}","round":{grant.round},"table":"{grant.table}","side":"{grant.side}",'
        f'"entries":{used.get(token, 0)}}}'
        for token, grant in sorted(tokens.items(), key=lambda item: item[1])
    )
    replace_file(path, f'{{"version":2,"tokens":[\n{items}\n]}}\n'.encode("ascii"), 0o600)


def keep_aside(path, why, clock=time.time):
    """Move a refused tokens file out of the way (renamed, never deleted: the director may want to
    see it); the sentence that says so, for the console and the Scores page."""
    aside = f"{path}.bad-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(clock()))}"
    try:
        os.replace(path, aside)
        kept = f"kept aside as {os.path.basename(aside)}"
    except OSError as error:
        kept = f"and it cannot be moved aside ({error.strerror or error}): it will be written over"
    with contextlib.suppress(OSError):  # it may hold tokens (a link planted there is not followed)
        if stat.S_ISREG(os.lstat(aside).st_mode):
            os.chmod(aside, 0o600)
    return (
        f"{os.path.basename(path)}: not a tokens file the hall wrote ({why}), {kept}; phone links made "
        "before this start no longer work: make them again on the Scores page (New phone links)"
    )
