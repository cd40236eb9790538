"""A test double of TSH's remote queue reader and score store, as strict as TSH is.

Written from what TSH does (read for behaviour only; none of its code is here): with
`accept_remote_commands`, it takes `_dequeue.txt`'s lock (holding its own next cursor, made with
1) and runs `CURSOR.txt` after `CURSOR.txt` while the next one exists (the enqueue cursor is never
looked at: a file written and not yet counted is read all the same), deleting each it has run and
counting its cursor on; a missing file ends the look; it runs only `aps`. `aps P1 P2 S1 S2
ROUND DIV` is refused unless ROUND is P1's next unscored round and P1 is paired with P2 in it; a
bye (P2 = 0) must be bye_spread to 0 and is final at once; otherwise the entry is provisional
until the mirror (`aps P2 P1 S2 S1`) agrees, and a second provisional entry with other scores
replaces the first. When a score becomes final, the division's `.t` file is rewritten.
"""

import fcntl
import os
import re
from contextlib import contextmanager

from tileclock.director.event.tfile import read_players


class TshModel:
    """TSH in `tsh_dir` (its config.tsh naming `division NAME FILE`, optional bye_spread)."""

    def __init__(self, tsh_dir):
        self.dir = tsh_dir
        self.queue = os.path.join(tsh_dir, "remote_queue")
        self.files, self.bye_spread, self.accepts = {}, 50, False
        with open(os.path.join(tsh_dir, "config.tsh"), encoding="utf-8") as file:
            for line in file:
                words = line.split()
                if len(words) >= 3 and words[0] == "division":
                    self.files[words[1].upper()] = os.path.join(tsh_dir, words[2])
                found = re.match(r"\s*config\s+(\w+)\s*=\s*(\S+)", line)
                if found and found.group(1) == "bye_spread":
                    self.bye_spread = int(found.group(2))
                if found and found.group(1) == "accept_remote_commands":
                    self.accepts = found.group(2) == "1"
        self.players = {d: {p.number: p for p in read_players(f)} for d, f in self.files.items()}
        self.provisional = {}  # (division, round, pn) -> (opponent, own score, their score)
        self.log, self.refused, self.ran = [], [], []

    @contextmanager
    def holding(self, name="_enqueue.txt"):
        """TSH holding one of its queue locks (as while it dequeues)."""
        os.makedirs(self.queue, exist_ok=True)
        fd = os.open(os.path.join(self.queue, name), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            yield
        finally:
            os.close(fd)

    def _cursor_file(self, name):
        fd = os.open(os.path.join(self.queue, name), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # TSH's lock; a test holding it fails loudly
        text = os.read(fd, 64).decode().strip()
        return fd, int(text) if text else 1

    def run_queue(self):
        """One look at the queue, as TSH does on a signal or its minute's timer."""
        if not self.accepts or not os.path.isdir(self.queue):
            return
        dfd, cursor = self._cursor_file("_dequeue.txt")
        try:
            # TSH never reads the enqueue cursor: it takes CURSOR.txt while one is there, deleting
            # each it has run, and stops at the first missing (or empty: it dies, and tries again)
            while True:
                path = os.path.join(self.queue, f"{cursor}.txt")
                try:
                    with open(path, encoding="utf-8") as file:
                        command = file.read()
                except FileNotFoundError:
                    break
                if not command:
                    self.log.append(f"read({cursor}.txt) failed: empty")  # TSH is stuck on it
                    break
                self.ran.append(command.strip())
                self.command(command.strip())
                os.remove(path)
                cursor += 1
            os.lseek(dfd, 0, os.SEEK_SET)
            os.write(dfd, f"{cursor}\n".encode())
        finally:
            os.close(dfd)

    def command(self, text):
        """Run one queued command: only `aps`; anything else is ignored."""
        words = text.split()
        if not words or words[0].lower() != "aps":
            self.log.append(f"ignored {text!r}")
            return
        if len(words) != 7 or not all(re.fullmatch(r"-?\d+", w) for w in words[1:6]):
            return self._refuse(text, "usage: aps P1 P2 S1 S2 ROUND DIVISION")
        p1, p2, s1, s2, rnd = map(int, words[1:6])
        division = words[6].upper()
        players = self.players.get(division)
        if players is None or p1 not in players or (p2 and p2 not in players):
            return self._refuse(text, "no such division or player")
        one = players[p1]
        if rnd != self.next_round(one):
            return self._refuse(text, f"round {rnd} is not #{p1}'s next unscored ({self.next_round(one)})")
        if self.opponent(one, rnd) != p2:
            return self._refuse(text, f"#{p1} is not paired with #{p2} in round {rnd}")
        if p2 == 0:
            if s2 != 0:
                return self._refuse(text, "a bye's second score is 0")
            if s1 != self.bye_spread:
                return self._refuse(text, f"a bye scores {self.bye_spread}")
            self._final(division, one, rnd, s1)
            return self.flush(division)
        key = (division, rnd, p1)
        if key in self.provisional and self.provisional[key] != (p2, s1, s2):
            self.log.append(f"replaced provisional {key}: {self.provisional[key]} -> {(p2, s1, s2)}")
        self.provisional[key] = (p2, s1, s2)
        if self.provisional.get((division, rnd, p2)) == (p1, s2, s1):
            self._final(division, one, rnd, s1)
            self._final(division, players[p2], rnd, s2)
            del self.provisional[key], self.provisional[(division, rnd, p2)]
            self.flush(division)

    def _refuse(self, text, why):
        self.refused.append((text, why))

    @staticmethod
    def next_round(player):
        return len([s for s in player.scores if s is not None]) + 1

    @staticmethod
    def opponent(player, rnd):
        return player.opponents[rnd - 1] if rnd - 1 < len(player.opponents) else None

    @staticmethod
    def _final(_division, player, rnd, score):
        player.scores.extend([None] * (rnd - len(player.scores)))
        player.scores[rnd - 1] = score

    def flush(self, division):
        """Rewrite the division's `.t` file: each player's line with its scores now."""
        path = self.files[division]
        with open(path, encoding="utf-8") as file:
            lines = file.read().split("\n")
        by_line = {p.line: p for p in self.players[division].values()}
        for index, text in enumerate(lines):
            player = by_line.get(index + 1)
            if player is None:
                continue
            head, _, rest = text.partition(";")
            etc = rest[re.match(r"[-\d\s]*", rest).end() :]
            scores = " ".join(str(s) for s in player.scores)
            lines[index] = f"{head}; {scores}{'; ' + etc.lstrip('; ') if etc.strip() else ''}"
        with open(path + ".tmp", "w", encoding="utf-8") as file:
            file.write("\n".join(lines))
        os.replace(path + ".tmp", path)

    def scores(self, division, rnd):
        """{pn: score} of round `rnd` as the `.t` file now says (read back from disk)."""
        return {
            p.number: p.scores[rnd - 1]
            for p in read_players(self.files[division.upper()])
            if rnd - 1 < len(p.scores) and p.scores[rnd - 1] is not None
        }
