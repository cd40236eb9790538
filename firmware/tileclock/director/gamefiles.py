"""Finding recorded games on the director's disk: collect's folders, game files, journals, exports.

A path may be a folder (searched for `*.log` and `game-*.json` files), a game file or journal
(framed or plain JSON lines), or an export's `.json`. A file that cannot be read is reported and
left out; the others are still read.
"""

import json
import os
import re

from .history import read_records, split_games

_BOARD_FOLDER = re.compile(r"^board-(.+)$")


def _files(path):
    if os.path.isdir(path):
        for folder, _dirs, names in sorted(os.walk(path)):
            for name in sorted(names):
                if name.endswith(".log") or (name.startswith("game-") and name.endswith(".json")):
                    yield os.path.join(folder, name)
    else:
        yield path


def _folder_board(path):
    match = _BOARD_FOLDER.match(os.path.basename(os.path.dirname(os.path.abspath(path))))
    return match.group(1) if match else None


def _boot_board(records, game):
    """The board named by the last `boot` before the game (the reader may leave boots out of games)."""
    start = list(getattr(game, "records", game))[0]["seq"]
    boards = [r.get("board") for r in records if r["ev"] == "boot" and r["seq"] < start]
    return str(boards[-1]) if boards and boards[-1] is not None else None


def _exported_games(path):
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    if not isinstance(data, list) or not all(
        isinstance(g, dict) and isinstance(g.get("records"), list) for g in data
    ):
        raise ValueError(f"{path}: not a tileclock export (a list of games with their records)")
    return [(g["records"], str(g.get("board") or "") or None) for g in data if g["records"]]


def load_games(paths):
    """([(source, game, board named by its boot record or folder)], [problems]) for every game under `paths`."""
    games, problems = [], []
    for path in paths:
        for file in _files(path):
            try:
                if file.endswith(".json"):
                    found = _exported_games(file)
                else:
                    records = read_records(file)
                    found = [(game, _boot_board(records, game)) for game in split_games(records)]
            except (OSError, UnicodeDecodeError) as error:
                problems.append(f"{file}: cannot be read ({error})")
                continue
            except (ValueError, KeyError, TypeError) as error:
                problems.append(f"{file}: left out, {error}")
                continue
            for game, board in found:
                games.append((file, game, board or _folder_board(file)))
    return games, problems
