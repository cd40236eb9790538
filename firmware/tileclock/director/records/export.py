"""`tileclock export`: the games in the clock's journal, as CSV and JSON, to a file or a directory.

Games are read and written one at a time, so memory stays flat however many
games the journal holds. Exporting a whole journal marks it as held by the
director (the journal's `exported-N` mark), so the clock may prune those games.
"""

import contextlib
import csv
import io
import itertools
import json
import os
import sys

from ...wire import segments
from .history import (
    CSV_FIELDS,
    csv_safe,
    iter_games,
    iter_records,
    journal_folder,
    no_game_at,
    summary_row,
)


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
    staged = _Staged()
    made = [] if out.endswith((".csv", ".json")) else _make_folder(out)
    try:
        written = _write(staged, out, games, seen, pictures)
        staged.commit()
    except BaseException:
        staged.discard()
        for folder in made:  # a folder this export made, left empty
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise
    if game is None and seen["last_seq"] is not None:
        _mark_exported(journal_path, seen["last_seq"])
    return written


def _write(staged, out, games, seen, pictures):
    """Write the games under staged names; returns the files they become."""
    if out.endswith(".csv"):
        with staged.text(out) as file:
            for _ in _write_csv(file, games, seen):
                pass
        return [out]
    if out.endswith(".json"):
        with staged.text(out) as file:
            _write_json(file, games, seen)
        return [out]
    written = [os.path.join(out, "games.csv")]
    with staged.text(written[0]) as file:
        for one in _write_csv(file, games, seen):
            path = os.path.join(out, f"game-{one.seq}.json")
            with staged.text(path) as game_file:
                _write_json(game_file, [one], seen)
            written.append(path)
            if pictures:
                from .plot import rendered_pictures  # the director extra; never loaded on a clock

                title = f"board {seen['board'] or '?'}, game {one.seq}"
                for fmt, data in rendered_pictures(one, title=title).items():
                    path = os.path.join(out, f"game-{one.seq}.{fmt}")
                    with staged.binary(path) as picture:
                        picture.write(data)
                    written.append(path)
    return written


def _make_folder(out):
    """Make the folder `out` and any missing above it; returns those made, deepest first."""
    made, folder = [], os.path.abspath(out)
    while not os.path.exists(folder):
        made.append(folder)
        folder = os.path.dirname(folder)
    os.makedirs(out, exist_ok=True)
    return made


def _only(games, seq, path):
    for one in games:
        if one.seq == seq:
            yield one
            return
        if one.seq > seq:
            break
    starts = [one.seq for one in iter_games(iter_records(path))]
    raise ValueError(no_game_at(seq, starts, f" in {path}"))


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


class _Staged:
    """Files written under a temporary name beside their own, each flushed and fsynced (a USB stick
    may be pulled right after), and renamed into place only once every one is written: a failed
    export leaves nothing behind, and never a half file over an older one."""

    def __init__(self):
        self.files = []  # (temporary name, final name), in the order written

    @contextlib.contextmanager
    def binary(self, path):
        """A file that becomes `path` at `commit`."""
        temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.part")
        self.files.append((temporary, path))
        with open(temporary, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())

    @contextlib.contextmanager
    def text(self, path):
        """A UTF-8 text file (lines as written) that becomes `path` at `commit`."""
        with self.binary(path) as raw:
            file = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            yield file
            file.detach()  # flushed into the binary file, which is fsynced and closed on its own

    def commit(self):
        """Every file to its own name (the first written last: a folder's `games.csv`), then the
        folders' entries made durable."""
        for temporary, path in reversed(self.files):
            os.replace(temporary, path)
        for folder in {os.path.dirname(os.path.abspath(path)) for _, path in self.files}:
            with contextlib.suppress(OSError):  # a file system that cannot sync a folder (vfat)
                segments.fsync_dir(folder)

    def discard(self):
        """Remove whatever was written."""
        for temporary, _ in self.files:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


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
