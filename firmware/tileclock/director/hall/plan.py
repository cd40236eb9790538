"""The room's plan: where each board's table stands, for the hall page's map (docs/director-guide.md).

A plan file is the room drawn in text, as the director sees it from their table: a line is a row
of tables, each word on it a board (its name, as the clocks are set: `7`, `12b`), a `.` an empty
place (an aisle, a pillar). `#` starts a comment; blank lines are rows of nothing (an aisle
across the room)::

    # the main hall, the stage at the top
    1  2  3  4  .  5  6  7  8
    9 10 11 12  . 13 14 15 16

    17 18 19 20 . 21 22 23 24

A board on no line of the plan is drawn after it, in board order; a board named twice is an
error, as is a name that is no board label.
"""

from ...wire.labels import is_label

#: the largest plan file read (a room of 400 tables is a few kilobytes)
MAX_BYTES = 64 * 1024
#: the most rows and places in a row the page lays out
MAX_ROWS = 100
MAX_COLUMNS = 100
#: the word for an empty place
GAP = "."


class PlanError(ValueError):
    """A plan file that cannot be read as a room: the message names the file, the line and why."""


def parse_plan(text, source="the plan"):
    """The places of a plan's `text`: {board: [row, column]}, both from 0 (a `PlanError` naming
    `source` and the line for anything that is not a plan)."""
    if not isinstance(text, str):
        raise PlanError(f"{source}: not text")
    places = {}
    lines = text.splitlines()
    if len(lines) > MAX_ROWS:
        raise PlanError(f"{source}: {len(lines)} lines; a plan has at most {MAX_ROWS} rows")
    for row, line in enumerate(lines):
        words = line.split("#", 1)[0].split()
        if len(words) > MAX_COLUMNS:
            raise PlanError(f"{source}, line {row + 1}: {len(words)} places; at most {MAX_COLUMNS} a row")
        for column, word in enumerate(words):
            if word == GAP:
                continue
            if not is_label(word):
                raise PlanError(
                    f"{source}, line {row + 1}: {word[:40]!r} is no board name (letters, digits, - or _; "
                    f"{GAP} for an empty place)"
                )
            if word in places:
                raise PlanError(
                    f"{source}, line {row + 1}: board {word} is also on line {places[word][0] + 1}"
                )
            places[word] = [row, column]
    if not places:
        raise PlanError(f"{source}: no board on it")
    return places


def read_plan(path):
    """The places of the plan file at `path` (`parse_plan`); a file that cannot be read, is too
    large or is not UTF-8 is a `PlanError` naming it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise PlanError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_BYTES:
        raise PlanError(f"{path}: over {MAX_BYTES // 1024} KiB; a plan is a few lines of board names")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text") from None
    return parse_plan(text, str(path))
