"""The one decoder for JSON from outside: a serial line, the broker, a file under `--out`, a retained state.

Everything a clock or a file hands the director (and the director hands a clock) is JSON text that
nobody need have written honestly, so before anything else uses it, `load` checks it in this order:

1. its size (`Limits.max_bytes`), before it is read at all;
2. that it is text (ASCII or UTF-8);
3. its nesting (`Limits.max_depth`), counted on the brackets outside strings before `json` parses it
   (the standard parser recurses: 1,000 levels were a RecursionError that stopped the hall);
4. its numbers: an integer's digits are counted before Python converts it (a 5,000-digit `seq` hit
   Python's int-conversion limit, a ValueError nobody caught), then its range; NaN and the infinities
   are refused;
5. then, by its caller, its schema (`wire/schema.py`): field names, kinds and ranges per record type.

A refusal is a `WireError` whose `reason` is a `Reason` code (what a program keys on: counts,
quarantine files, the page) and whose text says it for a person.
"""

import itertools
import json
import math
import re
from dataclasses import dataclass
from enum import StrEnum


class Reason(StrEnum):
    """Why a piece of input was refused: a stable code, the same in every room."""

    TOO_LARGE = "too_large"
    NOT_TEXT = "not_text"
    TOO_DEEP = "too_deep"
    NOT_JSON = "not_json"
    BAD_NUMBER = "bad_number"
    NOT_OBJECT = "not_object"
    NO_CRC = "no_crc"
    BAD_CRC = "bad_crc"
    MISSING_FIELD = "missing_field"
    WRONG_KIND = "wrong_kind"
    BAD_COMMAND = "bad_command"
    FOREIGN_CLOCK = "foreign_clock"
    #: a record of a clock id that none of its logs can take (director/follow/store.py)
    DUPLICATE_ID = "duplicate_id"
    #: a message that broke something after its checks: kept aside, the hall goes on (hall/feed.py)
    INTERNAL = "internal"


class WireError(ValueError):
    """Input refused at the edge: `reason` (a `Reason`), `detail` (for a person), and `field` (the
    dotted name of the field at fault, or None)."""

    def __init__(self, reason, detail, field=None):
        super().__init__(detail)
        self.reason = Reason(reason)
        self.detail = detail
        self.field = field


@dataclass(frozen=True)
class Limits:
    """How much a piece of input may hold. The defaults sit far above any honest record (an `end`
    record with its summary and a dozen corrections is under 2 KB, nested 4 deep)."""

    #: the most bytes one record, line or message may have
    max_bytes: int = 64 * 1024
    #: the most levels of objects and arrays, the outermost counted
    max_depth: int = 8
    #: the most digits an integer may have (19: every 64-bit integer)
    max_int_digits: int = 19
    #: the range every integer must lie in (a 64-bit signed integer's)
    min_int: int = -(2**63)
    max_int: int = 2**63 - 1


LIMITS = Limits()
#: A whole file of games, as `tileclock export` writes it: a list of games, each with its records.
FILE_LIMITS = Limits(max_bytes=512 * 1024 * 1024, max_depth=LIMITS.max_depth + 2)

#: a JSON string, escapes and all (what the depth count skips); written as runs of plain characters
#: between escapes, which matches the same strings several times faster than one character a step
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def text_of(data, limits=LIMITS):
    """`data` (bytes or str) as text, its size checked first; WireError (too_large, not_text)."""
    if isinstance(data, bytes | bytearray | memoryview):
        if len(data) > limits.max_bytes:
            raise WireError(Reason.TOO_LARGE, f"{len(data)} bytes (at most {limits.max_bytes})")
        try:
            return bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(Reason.NOT_TEXT, "not ASCII or UTF-8 text") from None
    if not isinstance(data, str):
        raise WireError(Reason.NOT_TEXT, f"not text but {type(data).__name__}")
    if len(data) > limits.max_bytes:  # characters: a lower bound of its bytes, and cheap
        raise WireError(Reason.TOO_LARGE, f"{len(data)} characters (at most {limits.max_bytes})")
    return data


def depth(text):
    """How deep `text`'s objects and arrays nest, counted outside its strings (no parsing)."""
    return _depth(_STRING.sub("", text))


def _depth(outside_strings):
    brackets = _NOT_BRACKET.sub("", outside_strings)
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def load(data, limits=LIMITS):
    """The JSON value `data` (bytes or str) holds, after the checks above; WireError says which failed."""
    text = text_of(data, limits)
    # Both checks below look outside the strings, but a record's strings hold few brackets or
    # digits: where the whole text passes, its strings are not cut out first (a clock's start
    # reads its last game's 450 records through here).
    outside = None
    if text.count("{") + text.count("[") > limits.max_depth:  # (no deeper than its opening brackets)
        outside = _STRING.sub("", text)
        levels = _depth(outside)
        if levels > limits.max_depth:
            raise WireError(Reason.TOO_DEEP, f"nested {levels} deep (at most {limits.max_depth})")
    careful, quick, long_number = _decoders(limits)
    # Every integer is checked as the parser meets it, but a call per integer doubles the cost of a
    # record: with no digits outside the strings too many for an integer always in range, the
    # parser may convert them itself.
    decoder = careful
    if quick and long_number.search(text) is None:
        decoder = quick
    elif quick:
        outside = _STRING.sub("", text) if outside is None else outside
        decoder = careful if long_number.search(outside) else quick
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it (a decoder's own decode does not look)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return decoder.decode(text)
    except json.JSONDecodeError as error:
        raise WireError(Reason.NOT_JSON, f"not JSON: {error}") from None
    except RecursionError:  # only if max_depth is set above what the parser can recurse
        raise WireError(Reason.TOO_DEEP, "nested too deep to parse") from None


def load_object(data, limits=LIMITS):
    """`load`, and the value must be a JSON object (a dict); WireError (not_object) if it is not."""
    value = load(data, limits)
    if not isinstance(value, dict):
        raise WireError(Reason.NOT_OBJECT, "not a JSON object")
    return value


def _decoders(limits):
    """For `limits`: the parser that checks every integer, the one that leaves them to `json` (None
    if every integer needs checking), and a pattern finding a run of digits too long for the second."""
    made = _MADE.get(id(limits))
    if made is None or made[0] is not limits:  # (by identity: hashing a Limits costs more than a parse)
        if len(_MADE) > 16:  # a few Limits live as long as the process; others must not pile up here
            _MADE.clear()
        made = _MADE[id(limits)] = (limits, _make_decoders(limits))
    return made[1]


_MADE = {}


def _make_decoders(limits):
    careful = json.JSONDecoder(parse_int=_integer(limits), parse_float=_finite, parse_constant=_no_constant)
    short = 0
    while (
        short < limits.max_int_digits
        and limits.min_int <= -(10 ** (short + 1) - 1)
        and (10 ** (short + 1) - 1 <= limits.max_int)
    ):
        short += 1
    quick = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant) if short else None
    return careful, quick, re.compile(rf"\d{{{short + 1}}}")


def _integer(limits):
    def parse(digits):
        if len(digits.lstrip("-")) > limits.max_int_digits:
            raise WireError(
                Reason.BAD_NUMBER, f"an integer of {len(digits)} digits (at most {limits.max_int_digits})"
            )
        value = int(digits)
        if not limits.min_int <= value <= limits.max_int:
            raise WireError(Reason.BAD_NUMBER, f"the integer {digits} is out of range")
        return value

    return parse


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise WireError(Reason.BAD_NUMBER, f"the number {cut(text)} is not finite")
    return value


def _no_constant(name):
    raise WireError(Reason.BAD_NUMBER, f"{name} is not a JSON number")


def cut(value, width=40):
    """`value`'s repr, cut to `width` characters: what an error message may quote of hostile input."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
