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

from ...wire.labels import is_count
from ..records.gamefiles import NoGames
from .round_scores import read_inputs, round_scores
from .tsh_queue import QueueError, QueueRecord, games_of, not_read, queue_games

log = logging.getLogger(__name__)
POLL_S = 10.0  # TSH itself looks every 60 s; the records are read whole each pass
#: a queued score not in TSH's `.t` file after this long: TSH most likely refused it
REFUSED_S = 120


def not_taken(why="a round TSH is not on, or a pairing changed in TSH"):
    """What a queued score TSH has not taken after `REFUSED_S` says, with the likely reason `why`."""
    return (
        f"queued over two minutes ago and not in TSH's .t file: TSH most likely refused it ({why}); "
        "see TSH's console, put it right there (`a`, `es`)"
    )


NOT_TAKEN = not_taken()


def key_of(division, line):
    """The queue record's key of a `tsh_entry.Line` of `division` (a DivisionEntry), as
    `tsh_queue.games_of` names its game: `3/A/table 1`, `3/B/bye 3`."""
    what = f"table {line.table}" if line.table else f"bye {line.players[0][0]}"
    return f"{division.round}/{division.name}/{what}"


def state_key(full):
    """The key of a queued game's state in a round (`full`: `key_of`'s): its table (`table 1`: the
    page's rows), or for a bye its division and player (`B/bye 3`: two divisions may each give
    player 3 a bye in one round)."""
    _round, division, what = full.split("/", 2)
    return what if what.startswith("table ") else f"{division}/{what}"


def queued_state(record, full, divisions):
    """The page's state of the queued game `full` (a `QueueRecord` key): `in TSH` when TSH's
    `.t` files have each of its scores (a bye, whose line goes once it is scored), `queued`, or
    past `REFUSED_S` and still not in TSH, `refused by TSH?` with the likely reason."""
    if tsh_has(divisions, record.games[full].get("commands", [])):
        return {"tsh": "in TSH", "tsh_why": ""}
    if (record.age(full) or 0) <= REFUSED_S:
        return {"tsh": "queued", "tsh_why": ""}
    why = likely_refusal(divisions, record.games[full].get("commands", []))
    return {"tsh": "refused by TSH?", "tsh_why": not_taken(why) if why else NOT_TAKEN}


def queued_apart(record, number, seen):
    """The games of round `number` queued (per `record`) that are not among the keys `seen`: a
    table whose pairing TSH changed since is in no match of the round any more, and is said all
    the same."""
    return [
        full
        for full, entry in sorted(record.games.items())
        if full.startswith(f"{number}/") and full.count("/") >= 2 and full not in seen
        and entry.get("state") == "queued"
    ]  # fmt: skip  # one condition a line


def _aps(command):
    """(P1, P2, S1, ROUND, DIV) of an `aps` command as the hall writes it, or None."""
    words = str(command).split()
    if len(words) != 7 or words[0] != "aps" or not all(is_count(w) for w in (words[1], words[2], words[5])):
        return None  # (not a command the hall writes: the record's shape allows any text)
    try:
        return int(words[1]), int(words[2]), int(words[3]), int(words[5]), words[6]
    except ValueError:
        return None


def _player(divisions, name, number):
    division = next((d for d in divisions if d.name == name), None)
    return next((p for p in division.players if p.number == number), None) if division else None


def tsh_has(divisions, commands):
    """Whether TSH's divisions (as its `.t` files say now) have every score of `commands`."""
    found = [_aps(command) for command in commands]
    if not found or None in found:
        return False
    for p1, _p2, s1, number, name in found:
        player = _player(divisions, name, p1)
        if player is None or number - 1 >= len(player.scores) or player.scores[number - 1] != s1:
            return False
    return True


def likely_refusal(divisions, commands):
    """Why TSH most likely refused a game's `aps` `commands`, from its divisions as its `.t` files
    say now (the first player's next unscored round, and whom they are paired with), or ''."""
    for found in map(_aps, commands):
        if found is None:
            continue
        p1, p2, _s1, number, name = found
        player = _player(divisions, name, p1)
        if player is None:
            return f"TSH's division {name[:20]} has no player #{p1} now"
        on = len([score for score in player.scores if score is not None]) + 1
        if on != number:
            return f"TSH has {player.name} (#{p1}) on round {on}, not round {number}"
        paired = player.opponents[number - 1] if number - 1 < len(player.opponents) else None
        if paired != p2:
            whom = {None: "nobody", 0: "a bye (0)"}.get(paired, f"#{paired}")
            return f"TSH pairs {player.name} (#{p1}) with {whom} in round {number} now, not #{p2}"
    return ""


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
                full = key_of(division, line)
                key = state_key(full)
                fulls[key] = full
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
                elif record.state(full) == "queued":
                    states[key] = queued_state(record, full, inputs.divisions)
                elif line.reasons or division.refused:
                    states[key] = {
                        "tsh": "not queued",
                        "tsh_why": "; ".join(line.reasons) or division.refused,
                    }
                else:
                    states[key] = {"tsh": "waiting", "tsh_why": outcome.error}
        for full in queued_apart(record, number, fulls.values()):  # its table gone from the match
            key = state_key(full)
            fulls[key] = full
            states[key] = queued_state(record, full, inputs.divisions)
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
