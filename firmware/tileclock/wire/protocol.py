"""The serial protocol, version 2: framed records out, checked commands in (docs/protocol.md).

A record is one line of JSON ending in an integrity field, `"crc":"xxxxxxxx"`:
the CRC-32 (as zlib computes it) of the line's bytes with that field removed,
in eight lower-case hex digits. Every line stays valid JSON.

A command is one line of ASCII: `status`, `resend FROM [TO]`, `adjust SIDE DELTA_MS*CRC`,
`round over*CRC`, `new game*CRC`, `late A|B|both*CRC`, `reopen*CRC`, `selftest*CRC`, `set KEY=VALUE ...*CRC`, `call taken|done
SEQ*CRC`, `ack SEQ*CRC` or `code GAME BASE TOKEN_A TOKEN_B*CRC` (the hall's score links for game
GAME, one a side, each shown as a QR code on its own side's panel; `code GAME BASE TOKEN`, one
token for both, as halls before each side had its own sent it), where CRC is the CRC-32 of the text before `*`. Any command that changes the game
may also name who sent it, `by=LABEL` (a page session, a tool): the record it makes says so. A command that changes the game (or what the clock
may delete) must carry its CRC, so line noise can never make one. The answer to `status` is a
framed line without a `seq`: it is not a record.
"""

import re
import zlib
from dataclasses import dataclass

from .decoder import LIMITS, Reason, WireError, load, load_object, text_of
from .labels import LABEL, is_label
from .records import SIDE_SETTINGS, SIDES, TIME_OF_DAY_MS, RecordError, decode

__all__ = [
    "LABEL",
    "MAX_COMMAND",
    "VERSION",
    "Command",
    "CommandError",
    "FieldError",
    "FrameError",
    "crc32",
    "frame",
    "is_label",
    "parse_command",
    "unframe",
    "unframe_any",
    "with_crc",
]

VERSION = 2
#: The longest command line accepted, in bytes; longer ones are refused whole.
MAX_COMMAND = 120
_CRC_TAIL = re.compile(r',"crc":"([0-9a-f]{8})"\}$')
_ADJUST_LIMIT_MS = 10 * 60 * 1000
#: A time of day the clock takes: 2020 to 2100 (a director's computer with its clock unset is refused).
_WALL_MS_RANGE = TIME_OF_DAY_MS
_START_TIME = re.compile(r"\d{1,2}:[0-5]\d")
#: a score link's start, as the hall sends it: upper case, every character one QR's compact
#: alphanumeric mode holds (no `_`, no space, no `*`), so a 128x64 panel fits its code
_CODE_BASE = re.compile(r"HTTPS?://[0-9A-Z.:-]{1,40}(/[0-9A-Z.$%+-]{1,32}){2}")
_CODE_TOKEN = re.compile(r"[0-9A-Z]{4,16}")
#: the longest link a version-3 QR code holds at its lowest error correction (alphanumeric mode)
MAX_LINK = 77


class FrameError(WireError):
    """A record line that is cut off, altered or not a record: `reason` says which (no_crc,
    bad_crc, too_large, not_text...), the message says it for a person."""


class FieldError(FrameError):
    """A line whose integrity field is good but whose record is not one a clock writes (too deep, a
    number out of range, a field missing or of the wrong kind): it came whole from the clock, so it
    is kept aside, not noise. `record` is the JSON object it holds, or None if it is not one (or
    could not be read within the decoder's limits)."""

    def __init__(self, reason, detail, record=None, field=None):
        super().__init__(reason, detail, field)
        self.record = record


class CommandError(WireError):
    """A command line the clock refuses; the message says why."""

    def __init__(self, detail):
        super().__init__(Reason.BAD_COMMAND, detail)


def crc32(text):
    """The CRC-32 of `text`'s ASCII bytes, as eight lower-case hex digits."""
    return f"{zlib.crc32(text.encode('ascii', 'replace')):08x}"


def frame(body):
    """Add the integrity field to one record's compact JSON object text."""
    return f'{body[:-1]},"crc":"{crc32(body)}"}}'


def unframe(line, limits=LIMITS):
    """The record a framed line (str or bytes) stands for, through the one decoder
    (`decoder.load`, then `records.decode`'s schema); FrameError if it is too large, not text or
    its CRC is wrong, FieldError (a FrameError) if its integrity is good but its content is not."""
    body = _checked_body(line, limits)
    try:
        return decode(body, limits)
    except RecordError as error:
        try:
            record = load(body, limits)  # the same limits: a record too deep to check is not read twice
        except WireError:
            record = None
        raise FieldError(
            error.reason, str(error), record if isinstance(record, dict) else None, error.field
        ) from None


def unframe_any(line, limits=LIMITS):
    """The JSON object a framed line stands for, a record or an answer (the answer to `status` has
    no `seq`: it is not a record); FrameError if it is too large, its CRC or its JSON is wrong."""
    try:
        return load_object(_checked_body(line, limits), limits)
    except FrameError:
        raise
    except WireError as error:
        raise FrameError(error.reason, error.detail, error.field) from None


def _checked_body(line, limits=LIMITS):
    """A framed line's JSON text without its integrity field; FrameError if it is too large or not
    text (checked first, before any work on it), or the field is missing or wrong."""
    try:
        line = text_of(line, limits).strip()
    except WireError as error:
        raise FrameError(error.reason, error.detail) from None
    match = _CRC_TAIL.search(line)
    if not match:
        raise FrameError(Reason.NO_CRC, "no integrity field")
    body = line[: match.start()] + "}"
    if crc32(body) != match.group(1):
        raise FrameError(Reason.BAD_CRC, "integrity check failed")
    return body


@dataclass(frozen=True)
class Command:
    """One director's command: `status`, `resend` (first, last), `adjust` (side, delta_ms),
    `round_over`, `new_game`, `late` (player,), `reopen`, `selftest`, `set` (values,: `set_scene`'s keyword arguments),
    `call` (seq, answer), `takeover` (clock, seq, game, sides, first, run), `moved` (game seq, spare), `ack` (seq,) or `code` (game seq, base, (token A, token B)); `by`, who sent it (a
    label), if the line said."""

    name: str
    args: tuple = ()
    by: str | None = None


def with_crc(text):
    """A command line with its CRC, as the director's tools send it (no line ending)."""
    return f"{text}*{crc32(text)}"


def parse_command(raw):
    """Parse one command line (bytes, without its line ending); CommandError says what is wrong."""
    if len(raw) > MAX_COMMAND:
        raise CommandError(f"line too long ({len(raw)} bytes, at most {MAX_COMMAND})")
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise CommandError("not ASCII") from None
    if not text.isprintable():
        raise CommandError("control characters in the line")
    checked = False
    if "*" in text:
        text, _, crc = text.rpartition("*")
        if crc.lower() != crc32(text):
            raise CommandError("integrity check failed")
        checked = True
    words = text.split()
    if not words:
        raise CommandError("empty command")
    by = [word[3:] for word in words[1:] if word[:3].lower() == "by="]
    if len(by) > 1 or (by and not is_label(by[0])):
        raise CommandError("by=: once, a label (letters, digits, - or _, up to 32)")
    command = _command(words[0].lower(), [w for w in words[1:] if w[:3].lower() != "by="], checked)
    if by and command.name in ("status", "resend", "ack", "code"):
        raise CommandError(f"{command.name} takes no by=")
    return Command(command.name, command.args, by[0]) if by else command


def _command(name, args, checked):
    """The command `name` with `args` (words), `checked`: whether its line carried its CRC."""
    if name == "status" and not args:
        return Command("status")
    if name == "resend" and 1 <= len(args) <= 2 and all(a.isdigit() for a in args):
        first = int(args[0])
        last = int(args[1]) if len(args) == 2 else None
        if last is not None and last < first:
            raise CommandError("resend: the last seq is before the first")
        return Command("resend", (first, last))
    if name == "ack" and len(args) == 1 and args[0].isdigit():
        if not checked:
            raise CommandError("ack lets the clock prune games: it needs its CRC (ack 1234*xxxxxxxx)")
        return Command("ack", (int(args[0]),))
    if name == "adjust" and len(args) == 2:
        side = args[0].upper()
        if side not in SIDES or not re.fullmatch(r"[+-]\d{1,7}", args[1]):
            raise CommandError("usage: adjust A|B +60000|-60000 (milliseconds, signed)")
        delta_ms = int(args[1])
        if delta_ms == 0 or delta_ms % 1000 or abs(delta_ms) > _ADJUST_LIMIT_MS:
            raise CommandError("adjust: whole seconds, not zero, at most 10 minutes")
        if not checked:
            raise CommandError("adjust changes the game: it needs its CRC (adjust A +60000*xxxxxxxx)")
        return Command("adjust", (side, delta_ms))
    if name == "round" and [a.lower() for a in args] == ["over"]:
        return _checked(Command("round_over"), checked, "round over ends the game", "round over")
    if name == "new" and [a.lower() for a in args] == ["game"]:
        return _checked(Command("new_game"), checked, "new game opens the next game", "new game")
    if name == "reopen" and not args:
        return _checked(Command("reopen"), checked, "reopen changes the game", "reopen")
    if name == "selftest" and not args:  # on a fresh game only (the clock refuses it otherwise)
        return _checked(Command("selftest"), checked, "selftest takes over the buttons", "selftest")
    if name == "late" and len(args) == 1:
        player = args[0].upper() if args[0].upper() in SIDES else args[0].lower()
        if player not in (*SIDES, "both"):
            raise CommandError("usage: late A|B|both (the absent side, or both)")
        return _checked(Command("late", (player,)), checked, "late starts a clock", f"late {player}")
    if name == "call" and len(args) == 2 and args[0].lower() in ("taken", "done") and args[1].isdigit():
        answer = args[0].lower()
        return _checked(
            Command("call", (int(args[1]), answer)), checked, "call answers a call", "call taken 57"
        )
    if name == "code":
        return _checked(
            _code(args), checked, "code gives the players a link", "code 12 HTTP://H/S/3 TOKENA TOKENB"
        )
    if name == "takeover":
        return _checked(
            _takeover(args), checked, "takeover takes up a game", "takeover clock-12 811 790 A=..."
        )
    if name == "moved" and len(args) == 2 and args[0].isdigit() and is_label(args[1]):
        return _checked(
            Command("moved", (int(args[0]), args[1])), checked, "moved ends the game", "moved 790 clock-31"
        )
    if name == "set":
        values = _set_values(args)
        return _checked(Command("set", (values,)), checked, "set changes the game", "set round=3")
    raise CommandError(
        f"unknown command {name!r} (known: status, resend FROM [TO], adjust SIDE DELTA_MS, round over, "
        "new game, late A|B|both, reopen, selftest, set KEY=VALUE..., call taken|done SEQ, ack SEQ, code GAME BASE TOKEN_A TOKEN_B, "
        "takeover CLOCK SEQ GAME A=... B=..., moved GAME CLOCK)"
    )


_TAKEOVER_SIDE = re.compile(r"(\d{1,9}):(\d{1,9}):(\d{1,4})")
#: a `takeover`'s open call: its seq, and `called` or `taken`
_TAKEOVER_CALL = re.compile(r"(\d{1,9}):(called|taken)")


def _takeover(args):
    """`takeover CLOCK SEQ GAME A=USED:LIMIT:LATE B=USED:LIMIT:LATE [first=A|B] [run=A|B]
    [call=SEQ:called|taken]`: a spare takes up the dead clock CLOCK's game GAME (its
    `new_game`'s seq) from its record SEQ, each side's time used and limit (ms) and late-start
    penalty, who played first, whose clock ran and the board's open call; as (clock, seq, game,
    {side: (used_ms, limit_ms, late_pen)}, first, run, call: (seq, taken) or None)."""
    usage = (
        "usage: takeover CLOCK SEQ GAME A=USED_MS:LIMIT_MS:LATE_PEN B=... [first=A|B] [run=A|B]"
        " [call=SEQ:called|taken]"
    )
    if len(args) < 5 or not is_label(args[0]) or not (args[1].isdigit() and args[2].isdigit()):
        raise CommandError(usage)
    sides, picks, call = {}, {"first": None, "run": None}, None
    for word in args[3:]:
        key, _, value = word.partition("=")
        side, called = _TAKEOVER_SIDE.fullmatch(value), _TAKEOVER_CALL.fullmatch(value)
        if key.lower() == "call" and called and call is None:
            call = (int(called.group(1)), called.group(2) == "taken")
        elif key.upper() in SIDES and side and key.upper() not in sides:
            sides[key.upper()] = tuple(int(part) for part in side.groups())
        elif key.lower() in picks and value.upper() in SIDES:
            picks[key.lower()] = value.upper()
        else:
            raise CommandError(usage)
    if set(sides) != set(SIDES):
        raise CommandError(usage)
    return Command(
        "takeover", (args[0], int(args[1]), int(args[2]), sides, picks["first"], picks["run"], call)
    )


def _checked(command, checked, what, example):
    """`command`, if its line carried its CRC (a command that changes the game must)."""
    if not checked:
        raise CommandError(f"{what}: it needs its CRC ({example}*xxxxxxxx)")
    return command


def _code(args):
    """`code GAME BASE TOKEN_A TOKEN_B`'s arguments: the game's seq, and the links the panels can
    show, as (game, base, (token A, token B)); the link of side S is `BASE/S/TOKEN_S`. The older
    `code GAME BASE TOKEN` (one token for both sides) is taken as that token twice. CommandError
    says what is wrong."""
    usage = "usage: code GAME_SEQ HTTP://HOST:PORT/S/TABLE TOKEN_A TOKEN_B (upper case)"
    if len(args) not in (3, 4) or not args[0].isdigit() or len(args[0]) > 12:
        raise CommandError(usage)
    game, base, tokens = int(args[0]), args[1], tuple(args[2:])
    if not _CODE_BASE.fullmatch(base) or not all(_CODE_TOKEN.fullmatch(token) for token in tokens):
        raise CommandError(usage)
    if len(base) + len("/A/") + max(map(len, tokens)) > MAX_LINK:
        raise CommandError(f"code: the link is longer than a panel's QR code holds ({MAX_LINK} characters)")
    return Command("code", (game, base, tokens * 2 if len(tokens) == 1 else tokens))


#: `set speech=`'s and `set large=`'s values: the sides that hear the clock, or whose panel shows
#: the large-digits face, as the `set` record says them
_SPEECH_SIDES = {"A": "A", "B": "B", "AB": "AB", "BA": "AB", "OFF": ""}


def _set_values(args):
    """`set`'s KEY=VALUE words as the clock's `set_scene` arguments; CommandError says what is wrong."""
    values = {}
    for word in args:
        key, _, value = word.partition("=")
        key = key.lower()
        if key == "wall" and value.isdigit() and _WALL_MS_RANGE[0] <= int(value) <= _WALL_MS_RANGE[1]:
            values["wall_ms"] = int(value)
        elif key == "start" and value.isdigit() and _WALL_MS_RANGE[0] <= int(value) <= _WALL_MS_RANGE[1]:
            values["start_ms"] = int(value)  # the round starts at this time of day (ms since 1970 UTC)
        elif key == "round" and value.isdigit() and 1 <= int(value) <= 999:
            values["round"] = int(value)
        elif key == "table" and is_label(value):
            values["table"] = value
        elif key in SIDE_SETTINGS and value.upper() in _SPEECH_SIDES:
            values[key] = _SPEECH_SIDES[value.upper()]  # who hears the clock, who has large digits
        elif key in ("a", "b") and _START_TIME.fullmatch(value):
            minutes, seconds = value.split(":")
            values.setdefault("times_s", {})[key.upper()] = int(minutes) * 60 + int(seconds)
        else:
            raise CommandError(
                f"set: {word[:30]!r} (known: wall=MS_SINCE_1970, start=MS_SINCE_1970, round=1-999, "
                "table=LABEL, A=m:ss, B=m:ss, speech=A|B|AB|off, large=A|B|AB|off)"
            )
    if not values:
        raise CommandError("set: nothing to set")
    return values
