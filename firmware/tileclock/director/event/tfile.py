"""TSH's files read the way TSH reads them: a division's `.t` file and the event's `config.tsh`.

Checked against TSH's own reader (TFile.pm, and the config reader in TSH::Config):

- the bytes are UTF-8 when they are valid UTF-8, else Latin-1 (TSH's default encoding); a UTF-8
  byte-order mark is dropped before anything else;
- lines end with LF, CR or CRLF; a line whose first non-blank is `#` is a comment, a blank line is
  nothing, and neither counts as a player: player N is the Nth player line;
- a player line is `name rating opponents ; scores` then `; key words...` fields. The name is the
  shortest text that leaves a rating and then only opponent numbers before the first `;`, so
  "Last, First" names with commas and spaces stay whole. The rating may have a decimal part
  (`1846.5`). In the fields, `\\;` is a `;` inside a value and `\\\\` a backslash;
- `00` in the opponents, the scores or a field is "not yet" (no pairing made, no score entered);
- `config.tsh` names each division with a `division NAME FILE` line (FILE relative to the config
  file's folder); TSH upper-cases the name and drops what is not a letter, digit or `_`.

Reading never guesses: a line TSH could not parse is a `PairingsError` naming the file and line.

Files are read as files (`read_bytes`): a path that is not a regular file (a FIFO, a device, a
folder), a symbolic link out of the folder it is named in, a file over `MAX_BYTES` or a binary one
is a `TshFileRefused` naming the file and why, never quoting it, and nothing of it is read.
"""

import os
import re
import stat
from dataclasses import dataclass, field


class PairingsError(ValueError):
    """A pairings file that cannot be read at all (the message names the file and line)."""


class TshFileRefused(PairingsError):
    """A path given as one of TSH's files that is no file to read (a FIFO, a device, a link out of
    its folder, too big, binary); the message names the path and why, never a byte of it."""


BOM = b"\xef\xbb\xbf"
MAX_LINE = 100_000  # far beyond any real line (a 30-round player with every field is ~3,000)
#: the most one of TSH's files may hold. A player with 31 rounds and every field TSH writes is
#: about 1 KB, so a big division (200 players) is ~200 KB and 2 MiB is ten times it. Read, a `.t`
#: costs ~22 times its bytes (46 MB at the cap), a crafted one of the shortest player lines ~64
#: times (134 MB); a 200 MB `.t` (once ~10 GB) or /dev/zero is refused unread.
MAX_BYTES = 2 * 1024 * 1024

#: what a path that is not a regular file is, in words
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISSOCK, "a socket"),
)


def decode(data):
    """The text of a TSH file's bytes: the BOM dropped, UTF-8 when valid, else Latin-1."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # every byte is a character: never fails


def read_bytes(path, limit=MAX_BYTES):
    """The bytes of the regular file `path`, at most `limit` of them; `TshFileRefused` for a path
    that is no such file (see the module's docstring), OSError (naming `path`) for a missing or
    unreadable one. A symbolic link is followed only to a file inside the folder of the path as
    named (TSH's own folder): a `.t` replaced by a link to the director's password file is refused.
    Opened with O_NONBLOCK and O_NOFOLLOW and checked with fstat, so a FIFO or a device swapped in
    after the checks is neither waited on nor read."""
    named = os.path.abspath(path)
    real = os.path.realpath(path)
    if real != named:  # a link on the way: followed only within the folder it is named in
        folder = os.path.realpath(os.path.dirname(named))
        if os.path.commonpath([folder, real]) != folder:
            raise TshFileRefused(f"{path}: a symbolic link to {real}, outside {folder}: not read")
    try:
        before = os.stat(real)
        _regular(path, before)  # a FIFO or a device is never opened: opening one may wait or act
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None
    try:
        now = os.fstat(fd)
        _regular(path, now)  # swapped between the stat and the open
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise TshFileRefused(f"{path}: replaced while being opened: read again later")
        _within(path, now.st_size, limit)
        chunks, size = [], 0
        while size <= limit:  # st_size can lie (a file growing): the read itself is bounded
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        _within(path, size, limit)
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    nul = data.find(b"\0")
    if nul >= 0:  # TSH writes text: a NUL is a binary file (or UTF-16, which TSH cannot read either)
        raise TshFileRefused(f"{path}: a binary file (a NUL byte at byte {nul:,}), not TSH's text: not read")
    return data


def _regular(path, status):
    for test, kind in _KINDS:
        if test(status.st_mode):
            raise TshFileRefused(f"{path}: {kind}, not a file: not read (give TSH's own file)")
    if not stat.S_ISREG(status.st_mode):
        raise TshFileRefused(f"{path}: not a regular file: not read")


def _within(path, size, limit):
    if size > limit:
        raise TshFileRefused(
            f"{path}: {size:,} bytes or more, over the {limit:,}-byte limit for one of TSH's files "
            "(a big event's `.t` is a few hundred KB): not read"
        )


def read_text(path):
    """A TSH file's text, decoded as TSH decodes it (read by `read_bytes`: a file, and small)."""
    return decode(read_bytes(path))


def lines_of(text):
    """(line number, line) for every line; LF, CR and CRLF all end a line."""
    return enumerate(re.split(r"\r\n|\r|\n", text), start=1)


@dataclass
class TshPlayer:
    """One player line of a `.t` file; `None` in a list is TSH's `00` (not yet)."""

    number: int
    name: str
    rating: str  # as written: TSH accepts `1846.5`
    opponents: list
    scores: list
    fields: dict  # key -> list of words (None for `00`)
    line: int

    @property
    def active(self):
        """TSH counts a player with an `off` field as withdrawn (not active)."""
        return "off" not in self.fields


_RATING = re.compile(r"\d+(?:[.+]\d+)*")
_DIGITS = re.compile(r"\d+")


def _split_head(head):
    """(name, rating, opponent words) of the text before a `;`, or None as TSH's pattern would fail.

    TSH's pattern is `^(.+?\\S)\\s+(RATING)\\s*([\\d\\s]*)`: the shortest name that leaves a rating and
    then only digits. Done on words, so a hostile line costs linear time, not a regex's backtracking.
    """
    words = [(m.start(), m.group()) for m in re.finditer(r"\S+", head)]
    tail = len(words)
    while tail > 0 and _DIGITS.fullmatch(words[tail - 1][1]):
        tail -= 1  # words[tail:] are all whole numbers: opponents, and perhaps the rating
    at = max(1, tail - 1)  # the earliest word that can be the rating, after a name of one word or more
    if at < len(words) and not _RATING.fullmatch(words[at][1]):
        at += 1  # that word is no rating: the name takes it, and the rating is the next number
    if at < len(words) and len(head[: words[at][0]].rstrip()) < 2:
        at += 1  # TSH's name (`.+?\S`) has two characters at least
    if at >= len(words) or not _RATING.fullmatch(words[at][1]):
        return None
    return head[: words[at][0]].rstrip(), words[at][1], [w for _, w in words[at + 1 :]]


def _fields(etc):
    """TSH's `; key words` fields, with `\\;` and `\\\\` escapes; a later duplicate key wins."""
    fields = {}
    for part in _field_texts(etc):
        if part.strip():
            key, *words = part.split()
            fields[key] = [None if word == "00" else word for word in words]
    return fields


def _field_texts(etc):
    """The fields of `etc` split on each `;` that is not escaped, escapes undone (TFile's loop)."""
    parts, current, at = [], [], 0
    while at < len(etc):
        char = etc[at]
        if char == "\\" and etc[at + 1 : at + 2] in ("\\", ";"):
            current.append(etc[at + 1])
            at += 2
        elif char == ";":
            parts.append("".join(current))
            current = []
            at += 1
        else:
            current.append(char)
            at += 1
    parts.append("".join(current))
    return parts


def _numbers(words, path, line, what):
    values = []
    for word in words:
        if word == "00":
            values.append(None)
        elif re.fullmatch(r"-?\d+", word):
            values.append(int(word))
        else:
            raise PairingsError(f"{path}, line {line}: {what} must be whole numbers: {word[:60]!r}")
    return values


def parse_line(text, path, line, number):
    """The `TshPlayer` of one player line (already stripped); `PairingsError` if TSH could not parse it."""
    if len(text) > MAX_LINE:
        raise PairingsError(f"{path}, line {line}: a line of {len(text)} characters is not a player line")
    if ";" not in text:
        text += ";"  # TSH reads a line with no `;` as a player with no scores
    text = re.sub(r"; # \d+\s*$", ";", text)
    parts = text.split(";")
    found = None
    for cut in range(1, min(len(parts), 64)):  # a `;` inside a name: TSH tries the next one
        head = ";".join(parts[:cut])
        split = _split_head(head)
        if split:
            rest = text[len(head) + 1 :].lstrip()
            scores_text = re.match(r"[-\d\s]*", rest).group()
            etc = rest[len(scores_text) :]
            if not etc or etc.startswith(";"):
                found = split
                break
    if found is None:
        raise PairingsError(_not_a_player(text, path, line))
    name, rating, opponent_words = found
    opponents = _numbers(opponent_words, path, line, "opponents")
    scores = _numbers(scores_text.split(), path, line, "scores")
    return TshPlayer(number, name, rating, opponents, scores, _fields(etc), line)


def _not_a_player(text, path, line):
    head = text.split(";")[0].split()
    if _split_head(text.split(";")[0]):
        scores = text.split(";")[1].strip()
        return f"{path}, line {line}: scores must be whole numbers: {scores[:60]!r}"
    if len(head) >= 2 and any(_RATING.fullmatch(w) for w in head[1:]):
        after = head[next(i for i, w in enumerate(head) if i and _RATING.fullmatch(w)) + 1 :]
        bad = [w for w in after if not _DIGITS.fullmatch(w)]
        if bad:
            return f"{path}, line {line}: opponents must be whole numbers: {bad[0][:60]!r}"
    return f"{path}, line {line}: not a player line (a name, then a rating): {text[:60]!r}"


def read_players(path):
    """Every player of a `.t` file, numbered as TSH numbers them."""
    players = []
    for line, raw in lines_of(read_text(path)):
        if re.match(r"\s*#", raw):
            continue
        text = raw.strip()
        if not text:
            continue
        players.append(parse_line(text, path, line, len(players) + 1))
    return players


# --- config.tsh


@dataclass
class TshConfig:
    """What `config.tsh` says that matters here: its divisions, and a few score-entry settings."""

    path: str
    divisions: list = field(default_factory=list)  # (name, .t path)
    values: dict = field(default_factory=dict)  # config key -> text (as written, quotes dropped)

    def number(self, key, default):
        """A whole-number setting (`config max_score = 1000`), or `default`."""
        try:
            return int(self.values.get(key, default))
        except (TypeError, ValueError):
            return default

    def flag(self, key):
        """A true/false setting, as Perl reads `1`, `0` and `''`."""
        return self.values.get(key, "0") not in ("0", "", "undef")


def division_name(text):
    """A division's name as TSH keeps it: letters, digits and `_`, upper case (`a` is `A`)."""
    return re.sub(r"\W", "", text).upper()


def read_config(path):
    """The `TshConfig` of a `config.tsh` (its `division` and simple `config` lines)."""
    folder = os.path.dirname(os.path.abspath(path))
    config = TshConfig(path)
    for _line, raw in lines_of(read_text(path)):
        text = re.sub(r"^\s*#.*", "", raw).strip()
        found = re.match(r"division\s+(\S+)\s+(.*)", text, re.IGNORECASE)
        if found:
            name, file = division_name(found.group(1)), found.group(2).strip()
            config.divisions.append((name, os.path.join(folder, file)))
            continue
        found = re.match(r"config\s+(\w+)\s*=\s*(.*)", text, re.IGNORECASE)
        if found:
            value = re.sub(r"\s*;\s*$", "", found.group(2)).strip()
            config.values[found.group(1).lower()] = value.strip("'\"")
    if not config.divisions:
        raise PairingsError(f"{path}: no `division NAME FILE` line, so no division to read")
    return config
