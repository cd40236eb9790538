"""TSH's remote score queue: a round's settled games put into `remote_queue/` as TSH reads it.

With `config accept_remote_commands = 1`, an interactive TSH watches the folder `remote_queue/`
beside its `config.tsh`. A sender locks `_enqueue.txt` (an exclusive, non-blocking `flock`; the
file holds the next cursor and a newline, and is made with 1 when absent), writes its command to
`CURSOR.txt`, writes the cursor + 1 back and wakes TSH: SIGUSR1 to the pid in `_signal.txt`, or a
newline into the fifo `_fifo.txt` (TSH also looks every minute). TSH runs only `aps` commands
(`aps P1 P2 S1 S2 ROUND DIV`): a game is two of them, mirrored, and becomes final in TSH when both
agree; a bye is one, `aps PN 0 BYE_SPREAD 0 ROUND DIV`. A forfeit between paired players cannot be
said in `aps`: it is left to the director, with the `pair` lines to type.

Nothing twice, nothing lost. TSH reads `CURSOR.txt` from its own dequeue cursor while the file
is there (it never looks at the enqueue cursor), so each command file is written atomically
(aside, synced, renamed: TSH never sees a part, or an empty file, which would stop its queue).
A writer killed after writing N.txt and before advancing the cursor leaves a file TSH may already
have run; the restarted writer writes the same commands at the same cursors (the cursor was not
advanced) and advances: where TSH had run them, its dequeue cursor is past them and the copies are
never read; where it had not, it reads them once. What was queued is kept in a small JSON record
in the records folder, read under the lock; a game is marked `pending` with its cursors before the
cursor moves and `queued` after, so a restart can tell from the cursor and the files whether a
pending game reached the queue. A lock on `_enqueue.txt` (another sender's) is waited for, a
bounded number of times, never broken.
"""

import errno
import fcntl
import json
import os
import signal
import stat
import time
from dataclasses import dataclass, field

from ...wire.decoder import Limits, Reason, WireError, cut, load_object
from ...wire.labels import is_count
from ...wire.schema import natural
from ...wire.segments import replace_file
from .tfile import MAX_BYTES, read_bytes

QUEUE = "remote_queue"
ENQUEUE = "_enqueue.txt"
DEQUEUE = "_dequeue.txt"
SIGNAL = "_signal.txt"
FIFO = "_fifo.txt"
RECORD = "tsh-queue.json"
#: the queue record as the hall writes it: `{"games": {KEY: {"state", "cursors", "commands", ...}}}`
RECORD_LIMITS = Limits(max_bytes=MAX_BYTES, max_depth=4, max_int_digits=16)
#: what a game in the record may be: its commands written (`pending`), or its cursor moved too
STATES = ("pending", "queued")


class QueueError(Exception):
    """The queue could not be written (a lock TSH keeps, a full disk, a folder we may not write):
    its message says what and where; nothing of the game is lost, it is queued on the next try."""


@dataclass
class Game:
    """One thing to queue: `key` names it (round/division/table, or the bye's player), `commands`
    are its `aps` lines, `pairs` the `pair` lines a director types first (a forfeit: not queued)."""

    key: str
    commands: list
    label: str = ""
    pairs: list = field(default_factory=list)


def not_read(config):
    """Why TSH will not read its queue, from its `config.tsh` (a `tfile.TshConfig`), or '': without
    `config accept_remote_commands` true, TSH never looks at `remote_queue/` (what is queued is
    read once the line is added and TSH restarted)."""
    if config is None or config.flag("accept_remote_commands"):
        return ""
    return (
        f"{config.path} has no `config accept_remote_commands = 1`, so TSH does not read its queue: "
        "add the line and restart TSH (what is queued is read then)"
    )


def queue_folder(tsh_dir):
    """`remote_queue/` beside TSH's `config.tsh` in `tsh_dir`."""
    return os.path.join(tsh_dir, QUEUE)


def games_of(results):
    """The `Game`s to queue from `tsh_entry.DivisionEntry` results: two mirrored `aps` a game, one
    a bye; a forfeit between paired players is a Game without commands and with its `pair` lines."""
    games = []
    for division in results:
        if division.refused:
            continue
        r, d = division.round, division.name
        for line in division.lines:
            if line.what == "game":
                (p1, _, s1), (p2, _, s2) = line.players[:2]
                games.append(
                    Game(
                        f"{r}/{d}/table {line.table}",
                        [f"aps {p1} {p2} {s1} {s2} {r} {d}", f"aps {p2} {p1} {s2} {s1} {r} {d}"],
                        f"table {line.table}",
                    )
                )
            elif line.what == "bye":
                # TSH's own `a` prompt gives an automatic bye; the queue never does: always send it
                pn, name, spread = line.players[0]
                games.append(Game(f"{r}/{d}/bye {pn}", [f"aps {pn} 0 {spread} 0 {r} {d}"], f"{name}'s bye"))
        for line in division.forfeits:
            if line.text:
                pairs = [f"pair {pn} 0 {r} {d}" for pn, _, _ in line.players]
                games.append(Game(f"{r}/{d}/table {line.table}", [], f"table {line.table}", pairs))
    return games


class QueueRecord:
    """What was queued, by game key, in `records/tsh-queue.json` (replaced whole each time)."""

    def __init__(self, records):
        self.path = os.path.join(records, RECORD)
        self.games = {}
        try:
            self.games = _games(load_object(read_bytes(self.path), RECORD_LIMITS))
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as error:  # a WireError too: the one decoder's, and the shape
            raise QueueError(
                f"{self.path}: not a queue record ({error}); move it aside to start afresh"
            ) from None

    def save(self):
        """Replace the record whole (aside, synced, renamed): a crash leaves the old or the new."""
        text = json.dumps({"games": self.games}, indent=1, sort_keys=True) + "\n"
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            replace_file(self.path, text.encode("utf-8"))
        except OSError as error:  # the records folder's disk, not TSH's: said as such
            raise QueueError(_disk_message("", error, f"the queue record {self.path}")) from None

    def state(self, key):
        """'queued', 'pending' or '' for the game `key`."""
        return self.games.get(key, {}).get("state", "")

    def age(self, key, now=None):
        """Seconds since the game `key` was queued, or None."""
        at = self.games.get(key, {}).get("at_s")
        return None if at is None else (time.time() if now is None else now) - at


def _games(data):
    """The games of a queue record read back (`data`, a JSON object), each as `queue_games` writes
    it; WireError (wrong_kind) for any other shape, which `state`, `age` and `_reached` would
    otherwise trip over mid-queue."""
    games = data.get("games", {})
    if not isinstance(games, dict):
        raise WireError(Reason.WRONG_KIND, "'games' is not an object", "games")
    for key, entry in games.items():
        if not (
            isinstance(entry, dict)
            and entry.get("state") in STATES
            and isinstance(entry.get("commands"), list)
            and all(isinstance(command, str) for command in entry["commands"])
            and isinstance(entry.get("cursors", []), list)
            and all(map(natural, entry.get("cursors", [])))
            and isinstance(entry.get("at", ""), str)
            and natural(entry.get("at_s", 0))
        ):
            raise WireError(Reason.WRONG_KIND, f"game {cut(key)} is not as the hall writes it", "games")
    return dict(games)


def _locked(folder, tries, wait, sleep):
    """The open `_enqueue.txt`, flocked; waits `tries` times `wait` s for a lock TSH holds."""
    path = os.path.join(folder, ENQUEUE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    for attempt in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if attempt + 1 < tries:
                sleep(wait)
    os.close(fd)
    raise QueueError(
        f"{path} is locked (TSH is taking or adding to its queue); waited {tries * wait:.0f} s, "
        "the lock is never broken: the scores stay waiting and are queued on the next try"
    )


def _cursor(fd, path):
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", "replace").strip()
    if not text:
        return 1  # made afresh (TSH makes it with 1 too)
    if not is_count(text) or int(text) < 1:  # (isdigit takes "²", which int refuses)
        raise QueueError(f"{path} holds {text[:20]!r}, not a cursor: look at TSH's queue before going on")
    return int(text)


def _advance(fd, cursor):
    # written in place, never renamed over: the lock is on this file's inode, and TSH's is too.
    # The cursor only grows, so the new digits cover the old ones; one small write, then synced
    data = f"{cursor}\n".encode("ascii")
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _dequeued(folder):
    """TSH's own next cursor (`_dequeue.txt`, read only, never locked: TSH's), 1 when none."""
    try:
        text = read_bytes(os.path.join(folder, DEQUEUE), limit=64).decode("ascii", "replace").strip()
    except OSError:
        return 1
    return int(text) if is_count(text) else 1


def _reached(folder, entry, cursor, dequeued):
    """Whether a pending game's commands reached TSH's queue: the enqueue cursor is past them, or
    TSH has read past them (it reads by the files, not the cursor), and each file is ours or gone
    (TSH deletes what it has run)."""
    cursors = entry.get("cursors", [])
    if not cursors or max(cursor, dequeued) <= max(cursors):
        return False
    for number, command in zip(cursors, entry.get("commands", []), strict=False):
        path = os.path.join(folder, f"{number}.txt")
        try:
            if read_bytes(path).decode("utf-8", "replace").strip() != command:
                return False  # another sender has that cursor now: ours never ran
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return True


def _may_be_tsh(pid):
    """Whether `pid` may be TSH (running tsh.pl): SIGUSR1 ends most other programs, and a pid
    left in `_signal.txt` by a TSH that has exited may be another program's now. Where /proc
    cannot say (not Linux), it may be."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            words = file.read(4096).lower()
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")  # on Linux: no such process
    except OSError:
        return True
    # TSH itself (`tsh.pl`, or `tsh` where installed so) among its words: the interpreter's name
    # alone (any perl program) is not enough
    names = [os.path.basename(word) for word in words.split(b"\0")]
    return any(name in (b"tsh", b"tsh.pl") for name in names)


def wake(folder):
    """Wake TSH: SIGUSR1 to the pid in `_signal.txt`, else a newline into the fifo `_fifo.txt`
    (opened non-blocking: a fifo with no reader is skipped, never waited on). Returns how, or ''."""
    try:
        pid_text = read_bytes(os.path.join(folder, SIGNAL), limit=64).decode("ascii", "replace").strip()
        pid = int(pid_text) if is_count(pid_text) else 0  # (a pid past any os.kill takes: none)
        if pid > 1 and pid != os.getpid() and _may_be_tsh(pid):
            os.kill(pid, signal.SIGUSR1)
            return f"signalled TSH (pid {pid})"
    except (OSError, ValueError):
        pass  # no pid, a stale one, or not ours to signal: try the fifo
    path = os.path.join(folder, FIFO)
    try:
        if not stat.S_ISFIFO(os.lstat(path).st_mode):
            return ""
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return ""  # ENXIO: nobody reads it; TSH looks every minute anyway
    try:
        os.write(fd, b"\n")
        return "woke TSH through its fifo"
    except OSError:
        return ""
    finally:
        os.close(fd)


@dataclass
class Outcome:
    """What `queue_games` did: the keys queued now, those already queued, the forfeits left to the
    director (Games), those changed after they were queued (to change in TSH with `es`), how
    TSH was woken, and the error that stopped it (games left waiting)."""

    queued: list = field(default_factory=list)
    already: list = field(default_factory=list)
    changed: list = field(default_factory=list)
    forfeits: list = field(default_factory=list)
    woke: str = ""
    error: str = ""


def queue_games(tsh_dir, records, games, tries=30, wait=1.0, sleep=time.sleep):
    """Put each of `games` not yet queued (per the record in `records`) into TSH's queue in
    `tsh_dir`, and wake TSH. A failure (lock, disk, permission) is the Outcome's `error`, with the
    games after it left for the next call; nothing is ever queued twice."""
    outcome = Outcome()
    outcome.forfeits = [game for game in games if not game.commands]
    wanted = [game for game in games if game.commands]
    try:
        seen = QueueRecord(records)
    except QueueError as error:
        outcome.error = str(error)
        return outcome
    if all(seen.state(game.key) == "queued" for game in wanted):  # TSH's lock left alone
        for game in wanted:
            same = seen.games[game.key].get("commands") == game.commands
            (outcome.already if same else outcome.changed).append(game.key)
        return outcome
    folder = queue_folder(tsh_dir)
    try:
        os.makedirs(folder, exist_ok=True)
        fd = _locked(folder, tries, wait, sleep)
    except QueueError as error:
        outcome.error = str(error)
        return outcome
    except OSError as error:
        outcome.error = _disk_message(folder, error)
        return outcome
    # the record is read under TSH's lock: two senders (the hall's passes, `scores --queue`) never
    # both find a game unqueued and both send it
    try:
        record = QueueRecord(records)
    except QueueError as error:
        os.close(fd)
        outcome.error = str(error)
        return outcome
    todo = []
    for game in wanted:
        if record.state(game.key) == "queued":
            # never queued again: TSH has it (or refused it); a change is the director's, with `es`
            same = record.games[game.key].get("commands") == game.commands
            (outcome.already if same else outcome.changed).append(game.key)
        else:
            todo.append(game)
    try:
        cursor = _cursor(fd, os.path.join(folder, ENQUEUE))
        dequeued = _dequeued(folder)
        # TSH past the enqueue cursor (it ran files a killed sender wrote and never counted): a
        # command written below TSH's own cursor would never be read
        cursor = max(cursor, dequeued)
        if os.fstat(fd).st_size == 0:
            # made just now (or left empty by a sender killed here): TSH's own senders die on an
            # empty `_enqueue.txt` ("empty lock file"), so it holds its cursor before anything
            _advance(fd, cursor)
        for game in todo:
            entry = record.games.get(game.key)
            if entry and entry.get("state") == "pending" and _reached(folder, entry, cursor, dequeued):
                entry["state"] = "queued"  # a restart after the cursor moved, before the record did
                record.save()
                outcome.already.append(game.key)
                continue
            cursors = list(range(cursor, cursor + len(game.commands)))
            record.games[game.key] = {"state": "pending", "cursors": cursors, "commands": game.commands}
            record.save()
            for number, command in zip(cursors, game.commands, strict=True):
                write_command(folder, number, command)
            cursor += len(game.commands)
            advance(fd, cursor)
            record.games[game.key]["state"] = "queued"
            record.games[game.key]["at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            record.games[game.key]["at_s"] = int(time.time())  # for "not in TSH after a minute or two"
            record.save()
            outcome.queued.append(game.key)
    except QueueError as error:
        outcome.error = str(error)
    except OSError as error:
        outcome.error = _disk_message(folder, error)
    finally:
        os.close(fd)  # the lock goes with it
    if outcome.queued:
        outcome.woke = wake(folder)
    return outcome


def write_command(folder, number, command):
    """`CURSOR.txt` holding `command`, written aside and renamed (over what a killed sender left)."""
    replace_file(os.path.join(folder, f"{number}.txt"), f"{command}\n".encode())


def advance(fd, cursor):
    """Write the next cursor into the locked `_enqueue.txt` (a seam the tests break)."""
    _advance(fd, cursor)


def _disk_message(folder, error, where=None):
    """The failure in words, naming where it was: TSH's queue in `folder`, or `where`."""
    where = where or f"TSH's queue in {folder}"
    why = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is used up",
        errno.EACCES: "this user may not write there",
        errno.EPERM: "this user may not write there",
        errno.EROFS: "the disk is read-only",
    }.get(error.errno, error.strerror or str(error))
    return (
        f"could not write {where}: {why}; the scores stay waiting and are queued when it can be written again"
    )
