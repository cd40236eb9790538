"""Each ended game's score link, sent by the hall to its clock, which shows it as a QR code.

When the hall stores a game's `end` record, it takes the game's two tokens from the score book, one
a side (made once a game: a later `end` that supersedes it keeps them) and sends the clock
`code GAME BASE TOKEN_A TOKEN_B` (wire/protocol.py): side S's link is `BASE/S/TOKEN_S`, e.g.
`HTTP://192.168.1.20:8080/S/12/A/7Q4K2M9X`, the score form of table 12's game for the player at
side A, which opens that side's form only. A clock from before each side had its own token refuses
the command (an `error` record: it shows no code, never one that opens both forms); the director's
page then gives the players their links. It is sent only for the clock's newest
game, with its round and table known (the round from the page's **Start round**, or `set`); the
base is the address phones reach the page by (`tileclock hall --phone-url`), all upper case so the
code stays small (QR's alphanumeric mode). The token goes to that clock alone, never into a record.
A clock that restarts after its game's end (it holds the link in memory only) is sent the same link
again when its `boot` reaches the hall. New links made on the Scores page go by the same path
(`command`, `clocks_at`: pages/score_routes.py).
"""

import csv
import os
import re

from ...clock.history import game_scene
from ...wire.director_files import RESULTS
from ...wire.labels import is_label, table_key
from ...wire.protocol import MAX_COMMAND, MAX_LINK
from .entries import EntryRefused

#: what a score link may hold: QR's alphanumeric mode, as the clock checks it
_QR_SAFE = re.compile(r"[0-9A-Z.:/$%+-]+")


def phone_base(url):
    """`url` (`http://HOST:PORT`, or `https://` behind a TLS proxy) as the links' start, upper
    case; ValueError if a code cannot hold it."""
    base = str(url).strip().rstrip("/").upper()
    if not re.fullmatch(r"HTTPS?://[0-9A-Z.:-]{1,40}", base):
        raise ValueError(
            f"--phone-url {url}: http://HOST:PORT (or https://), the address phones reach the page by"
        )
    return base


class ScoreLinks:
    """Sends the score link of each game that ends to its clock: `send(text, clock_id)` sends a
    command (the hall's feed adds its CRC, or seals it)."""

    def __init__(self, book, base, send):
        self.book = book
        self.base = base
        self.send = send
        self.skipped = []  # (clock id, why) of games that ended with no link sent

    def stored(self, clock_id, record, log):
        """After the hall stored `record` of `clock_id` (its `ClockLog` is `log`): the link, if it
        is the `end` of the clock's newest game. Returns the command sent, or None."""
        game = getattr(log, "game", None)
        if game is None or game.end is None:
            return None
        if record.get("ev") == "boot" and record["seq"] > game.end["seq"]:
            return self._again(clock_id, game, log)  # a clock restarted on its ended game
        if record.get("ev") != "end" or game.end["seq"] != record["seq"]:
            return None
        round_number, table = game_place(record, log)
        if round_number is None:
            return self._skip(clock_id, "no round or table on the clock: start the round from the page")
        try:
            text = self.command(game.seq, table, self.book.tokens_for(round_number, table))
        except (EntryRefused, OSError) as error:  # a table no link can name; a disk that refuses it
            return self._skip(
                clock_id, f"table {table[:32]}: no link ({getattr(error, 'strerror', None) or error})"
            )
        if text is None:
            return self._skip(clock_id, f"table {table}: no QR code holds its link (use the Scores page)")
        self.send(text, clock_id)
        return text

    def _again(self, clock_id, game, log):
        """The links of `game` sent again to a clock that restarted since its end (the clock holds
        them in memory only): the tokens it had, never new ones; nothing if it had none."""
        round_number, table = game_place(game.end, log)
        if round_number is None:
            return None
        tokens = {side: self.book.token_made(round_number, table, side) for side in "AB"}
        text = self.command(game.seq, table, tokens) if all(tokens.values()) else None
        if text is not None:
            self.send(text, clock_id)
        return text

    def command(self, game_seq, table, tokens):
        """The `code` command that gives game `game_seq` at `table` its two links (`tokens`:
        {side: token}), or None if no panel's QR code (or no command line) can hold them."""
        base = f"{self.base}/S/{table.upper()}"
        if not _QR_SAFE.fullmatch(base) or len(base) + 3 + max(map(len, tokens.values())) > MAX_LINK:
            return None
        text = f"code {game_seq} {base} {tokens['A']} {tokens['B']}"
        return text if len(text) + 9 <= MAX_COMMAND else None  # (its CRC, `*xxxxxxxx`, follows)

    def _skip(self, clock_id, why):
        self.skipped.append((clock_id, why))
        del self.skipped[:-100]
        return None


def game_place(record, log):
    """(round, table) of a game whose `end` is `record` on the clock `log` keeps: the round and
    table the clock was given, else its board as the table; (None, None) when there are none."""
    round_number = record.get("round")
    table = record.get("table") if record.get("table") is not None else log.board
    if not isinstance(round_number, int) or table is None:
        return None, None
    return round_number, table_key(table)


def clocks_at(store, round_number, table):
    """[(clock id, game seq)] of the clocks whose newest game ended at `table` in `round_number`,
    placed as `ScoreLinks.stored` places them: those showing that game's link (one, but for a
    clock swapped mid-game), which a new link for it must reach."""
    found = []
    for clock_id in list(store.family):  # (the feed's thread may add a clock meanwhile)
        log = store.log_of(clock_id)
        game = getattr(log, "game", None)
        if game is not None and game.end is not None and game_place(game.end, log) == (round_number, table):
            found.append((clock_id, game.seq))
    return found


def not_ended(store, round_number, table):
    """Why a phone's entry for the game at `table` in `round_number` is not taken yet, in words, or
    None when that game has ended on its clock: a clock's newest game there that ended (and was not
    reopened since), else an ended game of that round and table in `results.csv` (a clock that has
    since moved on to its next game). A game still in play there, or none at all, is refused: the
    scores of a game are those of its slip once it is over."""
    ended = False
    for clock_id in list(getattr(store, "family", ())):  # (the feed's thread may add a clock meanwhile)
        log = store.log_of(clock_id)
        game = getattr(log, "game", None)
        if game is None:
            continue
        closing = next((r for r in reversed(game.records) if r["ev"] in ("end", "reopen")), None)
        if closing is not None and closing["ev"] == "end":
            ended = ended or game_place(closing, log) == (round_number, table)
        elif _placed(game_scene(game.records), log) == (round_number, table):
            return f"the game at table {table} has not ended on the clock: enter the scores once it has"
    if ended or _ended_on_file(store, round_number, table):
        return None
    return f"no game of round {round_number} has ended at table {table}: ask the director"


def _placed(scene, log):
    """(round, table) of a game not ended, from the round and table its records gave it (else its
    clock's board as the table), as `game_place` places an ended one."""
    return game_place({"round": scene.get("round"), "table": scene.get("table")}, log)


def _ended_on_file(store, round_number, table):
    """Whether `results.csv` has a row of a game that ended at `table` in `round_number`."""
    folder = getattr(store, "outdir", None)
    if folder is None:  # a hall with no records folder knows of no game
        return False
    path = os.path.join(folder, RESULTS)
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as file:
            for row in csv.DictReader(file):
                place = row.get("table") or row.get("board") or ""
                if (
                    row.get("round") == str(round_number)
                    and is_label(place)
                    and table_key(place) == table
                    and row.get("end_reason") not in (None, "", "not ended")
                ):
                    return True
    except (OSError, csv.Error):
        return False
    return False
