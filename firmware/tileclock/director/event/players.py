"""Who plays at a table in a round, for the hall's page (a call's banner names them).

`tileclock hall`'s pairing options (`--tsh` `.t` files, `--config config.tsh`, or `--pairings` CSV)
give the hall the event's pairings, read as `tileclock sheet` reads them (inputs.py). TSH rewrites
its `.t` files as the event goes on; `HallPairings` reads them again in a thread of its own when one
changes, so naming a table's players never waits on a file (the feed's snapshot asks for them on
every change): a file that cannot be read leaves the last names read in use.
"""

from .hall_pairings import HallPairings


class TablePlayers:
    """The players at each table, by round, from a `HallPairings` `pairings`."""

    def __init__(self, pairings):
        self.pairings = pairings

    @classmethod
    def of_files(cls, paths):
        """From `--pairings`: TSH `.t` files, a `config.tsh` (any `.tsh`), or one CSV."""
        tsh = [path for path in paths if path.endswith(".t")] or None
        config = next((path for path in paths if path.endswith(".tsh")), None)
        csv = None if tsh or config else paths[0]
        return cls(HallPairings(tsh=None if config else tsh, config=config, csv=csv))

    def names(self, round_number, table):
        """`Name (#3, A) v Name (#7, A)` at `table` in round `round_number`, or None if unknown."""
        return self.pairings.names(round_number, table)
