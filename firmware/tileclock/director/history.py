"""Games in a stream of records: split, summarised and shown as a table row.

Shared by `export` (from the clock's journal), `collect` (from the serial
line) and `replay` (from either), so a game reads the same everywhere.
"""

import json

from ..clock.protocol import FrameError, unframe

CSV_FIELDS = [
    "board", "game_seq", "rules", "end_reason", "end_t_ms",
    "A_used_ms", "A_shown", "A_overtime_s", "A_pen", "A_lost_on_time", "A_turns",
    "B_used_ms", "B_shown", "B_overtime_s", "B_pen", "B_lost_on_time", "B_turns",
    "stopped_ms", "corrections",
]  # fmt: skip


def read_records(path):
    """Records from a journal or a collected game file: framed lines (checked) or plain JSON lines."""
    records = []
    with open(path, encoding="ascii") as file:
        for number, line in enumerate(file, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(unframe(line) if '"crc":"' in line else json.loads(line))
            except (FrameError, json.JSONDecodeError) as error:
                raise ValueError(f"{path}, line {number}: {error}") from None
    return records


def split_games(records):
    """Lists of records, one a game, each from its `new_game` (records before the first are dropped)."""
    games, current = [], None
    for record in records:
        if record["ev"] == "new_game":
            current = [record]
            games.append(current)
        elif current is not None and record["ev"] != "boot":
            current.append(record)
    return games


def summary_row(game, board=""):
    """The CSV row of a game: its `end` summary, or the state of its last record if it has not ended."""
    first, last = game[0], game[-1]
    end = next((r for r in game if r["ev"] == "end"), None)
    row = {"board": board, "game_seq": first["seq"], "rules": first.get("rules", "")}
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
    return row
