"""The director's requests from outside the buttons: adjust, late start, round over, new game,
reopen, set, and the answers to the board's call.

A part of `GameClock` (core.py). The buttons' chords reach the same corrections and late starts
(play.py); a request the game does not allow now is refused with an `error` record that says why.
Each request may name who made it (`by`: a label, the page session or tool the director used):
the records it makes of the kinds in `ASKED` say so beside `source` (the way it came), so the
clock's own record answers "who gave B a minute, and when" (docs/protocol.md).
"""

from ..wire.records import SIDES
from . import spare
from .play import Refused
from .state import State
from .timecode import NS_PER_MS, NS_PER_S
from .view import Notice

# `Refused` is play.py's; it is named here too for readers of the requests.
__all__ = ["DirectorRequests", "Refused"]

#: the records that name who asked for the request that made them
ASKED = ("adjust", "late_start", "reopen", "end", "set", "call_answer", "error", "takeover", "moved")


class DirectorRequests:
    """The director's requests of a game, done by `play` (a `Play`) or refused.

    What it needs of the clock: `emit(ev, t_ns, **fields)` makes a record of the game as it stands.
    Each request names the game (a `GameState`) it is for, and the instant it is taken at.
    """

    def __init__(self, play, emit):
        self._plain_emit = emit
        self.play = play.speaking_through(self._emit)
        self._asked = {}  # who asked for the request being done, as record fields

    def adjust(self, game, t_ns, side, delta_ms, source, by=None):
        """A correction of `side` by `delta_ms` (the same rules as the buttons' chord)."""
        self._request(t_ns, by, self.play.correct, game, t_ns, side, delta_ms * NS_PER_MS, source)

    def late_start(self, game, t_ns, player, source, by=None):
        """A late start of `player` (`A`, `B` or `both`): only on a fresh game."""
        absent = SIDES if player == "both" else (player,)
        self._request(t_ns, by, self.play.late_start, game, t_ns, absent, source)

    def round_over(self, game, t_ns, source, by=None):
        """The round is over: the game ends at once; refused on an ended game."""
        self._request(t_ns, by, self.play.round_over, game, t_ns, source)

    def next_game(self, game, t_ns, asked):
        """The director's `new game` (`asked`: its `source`, `by`): only on an ended game."""
        self._request(t_ns, asked.get("by"), self.play.open_next, game, t_ns, asked)

    def reopen(self, game, t_ns, source, by=None):
        """An ended game (not a forfeit) goes back to stopped, exactly as it was."""
        self._request(t_ns, by, self.play.reopen, game, t_ns, source)

    def take_over(self, game, t_ns, taken, source, by=None):
        """A spare takes over a dead clock's game (`taken`, a `spare.Handover`): only on a fresh game."""
        self._request(t_ns, by, self._take_over, game, t_ns, taken, source)

    def _take_over(self, game, t_ns, taken, source):
        spare.take_over(game, t_ns, taken)
        if taken.call is not None:  # the dead clock's open call is this board's now
            self.play.calls.carry(taken.call)
        game.notice = Notice("takeover")
        self._emit("takeover", t_ns, **spare.record_fields(taken), source=source)

    def moved(self, game, t_ns, game_seq, to, source, by=None):
        """The hall says this clock's game `game_seq` moved to the spare `to` (it came back after
        a takeover): the game ends here at once, so no side's time runs on it again."""
        self._request(t_ns, by, self._moved, game, t_ns, game_seq, to, source)

    def _moved(self, game, t_ns, game_seq, to, source):
        if game.seq != game_seq:
            raise Refused(f"moved: this clock's game is seq {game.seq}, not {game_seq}")
        if game.state == State.ENDED:
            raise Refused(f"moved: game {game_seq} has ended here ({game.end_reason})")
        game.end(t_ns, "moved")
        game.notice = Notice("moved")
        self._emit("moved", t_ns, game_seq=game_seq, to=to, source=source)

    def answer_call(self, game, t_ns, call, answer, source, by=None):
        """The answer to the board's call `call` (its record's seq): `taken` or `done`."""
        self._request(t_ns, by, self.play.answer_call, game, t_ns, call, answer, source)

    def selftest(self, game, t_ns, selftests, source, by=None):
        """A self-test (`selftests`, a `selftest.SelfTests`): only on a fresh game."""
        self._request(t_ns, by, selftests.start, game, t_ns, source, by)

    def set_scene(
        self, game, t_ns, scene, wall_ms, round, table, times_s, start_ms=None, by=None, source=None,
        speech=None, large=None,
    ):  # fmt: skip  # laid out by hand, the way it reads best
        """A `set` taken by `scene` (a `Scene`): starting times for `game` while nobody has pressed,
        and the round's start at the time of day `start_ms`; a `set` record says what was set, for
        which game and the way it came (`source`; an `error` record why a start cannot be taken)."""
        what = (wall_ms, round, table, times_s, start_ms, source, speech, large)
        self._request(t_ns, by, self._set, game, t_ns, scene, *what)

    def _set(self, game, t_ns, scene, wall_ms, round, table, times_s, start_ms, source, speech, large):
        if start_ms is not None:  # refused before anything is set
            if game.state != State.READY:
                raise Refused(f"set start: only on a fresh game ({game.state}): start a new game first")
            if wall_ms is None and scene.offset_ms is None:
                raise Refused(
                    "set start: this clock does not know the time of day (its clock is not synchronised)"
                )
        fields, this_times = scene.set(
            t_ns, game.t0_ns, game.state == State.READY, wall_ms, round, table, times_s, speech, large
        )
        game.give_start_times({side: s * NS_PER_S for side, s in (this_times or {}).items()})
        if start_ms is not None:
            fields.update(
                _round_start_at(game, t_ns, wall_ms if wall_ms is not None else scene.wall_ms(t_ns), start_ms)
            )
        self._emit("set", t_ns, **fields, **({"source": source} if source else {}))

    def _request(self, t_ns, by, action, *args):
        """Do `action(*args)` at `t_ns` for `by`, or answer its refusal with an `error` record saying why."""
        self._asked = {"by": by} if by else {}
        try:
            action(*args)
        except Refused as why:
            self._emit("error", t_ns, detail=str(why))
        finally:
            self._asked = {}

    def _emit(self, ev, t_ns, **fields):
        self._plain_emit(ev, t_ns, **fields, **(self._asked if ev in ASKED else {}))


def _round_start_at(game, t_ns, now_ms, start_ms):
    """The round's start at the time of day `start_ms`, placed on `game`'s own clock from the time
    of day `now_ms` at `t_ns` (exact to the ms); one already past starts now, saying how late."""
    late_ms = max(0, now_ms - start_ms)
    at_ns = max(t_ns + (start_ms - now_ms) * NS_PER_MS, t_ns)
    game.round_start_at = (at_ns, start_ms, late_ms)
    fields = {"start_ms": start_ms, "start_at_ns": at_ns - game.t0_ns}
    return {**fields, "late_ms": late_ms} if late_ms else fields
