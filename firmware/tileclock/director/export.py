"""`tileclock export`: the games in the clock's journal, as CSV and JSON, to a file or a directory.

Games are read and written one at a time, so memory stays flat however many
games the journal holds. Exporting a whole journal marks it as held by the
director (the journal's `exported-N` mark), so the clock may prune those games.
"""

import csv
import itertools
import json
import os
import sys

from ..device import segments
from .history import CSV_FIELDS, csv_safe, iter_games, iter_records, journal_folder, summary_row


def export(journal_path, out, game=None, board="", pictures=False):
    """Write the journal's games (or only the one whose `new_game` has seq `game`); returns the files written.

    `journal_path` is the clock's state directory, its `journal/` folder, or a single journal
    file. `out` is a directory (a USB stick: `games.csv` and a `game-SEQ.json` for each game, and
    with `pictures` its `game-SEQ.png` and `game-SEQ.svg` beside it), or a file ending in `.csv`
    (the summary rows) or `.json` (every game's records).
    """
    extension = os.path.splitext(out.rstrip(os.sep))[1]
    if extension not in ("", ".csv", ".json"):
        raise ValueError(f"{out}: export writes a folder, a .csv or a .json file, not {extension}")
    seen = {"board": board, "last_seq": None}

    def noted(records):
        for record in records:
            if record["ev"] == "boot" and not seen["board"]:
                seen["board"] = str(record.get("board", ""))
            seen["last_seq"] = record["seq"]
            yield record

    games = iter_games(noted(iter_records(journal_path, from_seq=game)))
    first = next(games, None)
    if first is None:
        raise ValueError(f"nothing to export: {journal_path} holds no game")
    games = itertools.chain([first], games)
    if game is not None:
        games = _only(games, game, journal_path)
    if out.endswith(".csv"):
        with _durable(out) as file:
            for _ in _write_csv(file, games, seen):
                pass
        written = [out]
    elif out.endswith(".json"):
        with _durable(out) as file:
            _write_json(file, games, seen)
        written = [out]
    else:
        os.makedirs(out, exist_ok=True)
        written = [os.path.join(out, "games.csv")]
        with _durable(written[0]) as file:
            for one in _write_csv(file, games, seen):
                path = os.path.join(out, f"game-{one.seq}.json")
                with _durable(path) as game_file:
                    _write_json(game_file, [one], seen)
                written.append(path)
                if pictures:
                    from .plot import write_pictures  # the director extra; never loaded on a clock

                    stem = os.path.join(out, f"game-{one.seq}")
                    written += write_pictures(
                        one, stem, title=f"board {seen['board'] or '?'}, game {one.seq}"
                    )
    if game is None and seen["last_seq"] is not None:
        _mark_exported(journal_path, seen["last_seq"])
    return written


def _only(games, seq, path):
    for one in games:
        if one.seq == seq:
            yield one
            return
        if one.seq > seq:
            break
    raise ValueError(f"no game starts at seq {seq} in {path}")


def _write_csv(file, games, seen):
    """Write a row for each game, handing each game on once its row is written."""
    writer = csv.DictWriter(file, fieldnames=CSV_FIELDS)
    writer.writeheader()
    for one in games:
        writer.writerow(csv_safe(summary_row(one, seen["board"])))
        yield one


def _write_json(file, games, seen):
    file.write("[")
    for number, one in enumerate(games):
        file.write(",\n" if number else "\n")
        file.write(
            json.dumps({"game_seq": one.seq, "board": seen["board"], "records": one.records}, indent=1)
        )
    file.write("\n]\n")


class _durable:
    """A text file written, flushed and fsynced (a USB stick may be pulled right after)."""

    def __init__(self, path):
        self.file = open(path, "w", newline="", encoding="utf-8")

    def __enter__(self):
        return self.file

    def __exit__(self, *error):
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()


def _mark_exported(journal_path, last_seq):
    """Tell the clock the director holds every record up to `last_seq` (if this user may)."""
    folder = journal_folder(journal_path)
    if folder is None:
        return
    try:
        held = segments.read_mark(folder, segments.EXPORTED)
        if held is None or last_seq > held:
            segments.set_mark(folder, segments.EXPORTED, last_seq)
    except OSError as error:
        print(
            f"tileclock: note: cannot mark the games as exported ({error.strerror}): the clock keeps "
            "them until they are collected or the journal is full",
            file=sys.stderr,
        )
