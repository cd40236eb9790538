"""Who plays at a table in a round, for the hall's page (a call's banner names them).

`tileclock hall`'s pairing options (`--tsh` `.t` files, `--config config.tsh`, or `--pairings` CSV)
give the hall the event's pairings, read as `tileclock sheet` reads them (results.py). TSH rewrites its `.t` files as the
event goes on, so they are read again whenever one changes; a file that cannot be read (TSH in
the middle of writing it) leaves the names unknown until it can.
"""

import os
from argparse import Namespace

from .pairings import PairingsError, table_key
from .results import read_schedule


class TablePlayers:
    """The players at each table, by round, from the pairings `args` name (`read_schedule`'s)."""

    def __init__(self, args):
        self.args = args
        paths = [args.tsh_config] if getattr(args, "tsh_config", None) else args.tsh or [args.pairings]
        self.paths = [path for path in paths if path]
        self._stamp, self._round_of, self._rounds = None, None, {}

    @classmethod
    def of_files(cls, paths):
        """From `--pairings`: TSH `.t` files, a `config.tsh` (any `.tsh`), or one CSV."""
        tsh = [path for path in paths if path.endswith(".t")] or None
        config = next((path for path in paths if path.endswith(".tsh")), None)
        csv = None if tsh or config else paths[0]
        return cls(Namespace(tsh=None if config else tsh, tsh_config=config, pairings=csv, tables=None))

    def names(self, round_number, table):
        """`Name (#3, A) v Name (#7, A)` at `table` in round `round_number`, or None if unknown."""
        if not isinstance(round_number, int) or table is None:
            return None
        try:
            stamp = tuple(os.stat(path).st_mtime_ns for path in self.paths)
            if stamp != self._stamp:
                self._stamp, self._rounds = stamp, {}
                _, self._round_of = read_schedule(self.args)
            if round_number not in self._rounds:
                self._rounds[round_number] = self._round_of(round_number)
        except (OSError, ValueError, PairingsError):
            self._stamp = None  # read again next time
            return None
        key = table_key(table)
        pairing = next((p for p in self._rounds[round_number].pairings if table_key(p.table) == key), None)
        return pairing.names() if pairing else None
