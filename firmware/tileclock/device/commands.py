"""The director's commands, answered in one place (docs/protocol.md, "Commands").

A command reaches the clock as a line (from the serial link, or any other way in);
`CommandHandler` parses it, does what it asks through the clock's own methods
(the clock decides whether the game allows it, and records the answer), and
publishes the records that makes. The loop only hands it the lines.

Nothing the line sends can flood the card: a `status` is answered on the link
that asked, not journaled; resends are streamed by the link, merged; and the
`error` records that bad lines and impossible resends earn are rationed
(`AnswerBudget`), the next one saying how many were dropped.
"""

import json

from ..clock.calls import OpenCall
from ..clock.spare import Handover
from ..clock.timecode import ms
from ..wire.protocol import CommandError, frame, parse_command
from ..wire.records import SIDES
from .ratelimit import AnswerBudget
from .screen.score_code import ScoreCode


class CommandHandler:
    """Answers command lines for `clock`, serving resends from `journal` over `link` (the way back
    for a command handed over with no link of its own: the serial link).

    `publish(records)` journals and sends records, returning how many it took; `faults()` names
    the parts at fault now (for the answer to `status`).
    """

    def __init__(self, clock, journal, link, publish, faults=lambda: (), clock_id=None):
        self.clock = clock
        self.journal = journal
        self.link = link
        self.publish = publish
        self.faults = faults
        self.clock_id = clock_id
        self.errors = AnswerBudget()
        #: the hall's score link of this game, shown on the panels as a QR code (never a record)
        self.score_code = ScoreCode()
        #: now_ns -> the time of day (ms) from this clock's own wall clock, or None (timesync.py)
        self.wall = None
        #: (t0_ns, made_ms) of the game a sealed `new game` opened, and when the director made it
        self._opened = None
        self._resending = {}  # the links a resend was asked of (in order): they name what they lacked
        self._answers = {
            "adjust": self._adjust,
            "round_over": self._round_over,
            "new_game": self._new_game,
            "set": self._set,
            "ack": self._ack,
            "late": self._late,
            "reopen": self._reopen,
            "selftest": self._selftest,
            "takeover": self._takeover,
            "moved": self._moved,
            "call": self._call,
            "code": self._code,
        }

    def serve(self, lines, now_ns, link=None):
        """Answer every line in `lines` (bytes, without line endings); returns the records made.

        `link` is the way they came in (default: the serial link): a resend or a status answer goes
        back on it; a link with a `seal` (the hall's, with a key) takes only commands sealed with
        the clock's key and a new counter, and a refused one is answered with an `error` record. Bad lines are answered with at most one `error` record for all of them (naming
        how many), so a noisy line can never flood the journal.
        """
        made = 0
        bad = []
        seal = link.seal if link is not None else None  # the hall's with a key: sealed commands only
        for raw in lines:
            sealed = None
            try:
                if seal is not None:
                    sealed = seal.open(raw)
                    raw = sealed.line
                command = parse_command(raw)
            except CommandError as error:
                bad.append((str(error), raw[:40].decode("ascii", "replace")))
                continue
            if sealed is not None:
                refused = seal.refusal(command.name, sealed.made_ms, self._wall_ms(now_ns), self._began_ms())
                if refused is not None:  # its own record, naming the action: the hall reads it
                    made += self._refuse(now_ns, command, sealed, raw, *refused)
                    continue
            game = self.clock.t0_ns if self.clock.state is not None else None
            made += self.answer(command, now_ns, link)
            if sealed is not None and self.clock.state is not None and self.clock.t0_ns != game:
                # the director opened this game: it began at the command's time in the director's
                # own reckoning, so its next command (made after) is never taken for an older one
                self._opened = (self.clock.t0_ns, sealed.made_ms)
        if bad:
            detail, line = bad[0]
            if len(bad) > 1:
                detail += f" (and {len(bad) - 1} more bad lines)"
            made += self._error(now_ns, detail, line)
        return made

    def answer(self, command, now_ns, link=None):
        """Do what one parsed command asks; returns the records made."""
        link = self.link if link is None else link
        if command.name == "resend":
            return self._resend(now_ns, *command.args, link=link)
        if command.name == "status":
            return self._status(now_ns, link)
        if command.name in ("ack", "code"):  # make no record: nobody to name
            return self._answers[command.name](now_ns, *command.args)
        # the record a request makes says the way it came (the link's name; with no link at all, a
        # script's command, as on the serial line) and who sent it (by=)
        asked = {"source": "serial" if link is None else link.part, "by": command.by}
        return self._answers[command.name](now_ns, *command.args, **asked)

    def follow_up(self, now_ns):
        """After the commands of a wake: report seqs a finished resend could not find, and how many
        error answers were dropped once the budget allows one; returns the records made."""
        made = 0
        for link in self._resending:
            missing = link.take_missing()
            if missing:
                made += self._error(now_ns, f"resend: seq {missing} not held (damaged, skipped or pruned)")
        due = self.errors.due_ns()
        if due is not None and now_ns >= due:
            made += self._error(now_ns, "bad commands not answered")
        return made

    def due_ns(self):
        """When the loop must wake to say how many error answers were dropped, or None."""
        return self.errors.due_ns()

    def _status(self, now_ns, link=None):
        if link is None:  # no way back (a script's command): the status is a record
            return self.publish(self.clock.status(now_ns))
        made = self.publish(self.clock.advance(now_ns))  # what fell due up to now comes first
        link.answer(self._status_answer(now_ns))  # sent after the wake's records (the loop pumps)
        return made

    def _status_answer(self, now_ns):
        """The clock as of `now_ns` and the newest seq it made, as one framed line: not a record
        (no `seq`), so it is sent and never journaled."""
        view = self.clock.view(now_ns)
        answer = {"ev": "status", "last_seq": self.journal.next_seq - 1}
        if self.clock_id is not None:
            answer["clock"] = self.clock_id
        answer.update(t_ms=ms(self.clock.elapsed_ns(now_ns)), state=str(view.state), run=view.run)
        for side in SIDES:
            shown = view.side(side)
            answer[side] = {"used_ms": shown.used_ms, "shown": shown.shown, "pen": shown.pen}
        faults = list(self.faults())
        if faults:
            answer["faults"] = faults
        return frame(json.dumps(answer, separators=(",", ":")))

    def _wall_ms(self, now_ns):
        """This clock's wall clock at `now_ns` (ms), or None while it cannot say (not synchronised)."""
        return None if self.wall is None else self.wall(now_ns)

    def _began_ms(self):
        """When the current game began by this clock's wall clock (ms), or None (no game, or no wall
        clock); for a game a sealed `new game` opened, when the director made that command."""
        if self.clock.state is None or self.wall is None:
            return None
        t0_ns = self.clock.t0_ns
        if self._opened is not None and self._opened[0] == t0_ns:
            return self._opened[1]
        return self.wall(t0_ns)

    def _refuse(self, now_ns, command, sealed, raw, why, detail):
        """The `error` record refusing a sealed `command` for its time (`why`: `stale`,
        `before_game`, `unsynchronised`), naming its action (`by`) and when it was made."""
        name = command.name.replace("_", " ")
        fields = {"refused": why, "made_ms": sealed.made_ms}
        if command.by is not None:
            fields["by"] = command.by
        return self._error(
            now_ns, f"refused: {name}: {detail}", raw[:40].decode("ascii", "replace"), **fields
        )

    def _round_over(self, now_ns, **asked):
        return self.publish(self.clock.round_over(now_ns, **asked))

    def _new_game(self, now_ns, **asked):
        return self.publish(self.clock.new_game(now_ns, **asked))

    def _late(self, now_ns, player, **asked):
        return self.publish(self.clock.late_start(now_ns, player, **asked))

    def _reopen(self, now_ns, **asked):
        return self.publish(self.clock.reopen(now_ns, **asked))

    def _selftest(self, now_ns, **asked):
        return self.publish(self.clock.selftest(now_ns, **asked))

    def _takeover(self, now_ns, clock, seq, game, sides, first, run, call=None, **asked):
        used, limits, late = ({side: sides[side][i] for side in SIDES} for i in range(3))
        taken = Handover(clock, seq, game, used, limits, late, first, run, call and OpenCall(*call))
        return self.publish(self.clock.take_over(now_ns, taken, **asked))

    def _moved(self, now_ns, game, to, **asked):
        return self.publish(self.clock.moved(now_ns, game, to, **asked))

    def _adjust(self, now_ns, side, delta_ms, **asked):
        return self.publish(self.clock.adjust(now_ns, side, delta_ms, **asked))

    def _call(self, now_ns, call, answer, **asked):
        return self.publish(self.clock.answer_call(now_ns, call, answer, **asked))

    def _set(self, now_ns, values, source=None, by=None):
        if "start_ms" in values and "wall_ms" not in values and self.wall is not None:
            # a round's start is a time of day on this clock's own wall clock (chrony keeps it on
            # the director's laptop), read at the instant the command is taken
            wall_ms = self.wall(now_ns)
            values = values if wall_ms is None else {**values, "wall_ms": wall_ms}
        return self.publish(self.clock.set_scene(now_ns, **values, by=by, source=source))

    def _code(self, now_ns, game_seq, base, tokens):
        this = self.clock.game.seq
        if game_seq != this:  # a link for a game gone by (the players started the next): not shown
            return self._error(now_ns, f"code: for game {game_seq}, not this one ({this})")
        self.score_code.take(game_seq, base, tokens)
        return 0

    def _ack(self, now_ns, seq):
        self.journal.mark_held(seq)  # the director holds every record up to `seq`: no answer
        return 0

    def _resend(self, now_ns, first, last, link=None):
        journal = self.journal
        newest = journal.next_seq - 1
        last = newest if last is None else last
        link.resend(max(first, journal.first_seq), min(last, newest))  # streamed by the link, merged
        self._resending[link] = True
        if first < journal.first_seq or last > newest:
            held = [journal.first_seq, newest]  # as a field, so the director reads no prose
            return self._error(now_ns, f"resend: the journal holds seq {held[0]}-{held[1]}", holds=held)
        return 0

    def _error(self, now_ns, detail, line=None, **fields):
        if not self.errors.allow(now_ns):
            return 0
        dropped = self.errors.take_dropped()
        more = {"dropped": dropped, **fields} if dropped else fields
        return self.publish(self.clock.error(now_ns, detail, line, **more))
