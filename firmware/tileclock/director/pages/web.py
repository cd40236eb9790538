"""The director's web page of the hall: every board live, each game in full (docs/hall.md).

Starlette (`app.py`, its routes) served by uvicorn at two doors (`door.py`: each from a thread of
its own, on a socket bound at once, HTTPS with the page's certificate unless the director asked
for plain HTTP). Behind it: the Host check against the
names the director allows (`guard.py`), the shared live stream (`live.py`), a cap on connections
and a time limit on each request. In the `director` extra: a clock installs none of it.
"""

import io
import ipaddress
import logging
import time

from ...clock.history import game_scene, view_at
from ..hall.answers import answered, before_a_round, what_of
from ..hall.audit import AuditLog
from ..hall.round_control import RoundControl
from ..hall.spare import flag_late, flagged_before, tell_moved, told_before
from ..records.moved import joined
from .app import COMMAND_HEADER, MAX_FORM_BYTES, make_app
from .door import Door, PageTlsError
from .doors import DIRECTOR_LIMITS, PHONE_LIMITS, AddressLimits, Sessions
from .guard import own_hosts
from .live import MAX_UPDATES_PER_S, MAX_VIEWERS
from .once import OneTimeValues

__all__ = [
    "COMMAND_HEADER",
    "MAX_CONNECTIONS",
    "MAX_FORM_BYTES",
    "MAX_UPDATES_PER_S",
    "MAX_VIEWERS",
    "HallPage",
]

log = logging.getLogger(__name__)

#: connections one address may hold open at the director's door (viewers, pictures, commands);
#: one more is answered 503
MAX_CONNECTIONS = DIRECTOR_LIMITS["connections"]
#: connections at once at the players' door, every address together (every phone of a large hall)
MAX_PHONE_CONNECTIONS = 1000
#: connections at once at the director's door, every address together, where it asks for a login
MAX_DIRECTOR_CONNECTIONS = 1000
#: the most the feed waits for the audit trail's outcome lines before it acknowledges their records
OUTCOME_S = 5.0


class HallPage:
    """Serves `feed` (a `HallFeed`) on `host`:`port` (0: any free port) from a thread of its own.

    `allowed_hosts`: the names and addresses a browser may call the page by (its Host header);
    None for this laptop's own (`guard.own_hosts`). `draw_panel(view, side)` draws one panel as the
    clock does (a Pillow image): the command line hands in the clock's own renderer, so the
    director's rooms never import the device's; without it the page has no panel pictures (404).

    `phones` ((host, port), or None for none): the players' door, a server of its own serving
    the score form and its two routes only, for browsers calling it `phone_hosts` (None: the
    names `own_hosts(host)` gives). `host`:`port` is the director's door: every route; `login`
    (None: unless it listens on loopback) whether it needs a login, with the password whose hash
    is `password_hash` (doors.hash_password) or a one-time link (`one_time_link`).

    `tls` ((certificate file, key file): hall-setup's `tileclock-page.pem` and `.key`) serves both
    doors over HTTPS, but the doors `plain` names ("director", "players"), which the director asked
    for in the clear; without `tls` both are plain HTTP. A plain door beyond loopback is said on
    the page's header (`in_the_clear`)."""

    def __init__(
        self,
        feed,
        host="127.0.0.1",
        port=8080,
        allowed_hosts=None,
        draw_panel=None,
        scores=None,
        pairings=None,
        links=None,
        phones=None,
        phone_hosts=None,
        login=None,
        password_hash=None,
        tls=None,
        plain=(),
    ):
        self.feed = feed
        self._told_moved = set()  # (clock, game seq, spare) of the moved games whose clock was told this run
        self.draw_panel = draw_panel
        self.scores = scores  # an event.entries.ScoreBook: the score entry's routes answer with it
        self.links = links  # an event.score_links.ScoreLinks where the clocks are sent score codes
        folder = getattr(getattr(feed, "store", None), "outdir", None)
        #: every director's action, in the records folder (hall/audit.py): made here, once, before
        #: any thread (the feed's listener, a request's worker, the demo director) can ask for it
        self.audit = AuditLog(folder) if folder else None
        #: the `moved` commands an earlier run sent (hall/spare.py): never audited twice
        self._moved_before = told_before(folder) if folder else {}
        self._flagged_late = flagged_before(folder) if folder else set()  # late presses said (spare.py)
        self.pairings = pairings  # an event.hall_pairings.HallPairings: the players' names, or None
        #: the director's `--round` (checked against TSH's at the start), or None
        self.given_round = None
        self.plan = None  #: each board's [row, column] in the room (hall/plan.py), or None
        # the round started from the page, kept in the records folder (hall/round_control.py)
        self.rounds = RoundControl(feed, folder=folder)
        if self.audit is not None:  # a round started before a restart: answered by its boards only
            self.audit.resume_round(self.rounds.current)
        self.allowed_hosts = list(allowed_hosts) if allowed_hosts else own_hosts(host)
        # who the director is (doors.py): a login where the director's door is open beyond this laptop
        login = not _loopback(host) if login is None else login
        self.sessions = Sessions(login, password_hash)
        self.onces = OneTimeValues()  # each action's, so none is applied twice (once.py)
        # the director's door: every route; the players' door (`phones`, HOST:PORT): the form's
        # each door its own caps per address. The director's door on this laptop has none in all (a
        # limit for strangers must never refuse the director's own tab; no stranger reaches it);
        # served beyond it (a login), a cap in all too, so many addresses cannot hold connections
        # without end (each is held to its own cap first)
        limits = AddressLimits(**DIRECTOR_LIMITS)
        total = MAX_DIRECTOR_CONNECTIONS if self.sessions.login else None
        tls_of = {door: None if door in plain else tls for door in ("director", "players")}
        self.door = Door(
            make_app(self, self.allowed_hosts, limits=limits), host, port, "hall-page", total, limits,
            tls_of["director"],
        )  # fmt: skip  # the app, then where it listens
        self.host, self.port = self.door.host, self.door.port
        self.phones = None
        if phones is not None:
            phone_host, phone_port = phones
            limits = AddressLimits(**PHONE_LIMITS)
            try:
                self.phones = Door(
                    make_app(self, phone_hosts or own_hosts(phone_host), door="players", limits=limits),
                    phone_host, phone_port, "hall-phones", MAX_PHONE_CONNECTIONS, limits, tls_of["players"],
                )  # fmt: skip  # the app, then where it listens
            except (OSError, PageTlsError):
                self.door.close()
                raise
        # the clocks' answers to its actions, their outcome lines on the disk before the broker's
        # copies of the records are acknowledged (a stand-in feed of a test may have neither way)
        before_ack = getattr(feed, "subscribe_before_ack", None)
        subscribe = getattr(feed, "subscribe", None)
        if before_ack is not None:
            before_ack(self._answered, self._outcomes_durable)
        elif subscribe is not None:
            subscribe(self._answered)

    def _answered(self, clock_id, record, _log):
        """A record stored from `clock_id`: if it answers an action on the audit trail, its
        outcome line, queued (the feed's thread does not wait on the disk for it; a disk that
        refuses it stops nothing: the action then reads as not answered). A refusal of a command
        to several boards is said on the hall's console too. A dead clock heard again after its
        game moved is told so (`tell_moved`): that one audit line, rare (once a moved game), is
        written and synced on the feed's thread, before the command leaves."""
        if self.audit is None:
            return
        tell_moved(self.audit, self.feed, self._told_moved, clock_id, record, _log, self._moved_before)
        flag_late(self.audit, self.feed, self._flagged_late, clock_id, record, _log)
        outcome = self.audit.answered(clock_id, record)
        several = self.audit.to_several
        if outcome and several and outcome["of"] == several["id"] and outcome["outcome"] != "applied":
            board = self.feed.boards.get(clock_id) if hasattr(self.feed, "boards") else None
            name = board.as_dict(time.time())["board"] if board is not None else clock_id
            log.warning(
                "board %s (clock %s) %s %s: %s",
                name, clock_id, outcome["outcome"].replace("_", " "), what_of(several), outcome.get("reason"),
            )  # fmt: skip  # laid out by hand, the way it reads best

    def _outcomes_durable(self):
        """The outcome lines queued so far on the disk (at once when none is queued)."""
        if self.audit is not None:
            self.audit.flush(OUTCOME_S)

    def with_answers(self, snapshot):
        """`snapshot` (the feed's) with what each board did with the newest command to several
        boards (`several`, hall/answers.py) and the boards that cannot start a timed round now
        (`before_round`)."""
        line = self.audit.to_several if self.audit is not None else None
        answers = self.audit.answers_to(line["id"]) if line is not None else {}
        snapshot["several"] = answered(line, answers, snapshot["boards"])
        if self.in_the_clear:  # a door in plain HTTP on the Wi-Fi: said with the broker's
            snapshot["in_the_clear"] = "; ".join(
                filter(None, (snapshot.get("in_the_clear"), self.in_the_clear))
            )
        snapshot["before_round"] = before_a_round(snapshot["boards"])
        started = self.audit.round_started if self.audit is not None else None
        if started is not None and started.get("id"):  # the round's start: what each board did with it
            answers = self.audit.answers_to(started["id"])
            snapshot["round_answers"] = {a: said["outcome"] for a, said in answers.items() if a is not None}
        return snapshot

    @property
    def in_the_clear(self):
        """The page's words for its doors served in plain HTTP beyond this laptop's loopback, or
        None (every door on the Wi-Fi speaks TLS)."""
        said = []
        if self.door.tls is None and not _loopback(self.door.host):
            said.append(
                f"NOT ENCRYPTED: the director's page is plain HTTP on {self.door.host}:{self.door.port} "
                "(its password and session readable on the Wi-Fi)"
            )
        if self.phones is not None and self.phones.tls is None and not _loopback(self.phones.host):
            said.append(
                f"NOT ENCRYPTED: the players' door is plain HTTP on {self.phones.host}:{self.phones.port} "
                "(the phones' links and scores readable on the Wi-Fi)"
            )
        return "; ".join(said) or None

    @property
    def address(self):
        """The director's door, as a browser on this laptop calls it."""
        return self.door.address

    def one_time_link(self):
        """A link that logs one browser in to the director's door, once."""
        return f"{self.address}login?once={self.sessions.one_time_link()}"

    @property
    def phone_address(self):
        """The players' door (the score form's), or None without one."""
        return self.phones.address if self.phones else None

    def start(self):
        """Serve both doors (each from a thread of its own); returns self. OSError if one does not
        start listening within `START_S`."""
        for door in (self.door, self.phones):
            if door is not None:
                door.start()
        return self

    def close(self):
        """Stop both doors, then write the clocks' last answers."""
        unsubscribe = getattr(self.feed, "unsubscribe", None)
        if unsubscribe is not None:
            unsubscribe(self._answered)
        for door in (self.phones, self.door):
            if door is not None:
                door.close()
        if self.audit is not None:
            self.audit.flush(5)  # the clocks' last answers on the disk before the hall stops

    # --- what the routes answer

    def game(self, clock_id):
        """The game the store is writing for `clock_id` (a `clock.history.Game`), or None."""
        log_ = self.feed.store.log_of(clock_id)
        return log_.game if log_ else None

    def board_json(self, clock_id):
        game = self.game(clock_id)
        if game is None:
            return None
        whole = joined(game, self.feed.store.outdir)  # a spare's: the dead clock's part first
        board = next((b for b in self.feed.snapshot()["boards"] if b["clock"] == clock_id), {})
        return {
            "clock": clock_id,
            "board": board.get("board"),
            "game_seq": game.seq,
            "records": whole.records,
            "corrections": [r for r in whole.records if r["ev"] == "adjust"],
            "call": board.get("call"),
            "table": board.get("table"),
            "end_ms": whole.records[-1]["t_ms"],
            "picture": _plot_available(),
        }

    def table_facts(self, table, round_number=None):
        """What a table's score form shows: the penalties its game's clock applies, in words, and
        (with the pairings) who plays there, by side when that is known."""
        from ..event.score_form import penalties_in_words

        game = self._table_game(table, round_number)
        facts = {"penalties": penalties_in_words(game.records if game else None)}
        if self.pairings is not None and round_number is not None:
            facts.update(self.pairings.players(round_number, table, _first_side(game)))
        return facts

    def next_round(self):
        """The round the page offers when none is started: TSH's next unscored round from the
        pairings' last copy (it moves on as TSH rewrites its files), else the director's `--round`."""
        found = self.pairings.next_round if self.pairings is not None else None
        return found if found is not None else self.given_round

    def round_players(self, round_number):
        """{table: who plays there} for every paired table of the round (the Scores page), or {}."""
        if self.pairings is None:
            return {}
        try:
            tables = self.pairings.tables(round_number)
        except (OSError, ValueError):
            return {}
        return {
            table: self.pairings.players(
                round_number, table, _first_side(self._table_game(table, round_number))
            )
            for table in tables
        }

    def _table_game(self, table, round_number=None):
        """The game of `round_number` (None: the newest) on the clock whose board is `table`, or
        None: the game the hall is writing, unless nobody has pressed in it yet and the game that
        ended before it is of that round (after round over the clock opens a new, empty game)."""
        board = next((b for b in self.feed.snapshot()["boards"] if str(b.get("board")) == str(table)), None)
        log_ = self.feed.store.log_of(board["clock"]) if board else None
        if log_ is None:
            return None
        game, ended = log_.game, getattr(log_, "ended_game", None)
        if ended is None or ended is game or _played(game):
            return game
        if round_number is not None and game_scene(ended.records).get("round") not in (None, round_number):
            return game
        return ended

    def panels_png(self, clock_id, at_ms):
        from PIL import Image

        game = self.game(clock_id)
        if game is None or self.draw_panel is None:
            return None
        view, _record, _ = view_at(joined(game, self.feed.store.outdir), at_ms=max(0, at_ms))  # both parts
        frames = [self.draw_panel(view, side).convert("L") for side in "AB"]
        width, height = frames[0].size
        scale, gap = 3, 8
        sheet = Image.new("L", (2 * width * scale + gap, height * scale), 60)
        for number, frame in enumerate(frames):
            sheet.paste(frame.resize((width * scale, height * scale)), (number * (width * scale + gap), 0))
        out = io.BytesIO()
        sheet.save(out, "PNG")
        return out.getvalue()

    def picture_svg(self, clock_id):
        from ..records import plot

        game = self.game(clock_id)
        if game is None or not plot.available():
            return None
        board = next((b for b in self.feed.snapshot()["boards"] if b["clock"] == clock_id), {})
        whole = joined(game, self.feed.store.outdir)  # a spare's game: the dead clock's part first
        return plot.game_svg(whole, title=_picture_title(board.get("board"), game))


def _loopback(host):
    """Whether `host` (an address or name the door is bound to) is this laptop's loopback."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _played(game):
    """Whether anyone has pressed in `game` (a `Game`, or None), or it has ended."""
    return game is not None and any(r["ev"] in PLAYED for r in game.records)


#: a game's records that say it was played (a fresh game has its `new_game` and `set`s only)
PLAYED = ("start", "switch", "end", "forfeit", "late_start", "pause", "adjust")


def _picture_title(board, game):
    """The game picture's title, as a director names the game: its board, round and table."""
    opened = next((r for r in game.records if r["ev"] == "new_game"), {})
    words = [f"Board {board}" if board not in (None, "?") else "A board"]
    words += [f"{name} {opened[name]}" for name in ("round", "table") if opened.get(name) is not None]
    return ", ".join(words)


def _first_side(game):
    """The side whose clock first ran in play in `game` (a `Game`), or None."""
    if game is None:
        return None
    from ..records.facts import game_facts

    return game_facts(game.records).first_side


def _plot_available():
    from ..records import plot

    return plot.available()
