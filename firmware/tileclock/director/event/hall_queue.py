"""The hall's feed into TSH's remote queue (`tileclock hall --tsh-dir DIR`).

Every ten seconds, for each round with score entries, the round's scores are settled as
`tileclock scores` settles them (`round_scores`: the recorded games, DIR's `config.tsh` and its
`.t` files, the entries), and each table that is settled (its game ended on the clock, both phones
agreeing or the director's entry, every penalty applied) is queued once (`tsh_queue`). The `.t`
files are read again each time, so a table TSH has made final reads as "in TSH", and a round TSH
has finished gets nothing more. A failure (a lock TSH keeps, a full disk) is said once on the
console and kept for the page; the games stay waiting and are queued on the next pass.
"""

import logging
import os
import re
import threading

from ..records.gamefiles import NoGames
from .round_scores import read_inputs, round_scores
from .tsh_queue import QueueError, QueueRecord, games_of, not_read, queue_games

log = logging.getLogger(__name__)
POLL_S = 10.0  # TSH itself looks every 60 s; the records are read whole each pass
#: a queued score not in TSH's `.t` file after this long: TSH most likely refused it
REFUSED_S = 120
NOT_TAKEN = (
    "queued over two minutes ago and not in TSH's .t file: TSH most likely refused it (a round TSH "
    "is not on, or a pairing changed in TSH); see TSH's console, put it right there (`a`, `es`)"
)
_ENTRIES = re.compile(r"round-(\d+)-entries\.csv$")


class HallQueue:
    """Queues settled tables of `book` (a ScoreBook) from the records in `records` into TSH's
    queue in `tsh_dir`; `say(text)` tells the console of a failure and of its end."""

    def __init__(self, tsh_dir, records, book, say=None, poll_s=POLL_S, audit=None):
        self.tsh_dir, self.records, self.book, self.poll_s = tsh_dir, records, book, poll_s
        self.audit = audit  # the hall's AuditLog: each game queued, and each failure, has its line
        self.say = say or log.warning
        self.error = ""  # the last pass's failure, in words, or ""
        self.rounds = {}  # round -> {table or bye key: {"tsh": state, "tsh_why": words}}
        self._stop = threading.Event()
        self._pass = threading.Lock()  # one pass at a time (the thread's, or a caller's)
        self._thread = threading.Thread(target=self._run, name="tsh-queue", daemon=True)

    def start(self):
        """Start the passes in a thread of their own; returns self."""
        self._thread.start()
        return self

    def close(self):
        """Stop after the pass under way."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _run(self):
        while not self._stop.is_set():
            self.step()
            self._stop.wait(self.poll_s)

    def entry_rounds(self):
        """The rounds that have an entries file in the score book's folder."""
        try:
            names = os.listdir(self.book.folder)
        except OSError:
            return []
        return sorted(int(m.group(1)) for n in names if (m := _ENTRIES.match(n)))

    def step(self):
        """One pass over every round with entries: settle, queue what is new, note each table's state."""
        with self._pass:
            return self._step()

    def _step(self):
        errors = []
        rounds = self.entry_rounds()
        inputs = None
        if rounds:  # the games and TSH's files read once a pass, for every round with entries
            try:
                inputs = read_inputs([self.records], tsh_config=os.path.join(self.tsh_dir, "config.tsh"))
            except NoGames:  # entries before any game reached the hall: nothing to queue yet
                rounds = []
            except (ValueError, OSError) as error:  # config.tsh or a .t unreadable
                errors.append(str(error))
                rounds = []
            if inputs is not None and not_read(inputs.config):  # queued all the same: read later
                errors.append(not_read(inputs.config))
        for number in rounds:
            try:
                errors += self._round(inputs, number)
            except (ValueError, QueueError, OSError) as error:  # a round TSH is not on, a queue refused
                errors.append(f"round {number}: {error}")
        error = "; ".join(errors)
        if error != self.error:
            self.say(f"TSH's queue: {error}" if error else "TSH's queue: writing again")
            self._audit({"error": error or None})
            self.error = error
        return error

    def _round(self, inputs, number):
        found = round_scores(inputs, number, self.book.entries(number), queued=True)
        games = games_of(found.results)
        outcome = queue_games(self.tsh_dir, self.records, games)
        record = QueueRecord(self.records)
        for key in outcome.queued:
            self._audit({"queued": key, "commands": record.games.get(key, {}).get("commands")})
        states, fulls = {}, {}
        for division in found.results:
            for line in division.lines + division.forfeits:
                key = f"table {line.table}" if line.table else f"bye {line.players[0][0]}"
                full = fulls[key] = f"{number}/{division.name}/{key}"
                if line.what == "already in TSH":
                    states[key] = {"tsh": "in TSH", "tsh_why": ""}
                elif line.what == "forfeit":
                    pairs = [f"pair {pn} 0 {number} {division.name}" for pn, _, _ in line.players]
                    entered = ", ".join(line.text.splitlines())
                    states[key] = {
                        "tsh": "for the director",
                        "tsh_why": f"a forfeit, which TSH's queue cannot take: type {'; '.join(pairs)}; "
                        f"then a {number} {division.name}: {entered}",
                    }
                elif full in outcome.changed:
                    states[key] = {
                        "tsh": "changed",
                        "tsh_why": "changed after it was queued: change it in TSH (es)",
                    }
                elif line.differs:  # TSH has it, and the score changed since: never queued again
                    states[key] = {"tsh": "changed", "tsh_why": "; ".join(line.reasons)}
                elif record.state(full) == "queued" and (record.age(full) or 0) > REFUSED_S:
                    states[key] = {"tsh": "refused by TSH?", "tsh_why": NOT_TAKEN}
                elif record.state(full) == "queued":
                    states[key] = {"tsh": "queued", "tsh_why": ""}
                elif line.reasons or division.refused:
                    states[key] = {
                        "tsh": "not queued",
                        "tsh_why": "; ".join(line.reasons) or division.refused,
                    }
                else:
                    states[key] = {"tsh": "waiting", "tsh_why": outcome.error}
        before = self.rounds.get(number, {})
        for key, now in states.items():  # each table's state in TSH, on the trail as it changes
            # (a game queued has its own line, with its commands; waiting is nothing yet)
            if before.get(key, {}).get("tsh") != now["tsh"] and now["tsh"] not in ("queued", "waiting"):
                self._audit({"table": fulls[key], "tsh": now["tsh"], "why": now["tsh_why"] or None})
        self.rounds[number] = states
        return [outcome.error] if outcome.error else []

    def _audit(self, changed):
        if self.audit is None:
            return
        try:
            self.audit.record("tsh_queue", "hall", changed=changed)
        except OSError as error:  # the trail's own disk fault is the hall's to say: never stop here
            log.warning("the audit trail refused a TSH queue line: %s", error)

    def state(self, number):
        """What the page shows of round `number`: each table's TSH state, and the queue's failure."""
        return {"tables": dict(self.rounds.get(number, {})), "error": self.error or None}
