"""Which errors are the user's, and which are bugs: the one place `main` asks.

The user's errors are said in one line (exit status 2), in the words they were raised with:

- `UsageError`: a mistake in a command's arguments, raised by the command line itself, or by
  `given_by_the_user` around a reader of what the user gave (a time, a file's contents, a port);
- `ConfigError` (device/config.py): a config file, an option that needs another;
- `SettingsError` (device/image/settings_lines.py): the image's settings file;
- `ScriptError` (sim/script.py): a script of button edges;
- `WireError` and its kind (wire/decoder.py: `FrameError`, `FieldError`, `CommandError`,
  `RecordError`, `StateError`, `SealError`): a line or file that is not what it claims to be;
- the director's refusals of its inputs: `PairingsError` (TSH's files, a pairings CSV),
  `EntryRefused` (a score entry), `TokensRefused` (the score links' tokens file);
- `DirectorExtraMissing`, `BrokerError` and `TlsError`: what this laptop lacks (the director extra,
  mosquitto, openssl) or a broker or its certificate that cannot be made;
- an `OSError` about a path the user named (in an argument, or a file inside a folder they named):
  a missing file, a permission, a full or failing disk.

Anything else is a bug: its traceback is printed, then a line asking for a report (exit status
70, sysexits' EX_SOFTWARE). A plain ValueError counts as a bug unless a reader of the user's input
raised it inside `given_by_the_user`: it may come from a `zip(..., strict=True)` as easily as from
a typo, so the command line must say which it is.
"""

import os
import sys
import traceback
from contextlib import contextmanager

from .. import __version__


class UsageError(ValueError):
    """A mistake in a command's arguments, in words naming the argument and its value (a
    ValueError, so a caller that asks for one still hears it)."""


def user_errors():
    """The errors that are the user's to mend (this module's docstring): one line, never a
    traceback. Imported when an error is met, not at start-up: the clock's own start is timed."""
    from ..device.config import ConfigError
    from ..device.image.settings_lines import SettingsError
    from ..director.event.entries import EntryRefused
    from ..director.event.score_tokens import TokensRefused
    from ..director.event.tfile import PairingsError
    from ..director.hall.broker import BrokerError
    from ..director.hall.tls import TlsError
    from ..director.records.plot import DirectorExtraMissing
    from ..sim.script import ScriptError
    from ..wire.decoder import WireError

    return (
        UsageError,
        ConfigError,
        SettingsError,
        ScriptError,
        WireError,
        PairingsError,
        EntryRefused,
        TokensRefused,
        DirectorExtraMissing,
        BrokerError,
        TlsError,
    )


#: the exit status of a bug (sysexits.h: EX_SOFTWARE), and of the user's mistake
BUG, MISTAKE = 70, 2


@contextmanager
def given_by_the_user():
    """Around a reader of what the user gave (an option's text, a file they named): its ValueError
    says what is wrong with the user's input, so it is raised again as a UsageError with the same
    words. Keep it around the reading alone: a ValueError from anything else is a bug."""
    try:
        yield
    except ValueError as error:
        if isinstance(error, user_errors()):
            raise
        raise UsageError(str(error)) from error


def users_path(error, args):
    """Whether the OSError `error` is about a path the user named in `args` (a Namespace), or one
    inside a folder they named (the records under `--out`)."""
    named = [os.path.abspath(text) for text in _texts(vars(args).values()) if text]
    for path in (error.filename, error.filename2):
        if isinstance(path, (str, bytes, os.PathLike)):
            where = os.path.abspath(os.fsdecode(path))
            if any(where == one or where.startswith(one.rstrip(os.sep) + os.sep) for one in named):
                return True
    return False


def _texts(values):
    """The strings among `values`, and in the lists among them (`--tsh A.t B.t`, `--time P A=1:00`)."""
    for value in values:
        if isinstance(value, str):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _texts(value)


def said(error, args):
    """Say `error`, met running the command `args` asked for: the user's mistake in one line, or a
    bug with its traceback and a line asking for a report. Returns the exit status."""
    if isinstance(error, user_errors()):
        print(f"tileclock: {_one_line(str(error))}", file=sys.stderr)
        return MISTAKE
    if isinstance(error, OSError) and users_path(error, args):
        where = f"{error.filename}: " if error.filename else ""
        print(f"tileclock: {_one_line(f'{where}{error.strerror or error}')}", file=sys.stderr)
        return MISTAKE
    traceback.print_exception(error, file=sys.stderr)
    print(
        f"tileclock: a bug in tileclock {__version__}, not a mistake in what it was given: please "
        "report it, with the lines above and the command that was run",
        file=sys.stderr,
    )
    return BUG


def _one_line(text):
    """`text` on one line: a control character (a newline in a file's name) shown escaped, as
    Python writes it, so an error is always one line whatever names it was given."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def why(error):
    """An error's words for a one-line message: an OSError's own (its strerror), else its text,
    else its kind."""
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
