"""TSH's `tourney.js` read as pairings: the JSON TSH writes beside its web pages for them to show.

A director who publishes TSH's web pages (to a shared folder, or to a web host) has the whole event
in one file, `html/tourney.js`. It is `newt=` and then a JavaScript object: `config` (TSH's
settings and its words), `divisions` (a list: each has a `name` and a list `players`), and more
the pages use. `players[0]` is `null` (TSH numbers players from 1, so player N is `players[N]`,
with `id` N); each player has `name`, `rating`, `pairings` (the opponent's number each round, 0
for a bye or a forfeit), `scores` (each round's score, as far as entered) and `etc`, TSH's other
fields as lists, of which `board` (each round's board) and `p12` (1 first, 2 second, 0 a bye, 3
draw for it, 4 not decided) matter here, as in a `.t` file. A value TSH does not have yet (a `00`
in the `.t` file) may be `null` or a bare `undefined` (JavaScript, not JSON): both are "not yet".

Each division comes out as a `pairings.Division` of `tfile.TshPlayer`s, so that everything that
reads a `.t` file (`tsh_round`, score entry) reads this the same. Given with `--tsh` (a name
ending `.js`), beside or instead of `.t` files.

Reading never guesses, and never runs the file: a file that is not `newt=` and an object, over
`MAX_BYTES` or nested deeper than `MAX_DEPTH`, binary (by `tfile.read_bytes`), or not the shape
above is a `PairingsError` of one line naming the file and what is wrong (quoting at most a few
characters of it).
"""

import json
import re

from .pairings import Division
from .tfile import PairingsError, TshPlayer, decode, division_name, read_bytes

#: the most a tourney.js may hold. TSH's words and settings are ~100 KB; a player with 31 rounds and
#: the fields TSH writes is ~1.5 KB, so a 1,000-player event is ~2 MB; 8 MiB is four times that.
#: Read, JSON costs ~10 times its bytes: ~80 MB at the cap.
MAX_BYTES = 8 * 1024 * 1024
#: the deepest nesting read: TSH's own is 6 (divisions, a division, players, a player, etc, a
#: field); a deeper file is no tourney.js, and Python's JSON reader would recurse on it
MAX_DEPTH = 16
#: the most characters of the file quoted in a message
QUOTE = 40

# one pass over the text: a JSON string (kept; an unterminated one runs to the end and is JSON's
# to refuse, so no start is scanned twice), a bare `undefined` (made `null`), or a bracket
_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)|\bundefined\b|[\[\]{}]', re.DOTALL)
_START = re.compile(r"\s*newt\s*=\s*")


def is_tourney_js(path):
    """Whether `path`, given as one of TSH's files, names a tourney.js (its name ends `.js`)."""
    return str(path).lower().endswith(".js")


def read_tourney_js(path):
    """Every `Division` in the tourney.js at `path`, in TSH's order; `PairingsError` (one line,
    naming the file) for anything that is not TSH's tourney.js, OSError for a missing file."""
    data = parse(decode(read_bytes(path, MAX_BYTES)), path)
    divisions = _field(data, "divisions", list, path, "the event")
    if not divisions:
        raise PairingsError(f"{path}: no divisions in it")
    found, names = [], set()
    for index, division in enumerate(divisions):
        if not isinstance(division, dict):
            raise PairingsError(f"{path}: divisions[{index}] is not a division")
        name = division_name(str(_field(division, "name", str, path, f"divisions[{index}]")))
        if not name or name in names:
            raise PairingsError(f"{path}: divisions[{index}]: {'a second' if name else 'no'} division {name}")
        names.add(name)
        where = f"{path} division {name}"
        players = _players(_field(division, "players", list, path, f"division {name}"), where)
        found.append(Division(name, where, players, unit="player"))
    return found


def parse(text, path):
    """The object of a tourney.js's text: `newt=` and a JavaScript object, its bare `undefined`s
    read as null; `PairingsError` naming `path` for anything else."""
    start = _START.match(text)
    if not start:
        raise PairingsError(f"{path}: not TSH's tourney.js (it begins {text[:QUOTE].strip()!r}, not `newt=`)")
    body = text[: start.end()] + _TOKENS.sub(_Depth(path), text[start.end() :])
    try:
        data, end = json.JSONDecoder(parse_constant=_no_constant).raw_decode(body, start.end())
    except json.JSONDecodeError as error:
        line, column = body.count("\n", 0, error.pos) + 1, error.pos - body.rfind("\n", 0, error.pos)
        raise PairingsError(
            f"{path}: not TSH's tourney.js ({error.msg} at line {line}, column {column})"
        ) from None
    except ValueError as error:  # an over-long number, NaN
        raise PairingsError(f"{path}: not TSH's tourney.js ({error})") from None
    rest = body[end:].strip()
    rest = rest[1:].strip() if rest.startswith(";") else rest
    if rest:
        raise PairingsError(f"{path}: more after newt's object: {rest[:QUOTE]!r}")
    if not isinstance(data, dict):
        raise PairingsError(f"{path}: newt is not an object")
    return data


class _Depth:
    """The substitution of `_TOKENS`: counts the nesting, refusing past `MAX_DEPTH`."""

    def __init__(self, path):
        self.path, self.depth = path, 0

    def __call__(self, found):
        token = found.group()
        if token in ("[", "{"):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise PairingsError(
                    f"{self.path}: nested more than {MAX_DEPTH} deep: no tourney.js TSH writes"
                )
        elif token in ("]", "}"):
            self.depth -= 1
        elif token == "undefined":
            return "null     "  # as long as `undefined`: JSON's positions stay the file's
        return token


def _no_constant(name):
    raise ValueError(f"{name} is no number TSH writes")


def _field(data, key, kind, path, what):
    value = data.get(key)
    if not isinstance(value, kind):
        raise PairingsError(
            f"{path}: {what} has no {key} list" if kind is list else f"{path}: {what} has no {key}"
        )
    return value


def _players(entries, where):
    if not entries or entries[0] is not None:
        raise PairingsError(f"{where}: players[0] should be null (TSH numbers its players from 1)")
    players = []
    for number, entry in enumerate(entries[1:], start=1):
        at = f"{where}, player {number}"
        if not isinstance(entry, dict):
            raise PairingsError(f"{at}: not a player")
        if entry.get("id", number) != number:
            raise PairingsError(f"{at}: its id is {str(entry.get('id'))[:QUOTE]!r}, not {number}")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise PairingsError(f"{at}: no name")
        etc = entry.get("etc") or {}
        if not isinstance(etc, dict):
            raise PairingsError(f"{at}: etc is not TSH's fields")
        fields = {str(key): _words(value, at, f"etc.{key}") for key, value in etc.items()}
        players.append(
            TshPlayer(
                number,
                name.strip(),
                str(entry.get("rating", "")),
                _numbers(entry.get("pairings"), at, "pairings"),
                _numbers(entry.get("scores"), at, "scores"),
                fields,
                number,
            )
        )
    return players


def _numbers(values, at, what):
    """A list of whole numbers, None for `null`/`undefined` (TSH's `00`: not yet)."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise PairingsError(f"{at}: {what} is not a list")
    found = []
    for value in values:
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,6}", value.strip()):
            value = int(value)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or abs(value) > 999_999
        ):
            raise PairingsError(f"{at}: {what} must be whole numbers: {str(value)[:QUOTE]!r}")
        found.append(value)
    return found


def _words(value, at, what):
    """An `etc` field as a `.t` file's words: text, None for `null` (`00`)."""
    values = value if isinstance(value, list) else [value]
    words = []
    for item in values:
        if isinstance(item, dict | list):
            raise PairingsError(f"{at}: {what} holds {type(item).__name__}s, not TSH's words")
        words.append(None if item is None else str(item))
    return words
