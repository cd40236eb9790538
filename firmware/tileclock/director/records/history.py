"""The director's side of reading records back: files of records, and a game as a table row.

Splitting records into games and rebuilding a game's state is `clock/history.py`'s
(the one reader of records); this module reads the files the director has and
turns a game into the row `export` and `collect` write.
"""

import os
import re
from bisect import bisect_right

from ...clock.history import GameSplitter, game_scene, reaches_last_game, split_games
from ...wire import segments
from ...wire.decoder import FILE_LIMITS, load
from ...wire.protocol import FrameError, unframe
from ...wire.records import RecordError, decode

__all__ = [
    "CSV_FIELDS",
    "SIDE_FIELDS",
    "csv_safe",
    "iter_games",
    "iter_records",
    "no_game_at",
    "read_records",
    "split_games",
    "summary_row",
]

#: Each side's columns, from the `end` summary (docs/protocol.md, "The end summary").
SIDE_FIELDS = (
    "start_ms", "corrections_ms", "used_ms", "shown", "overtime_s", "overtime_pen", "late_pen", "pen",
    "absent_ms", "lost_on_time", "lost_absent", "turns",
)  # fmt: skip  # the columns in the order a director reads them

CSV_FIELDS = [
    "board", "clock", "game_seq", "rules", "end_reason", "end_t_ms", "supersedes",
    "forfeit_player", "forfeit_reason", "first",
    *(f"A_{key}" for key in SIDE_FIELDS),
    *(f"B_{key}" for key in SIDE_FIELDS),
    "stopped_ms", "corrections", "round", "table", "wall_start_ms", "wall_end_ms",
]  # fmt: skip  # a row of the CSV a line, as a director reads it


def read_records(path):
    """Every record of a journal or a collected game file, as a list (see `iter_records`)."""
    return list(iter_records(path))


def iter_records(path, from_seq=None):
    """Records from a clock's journal (its state directory, or its `journal/` folder of segments)
    or from a single file (a collected game, an older clock's `journal.log`), streamed: memory
    stays flat however long the journal.

    A journal folder's damaged lines are left out (the clock reported them in a `fault` record);
    a bad line in a single file is a ValueError naming it. With `from_seq`, a journal folder is
    read from the segment holding that seq on.
    """
    folder = journal_folder(path)
    if folder is None:
        yield from _file_records(path)
        return
    firsts = segments.list_segments(folder)
    if from_seq is not None:
        firsts = firsts[max(0, bisect_right(firsts, from_seq) - 1) :]
    for first in firsts:
        for _, _, record in segments.iter_lines(os.path.join(folder, segments.segment_name(first))):
            yield record


def no_game_at(seq, starts, where=""):
    """The words for a game asked for by a seq no game starts at, with (up to 20 of) those there are."""
    more = " and more" if len(starts) > 20 else ""
    return f"no game starts at seq {seq}{where} (games start at {starts[:20]}{more})"


def iter_games(records):
    """The `Game`s of a stream of records, each handed on once the next one starts (or the stream
    ends), so only one game is held at a time."""
    splitter, current = GameSplitter(), None
    for record in records:
        for game, _ in splitter.add(record):
            if game is not None and game is not current:
                if current is not None:
                    yield current
                current = game
    if current is not None:
        yield current


def last_game_records(path):
    """The records of a journal folder's last game, read from its newest segments only (with the
    `boot` it opened in), or None if `path` is a single file."""
    folder = journal_folder(path)
    if folder is None:
        return None
    records = []
    for first in reversed(segments.list_segments(folder)):
        lines = segments.iter_lines(os.path.join(folder, segments.segment_name(first)))
        records[:0] = [record for _, _, record in lines]
        if reaches_last_game(records):
            break
    return records


def journal_folder(path):
    """The segment folder of a state directory or journal folder, or None for a single file. A
    folder of game files (a board's in the hall's or collect's records) and no journal is a
    ValueError naming its newest game to give instead: it is no game's log."""
    if not os.path.isdir(path):
        return None
    inner = os.path.join(path, "journal")
    if os.path.isdir(inner):
        return inner
    if not segments.list_segments(path):
        games = sorted(
            (name for name in os.listdir(path) if name.startswith("game-") and name.endswith(".log")),
            key=lambda name: os.path.getmtime(os.path.join(path, name)),
        )
        if games:
            raise ValueError(
                f"{path} is a board's folder of {len(games)} game file(s), not a clock's journal: "
                f"give one game, e.g. {os.path.join(path, games[-1])} (its newest)"
            )
    return path


def _file_records(path):
    """The records of one file: framed lines (checked) or plain JSON lines, or export's JSON (its
    games' records, in order). ValueError names the file, the line and what was expected."""
    with open(path, "rb") as file:
        head = file.read(64)
    if head.lstrip().startswith(b"["):
        with open(path, "rb") as file:
            yield from _exported_records(path, file.read())
        return
    with open(path, "rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                line = raw.decode("ascii").strip()
            except UnicodeDecodeError:
                raise ValueError(
                    f"{path}, line {number}: not a record (a record is one line of JSON, in ASCII)"
                ) from None
            if not line:
                continue
            try:
                yield unframe(line) if '"crc":"' in line else decode(line)
            except (FrameError, RecordError) as error:
                raise ValueError(f"{path}, line {number}: {error}") from None


def _exported_records(path, data):
    """The records of a file `tileclock export` wrote as JSON: a list of games, each with its records."""
    return [record for records, _board in exported_games(path, data) for record in records]


def exported_games(path, data):
    """[(records, board or None)] of each game in `data`, a file `tileclock export` wrote as JSON,
    every record through the one decoder; ValueError naming `path` if it is not one."""
    try:
        games = load(data, FILE_LIMITS)
        if not isinstance(games, list) or not all(
            isinstance(game, dict) and isinstance(game.get("records"), list) for game in games
        ):
            raise ValueError("expected a list of games, each with its records")
        return [
            ([decode(record) for record in game["records"]], str(game.get("board") or "") or None)
            for game in games
            if game["records"]
        ]
    except ValueError as error:  # a WireError is one: it says which check failed
        raise ValueError(f"{path}: not a journal, a game file or export's JSON: {error}") from None


def summary_row(game, board=""):
    """The CSV row of a `Game`: its last `end` summary, or the state of its last record if it has not
    ended. A field an older clock's summary lacks is left empty."""
    first, last, end = game.first, game.records[-1], game.end
    row = {
        "board": board,
        "clock": first.get("clock", ""),
        "game_seq": first["seq"],
        "rules": first.get("rules", ""),
    }
    if end:
        summary = end["summary"]
        row.update(end_reason=end["reason"], end_t_ms=end["t_ms"], supersedes=end.get("supersedes", ""))
    else:
        summary = {side: dict(last[side]) for side in "AB"}
        row.update(end_reason="not ended", end_t_ms="")
    forfeit = summary.get("forfeit") or {}
    row.update(forfeit_player=forfeit.get("player", ""), forfeit_reason=forfeit.get("reason", ""))
    row["first"] = summary.get("first") or ""
    for side in "AB":
        for key in SIDE_FIELDS:
            row[f"{side}_{key}"] = summary[side].get(key, "")
    row["stopped_ms"] = summary.get("stopped_ms", "")
    row["corrections"] = " ".join(
        f"{c['player']}{c['delta_ms']:+d}@{c['t_ms']}" for c in summary.get("corrections", [])
    )
    # where the game sat in the tournament, as the director set it (empty: never set, or unknown):
    # the summary's if it ended, else its own records' (a `set` for the next game is not its own)
    scene = {**game_scene(game.records), "wall_start_ms": first.get("wall_ms")}
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
