"""`tileclock export`: the games in the clock's journal, as CSV and JSON, to a file or a directory."""

import csv
import json
import os

from .history import CSV_FIELDS, csv_safe, read_records, split_games, summary_row


def export(journal_path, out, game=None, board="", pictures=False):
    """Write the journal's games (or only the one whose `new_game` has seq `game`); returns the files written.

    `out` is a directory (a USB stick: `games.csv` and a `game-SEQ.json` for each game, and with
    `pictures` its `game-SEQ.png` and `game-SEQ.svg` beside it), or a file ending in `.csv` (the
    summary rows) or `.json` (every game's records).
    """
    extension = os.path.splitext(out.rstrip(os.sep))[1]
    if extension not in ("", ".csv", ".json"):
        raise ValueError(f"{out}: export writes a folder, a .csv or a .json file, not {extension}")
    records = read_records(journal_path)
    games = split_games(records)
    if not games:
        raise ValueError(f"nothing to export: {journal_path} holds no game")
    if game is not None:
        games = [g for g in games if g.seq == game]
        if not games:
            raise ValueError(f"no game starts at seq {game} in {journal_path}")
    board = board or next((r.get("board", "") for r in records if r["ev"] == "boot"), "")
    if out.endswith(".csv"):
        _write_csv(out, games, board)
        return [out]
    if out.endswith(".json"):
        _write_json(out, games, board)
        return [out]
    os.makedirs(out, exist_ok=True)
    written = [os.path.join(out, "games.csv")]
    _write_csv(written[0], games, board)
    for one in games:
        path = os.path.join(out, f"game-{one.seq}.json")
        _write_json(path, [one], board)
        written.append(path)
        if pictures:
            from .plot import write_pictures  # the director extra; never loaded on a clock

            stem = os.path.join(out, f"game-{one.seq}")
            written += write_pictures(one, stem, title=f"board {board or '?'}, game {one.seq}")
    return written


def _write_csv(path, games, board):
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for one in games:
            writer.writerow(csv_safe(summary_row(one, board)))
        file.flush()
        os.fsync(file.fileno())  # a USB stick may be pulled right after


def _write_json(path, games, board=""):
    with open(path, "w", encoding="utf-8") as file:
        json.dump([{"game_seq": g.seq, "board": board, "records": g.records} for g in games], file, indent=1)
        file.flush()
        os.fsync(file.fileno())
