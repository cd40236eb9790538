"""The score entries of a round, kept by the hall: who entered what, when, and the round's lock.

Each side of a table's game gets a token the hall makes (`issue`): eight characters of QR's
upper-case alphanumerics, not guessable (`secrets`), valid for that side's form of that table's
game until the director locks the round, for at most `MAX_ENTRIES` entries. A phone at side A or B
enters both scores as written on the slip with its own side's token (one side's token never opens
the other's form, so one player alone never makes a table agreed); the director enters or
corrects any table from the page. Every entry is appended, never rewritten, to
`round-N-entries.csv` in the hall's folder, in the form `tileclock scores --entries` reads:
`table,score_a,score_b,seat_a,by,at`, so the history of a table is its rows in order. Locking a
round (`round-N.locked`) ends entry for it: tokens stop working, the page refuses corrections.
The tokens are kept in `tokens.json` beside the entries (`score_tokens.py`: 0600, replaced whole),
so a restarted hall keeps every link it made; one made is on disk before anyone is given it.
"""

import contextlib
import csv
import io
import os
import re
import secrets
import threading
import time

from ...wire.labels import is_count, is_label, table_key
from .score_tokens import FILE, MAX_TOKENS, Grant, TokensRefused, keep_aside, read_tokens, write_tokens
from .scoring import DIRECTOR, Entry, chosen_entry

#: QR's alphanumeric mode holds upper case and digits: the token is made of those (no 0/O, 1/I)
TOKEN_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
TOKEN_LENGTH = 8
#: the scores a slip may carry (TSH's own range, -149 to 1499, is checked when the lines are made)
LOWEST, HIGHEST = -999, 9999
FIELDS = ["table", "score_a", "score_b", "seat_a", "by", "at"]
#: the entries one token may make: a slip corrected a few times, never a flood of the entries file
MAX_ENTRIES = 8
SIDES = ("A", "B")


class EntryRefused(ValueError):
    """An entry that is not taken, and why (for the phone or the director)."""


def checked(score_a, score_b, seat_a=None):
    """(scores {"A", "B"}, seat or None) as numbers, from an entry's fields as sent; EntryRefused
    (in words) for a score or seat that is not one, in ASCII digits (`٣`, `²` and `3.0` are not:
    a row written must read back), before anything is written."""
    scores = {}
    for side, value in (("A", score_a), ("B", score_b)):
        text = str(value).strip()
        digits = text[1:] if text.startswith("-") else text
        if not (is_count(digits) and len(text) <= 5 and LOWEST <= int(text) <= HIGHEST):
            raise EntryRefused(f"side {side}'s score: a whole number as written on the slip")
        scores[side] = int(text)
    if seat_a is not None and not is_count(str(seat_a)):
        raise EntryRefused("seat_a: the TSH number of the player at side A")
    return scores, None if seat_a is None else int(seat_a)


class ScoreBook:
    """The entries, tokens and locks of every round, kept in `folder`."""

    def __init__(self, folder, clock=time.time):
        self.folder = folder
        self.clock = clock
        self.lock = threading.Lock()
        self.unreadable = {}  # round -> the line numbers of its entries file that are not entries
        os.makedirs(folder, exist_ok=True)
        self.tokens_path = os.path.join(folder, FILE)
        #: what was wrong with the tokens file at the start (kept aside), in words, or None
        self.problem = None
        self.used = {}  # token -> the entries it has made
        try:
            self.tokens, self.used = read_tokens(self.tokens_path)  # token -> Grant
        except (OSError, TokensRefused) as error:
            self.tokens = {}
            self.problem = keep_aside(self.tokens_path, getattr(error, "strerror", None) or error, clock)

    def issue(self, round_number, table, side):
        """A new token for side `side` of the game at `table` in `round_number` (an earlier one
        for that side stops working; the other side's keeps working), on disk before it is
        returned; EntryRefused if no link can name that game, OSError if the disk refuses it (then
        nothing changed)."""
        table = table_key(table)
        if not (isinstance(round_number, int) and 1 <= round_number <= 9999 and is_label(table)):
            raise EntryRefused(
                f"no link for round {round_number!r}, table {table[:40]!r}: not a round and table"
            )
        if side not in SIDES:
            raise EntryRefused(f"no link for side {str(side)[:8]!r}: side A or B")
        grant = Grant(round_number, table, side)
        token = "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))
        with self.lock:
            tokens = {t: g for t, g in self.tokens.items() if g != grant}
            if len(tokens) >= MAX_TOKENS:  # the locked rounds' tokens work no more: let them go
                tokens = {t: g for t, g in tokens.items() if not self.locked(g.round)}
            if len(tokens) >= MAX_TOKENS:
                raise EntryRefused(f"{MAX_TOKENS} links are open: lock the rounds that are over")
            tokens[token] = grant
            self._write(tokens, self.used)
            self.tokens = tokens
            self.used = {t: n for t, n in self.used.items() if t in tokens}
        return token

    def token_made(self, round_number, table, side):
        """The token already made for side `side` of the game at `table` in `round_number`, or None."""
        grant = Grant(round_number, table_key(table), side)
        return next((token for token, of in self.tokens.items() if of == grant), None)

    def token_for(self, round_number, table, side):
        """The token of side `side` of the game at `table` in `round_number`: the one already
        made, else a new one (a game's end sent again, after a correction, keeps its link)."""
        return self.token_made(round_number, table, side) or self.issue(round_number, table, side)

    def tokens_for(self, round_number, table):
        """{side: token} of both sides of the game at `table` in `round_number` (made if need be)."""
        return {side: self.token_for(round_number, table, side) for side in SIDES}

    def grant_of(self, table, side, token):
        """The `Grant` of `token` when it opens side `side`'s form at `table`, or EntryRefused: a
        token opens its own side's form only (side A's code is no key to side B's form)."""
        found = self.tokens.get(str(token).upper())
        if (
            found is None
            or found.table.upper() != table_key(table).upper()  # the link is upper case
            or found.side != str(side).upper()
        ):
            raise EntryRefused("this link is not (or no longer) valid for this table: ask the director")
        if self.locked(found.round):
            raise EntryRefused(f"round {found.round} is locked: ask the director")
        return found

    def spend(self, token):
        """Count one more entry made with `token`, on disk before the entry is made; EntryRefused
        past `MAX_ENTRIES` (a token cannot fill the entries file), OSError if the disk refuses."""
        token = str(token).upper()
        with self.lock:
            if token not in self.tokens:
                raise EntryRefused("this link is not (or no longer) valid for this table: ask the director")
            made = self.used.get(token, 0)
            if made >= MAX_ENTRIES:
                raise EntryRefused(
                    f"this link has made its {MAX_ENTRIES} entries: ask the director to enter or correct it"
                )
            used = {**self.used, token: made + 1}
            self._write(self.tokens, used)  # counted before it is made: a crash never un-counts one
            self.used = used

    def locked(self, round_number):
        return os.path.exists(self._path(round_number, "locked"))

    def lock_round(self, round_number):
        """Lock `round_number`: no entry or correction is taken for it any more."""
        with self.lock:
            with open(self._path(round_number, "locked"), "a", encoding="utf-8") as file:
                file.write(f"{self._now()}\n")
            with contextlib.suppress(
                OSError
            ):  # its tokens work no more: they leave the disk when it lets them
                self._write(self.tokens, self.used)

    def unlock_round(self, round_number):
        """Unlock `round_number` (the director's, audited by the page): entries and corrections
        are taken again, and its links work again. OSError if the lock cannot be taken off."""
        with self.lock:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._path(round_number, "locked"))
            with contextlib.suppress(OSError):  # its tokens back on the disk, as before the lock
                self._write(self.tokens, self.used)

    def enter(self, round_number, table, score_a, score_b, by, seat_a=None):
        """Append an entry; EntryRefused (in words) when the round is locked or a score is not one."""
        scores, seat = checked(score_a, score_b, seat_a)
        with self.lock:
            if self.locked(round_number):
                raise EntryRefused(f"round {round_number} is locked: ask the director")
            path = self._path(round_number, "entries")
            new = not os.path.exists(path)
            torn = not new and _torn(path)
            with open(path, "a", newline="", encoding="utf-8") as file:
                if torn:  # a line a power cut left half written: the next is not glued onto it
                    file.write("\r\n")
                writer = csv.writer(file)
                if new:
                    writer.writerow(FIELDS)
                seat_text = "" if seat is None else seat
                writer.writerow([table_key(table), scores["A"], scores["B"], seat_text, by, self._now()])
                file.flush()
                os.fsync(file.fileno())  # a score taken is on the disk before the phone hears so
        return Entry(table_key(table), scores, by, "", seat)

    def entries(self, round_number):
        """Every entry of the round, in the order made: {table: [Entry, ...]}. A line that is no
        entry of both scores (torn by a power cut, edited) is left out and said (`unreadable`)."""
        path = self._path(round_number, "entries")
        tables, self.unreadable[round_number] = {}, []
        if not os.path.exists(path):
            return tables
        with self.lock, open(path, newline="", encoding="utf-8", errors="replace") as file:
            try:
                for line, entry in entry_rows(file):
                    if isinstance(entry, ValueError) or len(entry.scores) != 2:  # the hall writes both
                        self.unreadable[round_number].append(line)
                    else:
                        tables.setdefault(entry.table, []).append(entry)
            except ValueError:  # its header is not an entries file's
                self.unreadable[round_number].append(1)
        return tables

    def state(self, round_number):
        """Per table: its entries (who, when, what) and whether they agree, for the page."""
        tables = []
        for table, entries in sorted(self.entries(round_number).items(), key=lambda i: _order(i[0])):
            chosen, why = chosen_entry(entries)
            if chosen is not None:
                status = "settled" if chosen.by == DIRECTOR else "agreed"
            else:
                status = "waiting" if why.startswith("only ") else "disagree"
            tables.append(
                {
                    "table": table,
                    "status": status,
                    "why": why,
                    "scores": chosen.scores if chosen is not None else None,
                    "history": [
                        {"by": e.by, "at": e.at, "A": e.scores["A"], "B": e.scores["B"]} for e in entries
                    ],
                }
            )
        return {
            "round": round_number,
            "locked": self.locked(round_number),
            "tables": tables,
            "unreadable": self._unreadable(round_number),
        }

    def _unreadable(self, round_number):
        """The lines of the round's entries file left out when it was last read, in words, or None."""
        lines = self.unreadable.get(round_number)
        if not lines:
            return None
        name = os.path.basename(self._path(round_number, "entries"))
        which = ", ".join(map(str, lines[:10])) + (f" and {len(lines) - 10} more" if len(lines) > 10 else "")
        if len(lines) == 1:
            return f"{name}: line {which} is not an entry: left out (see the file)"
        return f"{name}: lines {which} are not entries: left out (see the file)"

    def _write(self, tokens, used):
        """Put `tokens` (and the entries each made, `used`) on disk, but for the locked rounds'
        (kept in memory only, so a phone still hears that its round is locked rather than that its
        link is not one)."""
        locked = {g.round for g in tokens.values() if self.locked(g.round)}
        write_tokens(self.tokens_path, {t: g for t, g in tokens.items() if g.round not in locked}, used)

    def _path(self, round_number, what):
        ending = "entries.csv" if what == "entries" else "locked"
        return os.path.join(self.folder, f"round-{int(round_number)}-{ending}")

    def _now(self):
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.clock()))


#: the columns an entries file names (in any case); seat_a, by and at may be left out
NEEDED = ("table", "score_a", "score_b")


def entry_rows(file):
    """The one reader of score entries (`round-N-entries.csv`, for the hall and for `tileclock
    scores --entries` alike): from the open CSV `file`, in the order made, (line number, `Entry` or
    the ValueError that says why that line is none). The header names table, score_a and score_b
    in any case (seat_a, by and at may be left out: by is then the director); blank lines are
    passed over; a side with no score is left out of `scores` (an entry that only says who sat at
    A); a line with fewer or more fields than the header is none (a line cut short by a power cut
    must not read as a smaller score). ValueError at once if the header lacks a needed column."""
    reader = csv.DictReader(file)
    header = [name.strip().lower() for name in reader.fieldnames or []]
    missing = [name for name in NEEDED if name not in header]
    if missing:
        raise ValueError(f"the header must name {', '.join(NEEDED)} (missing: {', '.join(missing)})")
    reader.fieldnames = header
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:  # (a field past the csv module's limit): that line alone,
            # numbered by the underlying reader (DictReader's count is stale)
            yield reader.reader.line_num, ValueError(f"not a line of CSV ({error})")
            continue
        try:
            entry = _entry(row)
        except ValueError as error:
            yield reader.line_num, error
            continue
        if entry is not None:
            yield reader.line_num, entry


def _entry(row):
    """The `Entry` a row holds, None for a blank row; ValueError (in words) if it holds none."""
    if None in row or None in row.values():
        raise ValueError("not as many fields as the header names")
    values = {key: value.strip() for key, value in row.items()}
    if not any(values.values()):
        return None
    if not is_label(values["table"]):
        raise ValueError(f"table {values['table'][:40]!r} is not a table's name")
    numbers = [values[f"score_{side}"] for side in "ab"] + [values.get("seat_a") or ""]
    if any(n and not re.fullmatch(r"-?[0-9]{1,5}", n) for n in numbers):  # int() takes `٣` and `+3`
        raise ValueError("scores and seat_a must be whole numbers in ASCII digits, as on the slip")
    try:
        scores = {
            side: int(values[f"score_{side.lower()}"]) for side in "AB" if values[f"score_{side.lower()}"]
        }
        seat_a = int(values["seat_a"]) if values.get("seat_a") else None
    except ValueError:
        raise ValueError("scores and seat_a must be whole numbers") from None
    return Entry(
        table_key(values["table"]), scores, values.get("by") or DIRECTOR, values.get("at", ""), seat_a
    )


def _torn(path):
    """Whether the file at `path` ends inside a line."""
    with open(path, "rb") as file:
        file.seek(0, os.SEEK_END)
        if file.tell() == 0:
            return False
        file.seek(-1, os.SEEK_END)
        return file.read(1) != b"\n"


def _order(table):
    return (0, int(table), "") if table.isdigit() else (1, 0, table)


def read_entries(path, round_number=None, notes=None):
    """Score entries from a CSV `table,score_a,score_b` (optional `seat_a`, `by`, `at`, `round`), in
    order, read by `entry_rows`; ValueError names the file and its first bad line. With
    `round_number`: a file named for another round (`round-2-entries.csv`) is refused, and rows of
    a `round` column naming another round are left out, each said in `notes` (a list)."""
    named = re.search(r"round-(\d+)-entries\.csv$", os.path.basename(path))
    if round_number is not None and named and int(named.group(1)) != round_number:
        raise ValueError(
            f"{path}: an entries file of round {int(named.group(1))}, not of round {round_number}"
        )
    try:
        with open(path, newline="", encoding="utf-8-sig") as file:
            text = file.read()
        if round_number is not None:
            text = _of_round(text, round_number, path, notes if notes is not None else [])
        rows = list(entry_rows(io.StringIO(text)))
    except ValueError as error:  # its header, or not UTF-8 text
        raise ValueError(f"{path}: {error}") from None
    for line, entry in rows:
        if isinstance(entry, ValueError):
            raise ValueError(f"{path}, line {line}: {entry}")
    return [entry for _, entry in rows]


def _of_round(text, round_number, path, notes):
    """`text` with the rows of another round (by a `round` column, where there is one) blanked
    (kept as empty lines, so the line numbers in messages stay the file's)."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    header = [name.strip().lower() for name in next(csv.reader([lines[0]]))]
    if "round" not in header:
        return text
    column = header.index("round")
    kept = [lines[0]]
    for number, line in enumerate(lines[1:], start=2):
        fields = next(csv.reader([line]), [])
        value = fields[column].strip() if column < len(fields) else ""
        if value and not (is_count(value) and int(value) == round_number):  # `03` is round 3
            notes.append(f"{path}, line {number}: round {value[:10]}, not {round_number}: left out")
            kept.append("\n")
        else:
            kept.append(line)
    return "".join(kept)
