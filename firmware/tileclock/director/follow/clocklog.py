"""One clock's records at the director: kept in seq order, written game by game to its board's folder.

A `ClockLog` belongs to a `RecordStore` (`store.py`), which hands it each record of its
clock and shares the notices and `results.csv` with it. Records ahead of a gap wait until
the gap is filled or skipped; each game goes to `board-BOARD/game-SEQ-CLOCK.log`, and a
game that ends adds its row to `results.csv`.
"""

import os

from ...clock.history import GameSplitter, take_scene
from ...wire.protocol import FrameError, is_label, unframe
from ..records.history import summary_row

#: how a clock refuses a resend of seqs it no longer holds (device/commands.py)
REFUSED = "resend: the journal holds seq "


def lines_on_disk(path):
    """The whole lines of a game file; a line cut off by a kill mid-write is cut from the file."""
    with open(path, "rb") as file:
        data = file.read()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) != len(data):
        with open(path, "r+b") as file:
            file.truncate(len(whole))
    return [line for line in whole.decode("ascii", "replace").splitlines() if line.strip()]


def shown(text, limit=200):
    """Text from a clock made safe to show: printable characters only (no terminal escapes), cut short."""
    text = str(text)
    return "".join(c if c.isprintable() else "?" for c in text[:limit]) + ("..." if len(text) > limit else "")


#: the file of a moved game's records made after the move (`_after_move`): `after-move-SEQ-CLOCK.log`
AFTER_MOVE = "after-move-"
#: the last records' lines kept per clock, to tell a second clock with the same id from a repeat
RECENT = 256
#: records held ahead of a gap, at most, per clock: a clock that floods the director after a gap
#: cannot grow its memory (each held record is about 2 kB in memory)
MAX_PENDING = 2000


def _after_move_of(path):
    """The game seq an `after-move-SEQ-CLOCK.log` file's name gives, or None (another file)."""
    name = os.path.basename(path)
    number = name[len(AFTER_MOVE) :].partition("-")[0] if name.startswith(AFTER_MOVE) else ""
    return int(number) if number.isascii() and number.isdigit() else None


class ClockLog:
    """One clock's records: kept in seq order (those ahead of a gap wait), written game by game."""

    def __init__(self, clock_id, store):
        self.clock_id = clock_id
        self.store = store
        self.board = None  # the board name its last `boot` gave (None until one arrives)
        self.port = None  # where it was last heard
        self.expected = 0  # the next seq to write
        self.pending = {}  # seq -> (record, line) received ahead of a gap (None: a rejected one)
        self.let_go = 0  # records not held past MAX_PENDING (asked for again once the gap is filled)
        self.last = None  # the last record written
        self.scene = None  # the round and table of its game then (None: no `new_game` seen yet)
        self.written = 0
        self.duplicates = 0
        self.games = 0  # games that ended
        #: the newest game that ended (a `Game`), or None: the phones' form shows it, not the
        #: empty game the clock opened after it
        self.ended_game = None
        self.faults = {}  # part -> detail, of the clock's faults not yet cleared
        self._game_file = None
        self._file_game = None  # the `Game` whose file is open
        self._splitter = GameSplitter()  # which game each record belongs to: clock/history.py says
        self._unsettled = {}  # seq -> line of a record the splitter has not placed yet (a boot)
        self.unsent = []  # [first, last] runs of seqs the clock says it can never send
        self.boot_ids = set()  # the `boot_id` of every start this log has written
        self.recent = {}  # seq -> line of the last RECENT records taken (to tell a twin from a repeat)
        #: the `results.csv` row of each `end` in the game files read back (`take_up`): the store
        #: writes any the disk did not take (docs/hall.md, "What the hall trusts")
        self.rows_on_file = []

    def take_up(self, lines, path, last):
        """Read back a game file this store wrote before (its framed lines): the clock goes on
        after its records; with `last`, into the same file."""
        splitter, records = GameSplitter(), []
        for line in lines:
            try:
                record = unframe(line)
            except FrameError:
                continue
            records.append(record)
            self.expected = max(self.expected, record["seq"] + 1)
            self.last = record
            self.scene = take_scene(self.scene, record)
            self.written += 1
            if record["ev"] == "boot":
                self.board = record.get("board")
                self.boot_ids.add(record.get("boot_id"))
            elif record["ev"] == "fault":
                self.faults[shown(record.get("part"))] = shown(record.get("detail"))
            elif record["ev"] == "fault_cleared":
                self.faults.pop(shown(record.get("part")), None)
            self._recent(record["seq"], line)
            if record["ev"] == "takeover":  # this clock took another's game over: the store knows
                self.store.took_over(self.clock_id, record)
            for game, settled in splitter.add(record):
                if game is not None and settled["ev"] == "end":  # its row, as it was made then
                    self.rows_on_file.append(self._row(game))
        late_for = _after_move_of(path)  # the game whose late records these are, or None
        if last and splitter.game is not None:
            self._splitter = splitter
            self._file_game = splitter.game
            self._game_file = open(path, "a", encoding="ascii")
        elif late_for is not None and late_for == getattr(self._file_game, "seq", None):
            # a moved game's late records (read after its own file): with it in memory, as they
            # were when they came (the page's boards read what they add), never in its file
            newest = self._file_game.records[-1]["seq"]
            self._file_game.records.extend(r for r in records if r["seq"] > newest)

    def add(self, record, line):
        """Take one record and its framed line; returns how many records it let through to the
        files (0: held for a gap, or a duplicate). Which log of its clock id it goes to is the
        store's choice (`twins.py`)."""
        return self._take(record["seq"], (record, line))

    def verdict(self, seq, line):
        """How record `seq` (its framed `line`) fits this log: `same` (it holds it), `conflict`
        (it holds that seq with other contents), `next` (the seq it waits for), `ahead` (after a
        gap) or `old` (before where it is, too far back to compare)."""
        if seq in self.pending:
            entry = self.pending[seq]
            return "same" if entry is None or entry[1] == line else "conflict"
        if seq < self.expected:
            held = self.recent.get(seq)
            return "old" if held is None else "same" if held == line else "conflict"
        return "next" if seq == self.expected else "ahead"

    def lets_go(self, seq):
        """Whether record `seq` is let go before it is read: past `MAX_PENDING` records held
        ahead of a gap, any record but the one the gap waits for (counted in `let_go`)."""
        if len(self.pending) < MAX_PENDING or seq == self.expected:
            return False
        self.let_go += 1
        return True

    def add_rejected(self, seq):
        """The clock's record `seq` came, but was rejected: it is not asked for again."""
        return self._take(seq, None)

    def _take(self, seq, entry):
        if seq < self.expected or seq in self.pending:
            self.duplicates += 1  # (one with other contents never comes here: `twins.choose`)
            return 0
        if seq != self.expected and len(self.pending) >= MAX_PENDING:
            # memory is bounded: past this the record is let go, and the gap, then the records after
            # it, are asked for again (the clock's journal holds them)
            self.let_go += 1
            return 0
        self.pending[seq] = entry
        if entry is not None:
            self._recent(seq, entry[1])
        return self._drain()

    def _recent(self, seq, line):
        self.recent[seq] = line
        if len(self.recent) > RECENT:
            del self.recent[next(iter(self.recent))]

    def gap(self):
        """(first, last) of the first run of records missing before one that arrived, or None."""
        if not self.pending:
            return None
        return self.expected, min(self.pending) - 1

    def skip_to(self, seq, why):
        """The clock no longer holds the records before `seq`: go on from there, and say so."""
        if seq <= self.expected:
            return 0
        self.store.notice(f"clock {self.clock_id}: records {self.expected}-{seq - 1} skipped ({why})")
        self.expected = seq
        for stale in [s for s in self.pending if s < seq]:
            del self.pending[stale]
        return self._drain()

    def note_unsent(self, record):
        """Step over the seqs a clock says it can never send: those a `fault` names as skipped
        (seqs never used after an unclean stop), lost or pruned, and those before what it still
        holds when it refuses a resend. Call it with every record taken (a run may start later)."""
        if record["ev"] == "fault":
            self.unsent += [record[key] for key in ("skipped", "lost", "pruned") if key in record]
        moved = True
        while moved:
            moved = False
            for first, last in self.unsent:
                if first <= self.expected <= last:
                    self.skip_to(last + 1, "the clock says it can never send them")
                    moved = True
        if record["ev"] == "error" and "holds" in record:  # a refused resend: it holds from there
            self.skip_to(record["holds"][0], "the clock no longer holds them")
            return
        detail = record.get("detail")  # a clock before the `holds` field says it in words only
        if record["ev"] == "error" and isinstance(detail, str) and detail.startswith(REFUSED):
            first = detail[len(REFUSED) :].partition("-")[0]
            if first.isdigit():
                self.skip_to(int(first), "the clock no longer holds them")

    @property
    def game(self):
        """The `Game` whose file is open (the clock's latest game on file), or None."""
        return self._file_game

    @property
    def game_path(self):
        """The path of the game file open for writing, or None (what a disk fault names)."""
        return self._game_file.name if self._game_file else None

    @property
    def board_label(self):
        """The board name as the director's files show it (a label, or `unnamed`)."""
        return self.board if is_label(self.board) else "unnamed"

    def close(self):
        """Close the game's file; a `boot` that led into nothing yet goes into it (or beside it)."""
        held = [
            self._unsettled.pop(boot["seq"])
            for boot in self._splitter.pending()
            if boot["seq"] in self._unsettled
        ]
        if held and self._game_file:
            self._game_file.write("".join(line + "\n" for line in held))
        elif held:
            self._outside_games(held)
        self._close_game()

    def _close_game(self):
        if self._game_file:
            self._game_file.close()
            self._game_file = None

    def _drain(self):
        moved = 0
        while self.expected in self.pending:
            entry = self.pending.pop(self.expected)
            if entry is not None:
                self._write(*entry)
            self.expected += 1
            moved += 1
        return moved

    def _write(self, record, line):
        ev = record["ev"]
        if ev == "fault":
            self.faults[shown(record.get("part"))] = shown(record.get("detail"))
        elif ev == "fault_cleared":
            self.faults.pop(shown(record.get("part")), None)
        elif ev == "boot":
            self._name_board(record.get("board"))
            self.boot_ids.add(record.get("boot_id"))
        elif ev == "takeover":  # before the dead clock's late records are filed (`_file`)
            self.store.took_over(self.clock_id, record)
        self._unsettled[record["seq"]] = line
        for game, settled in self._splitter.add(record):
            self._file(game, settled, self._unsettled.pop(settled["seq"]))
        self.last = record
        self.scene = take_scene(self.scene, record)  # records come here in seq order
        self.written += 1

    def _file(self, game, record, line):
        """Each game's file holds its records from `new_game` on, led by the `boot` that opened it."""
        if game is None:
            self._outside_games([line])
            return
        moved = self.store.moves.get((self.clock_id, game.seq))
        if moved is not None and record["seq"] > moved[1]:
            self._after_move(game, line, *moved)
            return
        if game is not self._file_game:
            self._open_game(game)
        self._game_file.write(line + "\n")
        self.store.wrote(self)
        if record["ev"] == "end":
            self.flush()  # the game's file is whole on disk before its row names it
            self.games += 1
            self.ended_game = game  # its round's game, once the next one is open (the score form)
            self.store.add_result(self._row(game))

    def _row(self, game):
        """A game's `results.csv` row, naming this log (`CLOCK_r2` for a clock id's second log)."""
        row = summary_row(game, self.board_label)
        if row["clock"]:
            row["clock"] = self.clock_id
        return row

    def flush(self):
        """Hand what was written to the game's file to the system (the store does it after each batch)."""
        if self._game_file:
            self._game_file.flush()

    def _after_move(self, game, line, spare, from_seq):
        """A record of a game that moved to `spare` from this clock's record `from_seq`, made after
        it (the clock came back): kept apart in `after-move-SEQ-CLOCK.log`, never in the game's
        file nor counted (an `end` there makes no row): the game is the spare's from the move on."""
        folder = os.path.join(self.store.outdir, f"board-{self.board_label}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{AFTER_MOVE}{game.seq}-{self.clock_id}.log")
        if not os.path.exists(path):
            self.store.notice(
                f"clock {self.clock_id}: its game {game.seq} moved to clock {spare} from seq {from_seq}, "
                f"but it sent records after it: kept apart in {os.path.basename(path)}, not counted"
            )
        with open(path, "a", encoding="ascii") as file:
            file.write(line + "\n")

    def _outside_games(self, lines):
        """Records of a game whose `new_game` the clock no longer holds: kept in a file of their own."""
        folder = os.path.join(self.store.outdir, f"board-{self.board_label}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"before-games-{self.clock_id}.log"), "a", encoding="ascii") as file:
            file.write("".join(line + "\n" for line in lines))

    def _open_game(self, game):
        folder = os.path.join(self.store.outdir, f"board-{self.board_label}")
        os.makedirs(folder, exist_ok=True)
        self._close_game()
        self._game_file = open(
            os.path.join(folder, f"game-{game.seq}-{self.clock_id}.log"), "a", encoding="ascii"
        )
        self._file_game = game

    def _name_board(self, board):
        if board == self.board:
            return
        if board is not None and not is_label(board):
            self.store.notice(
                f"clock {self.clock_id}: board name {str(board)[:40]!r} is not a label "
                "(letters, digits, - and _): its games are filed under board-unnamed"
            )
        self.board = board
        self.store.board_claimed(self)
