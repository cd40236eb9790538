"""The director's side of reading records back: files of records, and a game as a table row.

Splitting records into games and rebuilding a game's state is `clock/history.py`'s
(the one reader of records); this module reads the files the director has and
turns a game into the row `export` and `collect` write.
"""

import json
import re

from ..clock.history import split_games
from ..clock.protocol import FrameError, unframe
from ..clock.records import RecordError, decode

__all__ = ["CSV_FIELDS", "csv_safe", "read_records", "split_games", "summary_row"]

CSV_FIELDS = [
    "board", "clock", "game_seq", "rules", "end_reason", "end_t_ms",
    "A_used_ms", "A_shown", "A_overtime_s", "A_pen", "A_lost_on_time", "A_turns",
    "B_used_ms", "B_shown", "B_overtime_s", "B_pen", "B_lost_on_time", "B_turns",
    "stopped_ms", "corrections", "round", "table", "wall_start_ms", "wall_end_ms",
]  # fmt: skip  # a row of the CSV a line, as a director reads it


def read_records(path):
    """Records from a journal or a collected game file (framed lines, checked, or plain JSON
    lines), or from export's JSON (its games' records, in order).

    ValueError names the file, the line and what was expected.
    """
    with open(path, "rb") as file:
        data = file.read()
    if data.lstrip().startswith(b"["):
        return _exported_records(path, data)
    records = []
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            line = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            raise ValueError(
                f"{path}, line {number}: not a record (a record is one line of JSON, in ASCII)"
            ) from None
        if not line:
            continue
        try:
            records.append(unframe(line) if '"crc":"' in line else decode(line))
        except (FrameError, RecordError) as error:
            raise ValueError(f"{path}, line {number}: {error}") from None
    return records


def _exported_records(path, data):
    """The records of a file `tileclock export` wrote as JSON: a list of games, each with its records."""
    try:
        games = json.loads(data)
        if not all(isinstance(game, dict) and isinstance(game.get("records"), list) for game in games):
            raise ValueError("expected a list of games, each with its records")
        return [decode(json.dumps(record)) for game in games for record in game["records"]]
    except (ValueError, RecordError) as error:  # json's errors are ValueErrors, with line and column
        raise ValueError(f"{path}: not a journal, a game file or export's JSON: {error}") from None


def summary_row(game, board=""):
    """The CSV row of a `Game`: its `end` summary, or the state of its last record if it has not ended."""
    first, last, end = game.first, game.records[-1], game.end
    row = {
        "board": board,
        "clock": first.get("clock", ""),
        "game_seq": first["seq"],
        "rules": first.get("rules", ""),
    }
    if end:
        summary = end["summary"]
        row.update(end_reason=end["reason"], end_t_ms=end["t_ms"])
    else:
        summary = {side: dict(last[side], overtime_s="", lost_on_time="", turns="") for side in "AB"}
        summary.update(stopped_ms="", corrections=[])
        row.update(end_reason="not ended", end_t_ms="")
    for side in "AB":
        for key in ("used_ms", "shown", "overtime_s", "pen", "lost_on_time", "turns"):
            row[f"{side}_{key}"] = summary[side][key]
    row["stopped_ms"] = summary["stopped_ms"]
    row["corrections"] = " ".join(
        f"{c['player']}{c['delta_ms']:+d}@{c['t_ms']}" for c in summary["corrections"]
    )
    # where the game sat in the tournament, as the director set it (empty: never set, or unknown)
    scene = {"round": first.get("round"), "table": first.get("table"), "wall_start_ms": first.get("wall_ms")}
    scene.update((key, summary[key]) for key in (*scene, "wall_end_ms") if key in summary)
    row.update({key: "" if scene.get(key) is None else scene[key] for key in CSV_FIELDS[-4:]})
    return row


#: A cell starting with one of these is a formula to a spreadsheet.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_DISPLAY_TIME = re.compile(r"-\d+:\d\d")


def csv_safe(row):
    """`row` with every text cell that a spreadsheet would run as a formula made plain text
    (a leading `'`); a display time such as `-1:23` stays as it is."""
    return {
        key: f"'{value}"
        if isinstance(value, str) and value.startswith(_FORMULA_START) and not _DISPLAY_TIME.fullmatch(value)
        else value
        for key, value in row.items()
    }
