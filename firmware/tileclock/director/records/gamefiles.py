"""Finding recorded games on the director's disk: collect's folders, game files, journals, exports.

A path may be a folder (searched for `*.log` and `game-*.json` files, leaving out collect's own
notices and rejects and a journal's damaged bytes), a game file or journal (framed or plain JSON
lines), or an export's `.json`. A file that cannot be read is reported and left out; the others
are still read. A path that is not there, or holds no game at all, is an error: a sheet from it
would say that no game was played anywhere.

A game a spare took over (docs/director-guide.md, "A spare clock") is read as the spare's: the
dead clock's part is left out wherever the spare's game, whose `takeover` names it, is read too
(the spare's `end` counts both parts), so the table has one game, never two.
"""

import os
import re

from ...wire.director_files import SIDE_FILES
from ...wire.segments import DAMAGED
from .history import exported_games, read_records, split_games

_BOARD_FOLDER = re.compile(r"^board-(.+)$")


def _files(path):
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file or folder")
    if not os.path.isdir(path):
        yield path
        return
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(name for name in dirs if name != DAMAGED)  # a journal's damaged bytes, kept aside
        for name in sorted(names):
            if name in SIDE_FILES:
                continue
            if name.endswith(".log") or (name.startswith("game-") and name.endswith(".json")):
                yield os.path.join(folder, name)


def _folder_board(path):
    match = _BOARD_FOLDER.match(os.path.basename(os.path.dirname(os.path.abspath(path))))
    return match.group(1) if match else None


def _boot_board(records, game):
    """The board named by the last `boot` before the game (the reader may leave boots out of games)."""
    start = list(getattr(game, "records", game))[0]["seq"]
    boards = [r.get("board") for r in records if r["ev"] == "boot" and r["seq"] < start]
    return str(boards[-1]) if boards and boards[-1] is not None else None


def _exported_games(path):
    with open(path, "rb") as file:
        return exported_games(path, file.read())


def load_games(paths):
    """([(source, game, board named by its boot record or folder)], [problems]) for every game under
    `paths`; a problem is a file left out, in words that start with its name. ValueError names a
    path that is not there or holds no game."""
    games, problems = [], []
    for path in paths:
        here, left_out = [], []
        for file in _files(path):
            try:
                if file.endswith(".json"):
                    found = _exported_games(file)
                else:
                    records = read_records(file)
                    found = [(game, _boot_board(records, game)) for game in split_games(records)]
            except (OSError, UnicodeDecodeError) as error:
                left_out.append(f"{file}: cannot be read ({getattr(error, 'strerror', None) or error})")
                continue
            except (ValueError, KeyError, TypeError) as error:
                text = str(error)
                left_out.append(text if text.startswith(file) else f"{file}: {text}")
                continue
            here += [(file, game, board or _folder_board(file)) for game, board in found]
        if not here:
            raise NoGames(_no_game(path, left_out))
        games += here
        problems += left_out
    return _not_moved(games), problems


def _not_moved(games):
    """`games` ((source, game, board)) less those another of them took over (its `takeover`); a
    game is a `Game` or, from an export, its list of records."""
    records = [list(getattr(game, "records", game)) for _, game, _ in games]
    taken = {(r["from"], r["from_game"]) for held in records for r in held if r["ev"] == "takeover"}
    return [
        found
        for found, held in zip(games, records, strict=True)
        if not held or (held[0].get("clock"), held[0]["seq"]) not in taken
    ]


class NoGames(ValueError):
    """A path with no recorded game in it (said in words: why)."""


def _no_game(path, left_out):
    """Why `path` gave no game, in one line."""
    if not left_out:
        return f"{path}: no recorded game there (collect's folder, game files, journals or export's JSON)"
    more = f" (and {len(left_out) - 1} more files left out)" if len(left_out) > 1 else ""
    return f"{path}: no game could be read there: {left_out[0]}{more}"
