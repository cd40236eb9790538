"""What the hall's page shows of one clock (`Board`), every clock's (`Boards`, one of the store's
listeners: it keeps each board's newest record as the store takes it), and in which order the
boards come."""

from collections.abc import Mapping

from ...clock.calls import Calls
from ..follow.clocklog import shown
from ..records.moved import PRESSES, late_time
from .ends import latest_end, likely_end, pace, rules_of

#: a call's time of day may be this far behind the clock's own count of its wait (the count is in
#: whole records; chrony keeps the clocks within milliseconds of this laptop)
WALL_SLACK_MS = 2_000
#: a wait longer than this by a clock's time of day is its wall clock's error, not a call
MAX_WAIT_MS = 12 * 3600 * 1000
#: a call's time of day may be this far ahead of the clock's own count while the hall hears the
#: call's game live (the count misses only its last record's way here: milliseconds, or a broker's
#: outage's catching up)
WALL_AHEAD_MS = 60_000


class Board:
    """What the director knows of one clock right now."""

    def __init__(self, clock_id, log=None):
        self.clock_id = clock_id
        #: the clock's `ClockLog` in the store (its faults, scene, board name, records waiting and
        #: game on file), as the store last handed it: None before any record of it is on file
        self.log = log
        self.status = None  # "online" / "offline" as the clock (or its will) last said
        self.state = {}  # the clock's retained state message
        self.record = None  # the last record stored
        self.received_at = None  # time.time() when that record arrived
        self.refusals = 0  # messages of this clock refused (rejects.log has each, with its reason)
        self.last_refusal = None
        self._call = (None, None)  # (the game's last record read, the open call it leaves)
        self._start = (None, None)  # (the game's last record read, the round start it took)
        self._rules = (None, None)  # (the game, the rules it is played under)
        self._pace = (None, None)  # (the game's last record read, each side's pace in it)
        #: ((the game, its records read: None once settled), its `takeover` or None: its own game)
        self._taken = (None, None)
        self._late = (None, None)  # (the moved game's records read, their `LateTime` or None)

    def refused(self, reason, detail):
        """One more message of this clock refused, for `reason` (a short code)."""
        self.refusals += 1
        self.last_refusal = f"{reason}: {shown(detail, 60)}"

    def stored(self, log, at):
        """A record of this clock taken into `log` at `at` (the time of day, s): the board shows
        the log's newest record written (a record held for a gap moves nothing; one that fills it
        moves it on to the last it let through)."""
        self.log = log
        last = log.last
        if last is not None and (self.record is None or last["seq"] != self.record["seq"]):
            self.record, self.received_at = last, at

    def as_dict(self, now):
        """The board as the page shows it at `now` (the time of day, s; JSON-ready)."""
        log = self.log
        record = self.record or {}
        faults = dict(log.faults) if log else {}
        faults.update({shown(k): shown(v) for k, v in (self.state.get("faults") or {}).items()})
        if self.refusals:
            faults["refused"] = f"{self.refusals} (rejects.log), the last {self.last_refusal}"
        sides = {side: _side(record.get(side)) for side in "AB"}
        # the game's own round and table, from the records on file (never a `set` for the next
        # game); the clock's state says them before any of its game's records are on file
        scene = log.scene if log and log.scene is not None else self.state
        board = {
            "clock": self.clock_id,
            "board": log.board_label
            if log and log.board is not None
            else shown(self.state.get("board") or "?"),
            "round": scene.get("round"),
            "table": scene.get("table"),
            "online": self.status != "offline",
            "state": record.get("state"),
            "run": record.get("run"),
            "ev": record.get("ev"),
            "seq": record.get("seq"),
            "A": sides["A"],
            "B": sides["B"],
            "faults": faults,
            "age_ms": None if self.received_at is None else int((now - self.received_at) * 1000),
            "waiting": len(log.pending) if log else 0,
            "refused": self.refusals,
            # how its wall clock follows this laptop (chrony): a round set for a time starts by it
            "time": self.state.get("time"),
            # the clock's health (device/health.py): version, uptime, card, Wi-Fi, supply, last start
            "health": self.state.get("health"),
            # its last self-test since its restart (clock/selftest.py), None: never tested
            "selftest": self.state.get("selftest"),
            # who hears the clock through an earphone ("A", "B", "AB", "" none), None: not said
            "speech": self.state.get("speech"),
            # whose panel shows the large-digits face ("A", "B", "AB" or "" none), None: not said
            "large": self.state.get("large"),
            # the clock reaches the broker without TLS: its password and commands in the clear
            "in_the_clear": self.state.get("tls") is False,
        }
        board["moved"] = self.moved(log)
        board["took_over"] = self.took_over(log)
        # a moved game's call is the spare's to answer (it moved with the game): not shown here
        board["call"] = None if board["moved"] else self.open_call(log, board["age_ms"], now)
        board["took_start"] = self.took_start(log)
        game = log.game if log else None
        if self._rules[0] is not game:  # read once a game
            self._rules = (game, rules_of(game))
        board["pace"] = self.pace(game)
        now_ms = int(now * 1000)
        board["latest_end_ms"] = latest_end(self._rules[1], board, now_ms, board["took_start"])
        board["likely_end_ms"] = likely_end(self._rules[1], board, now_ms, board["took_start"])
        board["attention"] = _attention(board)
        return board

    def pace(self, game):
        """Each side's turns pressed and its time used at its last press in `game` (`ends.pace`),
        read again only when the game has grown."""
        if game is None or not game.records:
            return pace([])
        key = (game.seq, game.records[-1].get("seq"), len(game.records))
        if self._pace[0] != key:
            self._pace = (key, pace(game.records))
        return self._pace[1]

    def moved(self, log):
        """Where this clock's game went, if a spare took it over (docs/director-guide.md, "A spare
        clock"): the spare (`to`) and its board (`to_board`), the seq it continued from
        (`from_seq`), and what this clock's late records add (`late`, a `late_dict`), or None."""
        game = log.game if log else None
        moved = log.store.moves.get((self.clock_id, game.seq)) if game is not None else None
        if moved is None:
            return None
        spare, from_seq = moved
        other = log.store.log_of(spare)
        return {
            "to": spare,
            "to_board": other.board_label if other is not None and other.board is not None else None,
            "from_seq": from_seq,
            "late": self.late(game, from_seq),
        }

    def took_over(self, log):
        """The dead clock this clock's game was taken over from (`from`, `from_board`, `from_seq`)
        and what that clock's late records add (`late`, a `late_dict`), or None: a game of its own."""
        game = log.game if log else None
        if game is None:
            return None
        read, length = self._taken[0] or (None, None)
        if read is not game or length not in (None, len(game.records)):
            taken, settled = None, False
            for record in game.records:  # a takeover comes before any press (a fresh game only)
                taken = record if record["ev"] == "takeover" else None
                settled = taken is not None or record["ev"] in PRESSES
                if settled:
                    break
            # settled (the takeover, or a press no takeover can follow): the game is not read again
            self._taken = ((game, None if settled else len(game.records)), taken)
        taken = self._taken[1]
        if taken is None:
            return None
        dead = log.store.log_of(taken["from"])
        dead_game = dead.game if dead is not None else None
        on_file = dead_game is not None and dead_game.seq == taken["from_game"]
        return {
            "from": taken["from"],
            "from_board": dead.board_label if dead is not None and dead.board is not None else None,
            "from_seq": taken["from_seq"],
            "late": self.late(dead_game, taken["from_seq"]) if on_file else None,
        }

    def late(self, game, from_seq):
        """`late_dict` of what the late records of the moved `game` add, read again only when it
        has grown; None when they add nothing."""
        key = (game, len(game.records), from_seq)
        if self._late[0] is None or self._late[0][0] is not game or self._late[0][1:] != key[1:]:
            self._late = (key, late_dict(late_time(game.records, from_seq)))
        return self._late[1]

    def took_start(self, log):
        """The round's start (its `start_ms`) this board's game took (a `set` of a round's start
        applied to it), or None: a game opened after its round's game ended took none."""
        game = log.game if log else None
        if game is None or not game.records:
            return None
        key = (game.seq, game.records[-1].get("seq"), len(game.records))
        if self._start[0] != key:
            taken = [r["start_ms"] for r in game.records if r.get("ev") == "set" and "start_ms" in r]
            self._start = (key, taken[-1] if taken else None)
        return self._start[1]

    def open_call(self, log, age_ms, now):
        """The board's open call to the director, from its game's records on file (so a restart of
        the hall finds it again): its seq, `called` or `taken`, the time of day it was raised
        (`raised_ms`, the clock's, or None) and how long it has waited at `now` (this laptop's time
        of day, s), or None."""
        game = log.game if log else None
        if game is None or not game.records:
            return None
        last = game.records[-1]
        key = (game.seq, last.get("seq"))
        if self._call[0] != key:  # read the game again only when it has grown
            calls = Calls()
            calls.rebuild(game.records)
            seq = getattr(calls.open, "seq", None)  # a call carried in (new_game, takeover) has none here
            call = next((r for r in game.records if r.get("ev") == "call" and r.get("seq") == seq), None)
            self._call = (key, (calls.open, call))
        open_call, record = self._call[1]
        if open_call is None:
            return None
        # the clock's own count: its game time since the call and since its last record (a call
        # carried into this game counts from its start), at least as long as the call has waited
        since_ms = record["t_ms"] if record else 0
        counted_ms = max(0, last.get("t_ms", 0) - since_ms) + (age_ms or 0)
        waited_ms = counted_ms
        if open_call.wall_ms is not None:
            # the clock's time of day of the raise, right after a restart of the hall and in a game
            # after the one it was raised in; taken only if its wall clock agrees with this laptop's
            # (chrony): never less than its own count, nor more than a tournament's day
            by_wall_ms = int(now * 1000) - open_call.wall_ms
            longest_ms = MAX_WAIT_MS
            if record is not None and age_ms is not None:
                # the call is in the game the hall hears live: its count is the wait, so a wall
                # clock hours behind (a `set wall=` typo, chrony on another source) is caught
                longest_ms = min(longest_ms, counted_ms + WALL_AHEAD_MS)
            if counted_ms - WALL_SLACK_MS <= by_wall_ms <= longest_ms:
                waited_ms = max(0, by_wall_ms)
        return {
            "seq": open_call.seq,
            "state": "taken" if open_call.taken else "called",
            "raised_ms": open_call.wall_ms,
            "waited_ms": waited_ms,
        }


class Boards(Mapping):
    """The board of every clock heard on the hall's broker, by clock id (a read-only mapping).

    It is one of the store's listeners (`stored`): the store tells it of each record it takes,
    and it keeps what the page shows. Records of a clock heard elsewhere (a serial port feeding
    the same store) make no board here: `heard_on(clock_id)` names the transport that counts.
    `wall` is the time of day (s) each record is said to arrive at.
    """

    def __init__(self, store, heard_on, wall):
        self.store = store
        self.heard_on = heard_on
        self.wall = wall
        self._boards = {}

    def __getitem__(self, clock_id):
        return self._boards[clock_id]

    def __iter__(self):
        return iter(self._boards)

    def __len__(self):
        return len(self._boards)

    def board(self, clock_id):
        """The board of `clock_id` (made on first need, showing its log already on file)."""
        board = self._boards.get(clock_id)
        if board is None:
            board = self._boards[clock_id] = Board(clock_id, self.store.log_of(clock_id))
        elif board.log is None:  # its first record on file was a refused one (no `stored` then)
            board.log = self.store.log_of(clock_id)
        return board

    def stored(self, clock_id, record, log):
        """The store took `record` of `clock_id` into `log` (the store's listener)."""
        if log.port == self.heard_on(clock_id):
            self.board(clock_id).stored(log, self.wall())

    def follow(self, store):
        """`store` from now on (the hall read it again from its folder after a disk fault): each
        board shows its clock's log there."""
        self.store = store
        for clock_id, board in self._boards.items():
            board.log = store.log_of(clock_id)

    def shown(self, now):
        """Every board as the page shows it at `now` (the time of day, s), those needing the
        director first."""
        boards = [board.as_dict(now) for board in list(self._boards.values())]
        boards.sort(key=lambda b: (b["attention"], board_order(b["board"]), b["clock"]))
        return boards


def late_dict(late):
    """A `LateTime` as the page shows it: the last late press's `seq`, each side's `A_ms` and
    `B_ms` more, and the `words`; None for None."""
    if late is None:
        return None
    return {"seq": late.seq, "A_ms": late.more_ms["A"], "B_ms": late.more_ms["B"], "words": late.words()}


def _side(side):
    if not isinstance(side, dict):
        return {"used_ms": 0, "shown": "?", "pen": 0}
    return {
        "used_ms": side.get("used_ms", 0),
        "shown": shown(side.get("shown", "?"), 8),
        "pen": side.get("pen", 0),
    }


def _attention(board):
    """0 needs the director now (a call, offline, a fault, waiting for records), 1 look soon
    (overtime, stopped mid-game), 2 playing, 3 nothing to do (ready, ended)."""
    if board.get("call") or not board["online"] or board["faults"] or board["waiting"]:
        return 0
    if board["state"] == "paused" or any(s["shown"].startswith("-") for s in (board["A"], board["B"])):
        return 1
    return 2 if board["state"] == "running" else 3


def board_order(name):
    """Boards in their natural order: 2 before 10 (only ASCII digits count as a number: `²` is a
    digit to Python, and `int` refuses it)."""
    name = str(name)
    return (0, int(name), "") if name.isascii() and name.isdigit() and len(name) < 20 else (1, 0, name)
