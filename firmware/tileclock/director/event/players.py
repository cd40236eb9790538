"""Who plays at a table in a round, for the hall's page (a call's banner names them).

`tileclock hall`'s pairing options (`--tsh` `.t` files, `--config config.tsh`, or `--pairings` CSV)
give the hall the event's pairings, read as `tileclock sheet` reads them (inputs.py). TSH rewrites
its `.t` files as the event goes on, so they are read again whenever one changes; a file that cannot be read (TSH in
the middle of writing it) leaves the names unknown until it can.
"""

import os

from .inputs import read_schedule
from .pairings import PairingsError, table_key


class TablePlayers:
    """The players at each table, by round, from TSH's `.t` files `tsh`, its `config.tsh`
    `tsh_config` or a CSV `pairings_csv`, with `tables` (`read_schedule`'s)."""

    def __init__(self, tsh=None, tsh_config=None, pairings_csv=None, tables=None):
        self.schedule = (tsh, tsh_config, pairings_csv, tables)  # read_schedule's, as given
        paths = [tsh_config] if tsh_config else tsh or [pairings_csv]
        self.paths = [path for path in paths if path]
        self._stamp, self._round_of, self._rounds = None, None, {}

    @classmethod
    def of_files(cls, paths):
        """From `--pairings`: TSH `.t` files, a `config.tsh` (any `.tsh`), or one CSV."""
        tsh = [path for path in paths if path.endswith(".t")] or None
        config = next((path for path in paths if path.endswith(".tsh")), None)
        csv = None if tsh or config else paths[0]
        return cls(tsh=None if config else tsh, tsh_config=config, pairings_csv=csv)

    def names(self, round_number, table):
        """`Name (#3, A) v Name (#7, A)` at `table` in round `round_number`, or None if unknown."""
        if not isinstance(round_number, int) or table is None:
            return None
        try:
            stamp = tuple(os.stat(path).st_mtime_ns for path in self.paths)
            if stamp != self._stamp:
                self._stamp, self._rounds = stamp, {}
                _, self._round_of = read_schedule(*self.schedule)
            if round_number not in self._rounds:
                self._rounds[round_number] = self._round_of(round_number)
        except (OSError, ValueError, PairingsError):
            self._stamp = None  # read again next time
            return None
        key = table_key(table)
        pairing = next((p for p in self._rounds[round_number].pairings if table_key(p.table) == key), None)
        return pairing.names() if pairing else None
