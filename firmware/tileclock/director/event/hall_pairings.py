"""The pairings the hall names players from: the same TSH `.t` files (or `config.tsh`, or a CSV) and
`--tables` that `sheet` and `scores` take, read again whenever a file changes (TSH writes the next
round's pairings into them during the day; the hall only reads them, never writes).

For a table of a round, `players` says who plays there: both players, and who sat at which side
when that is known (the pairings say who went first and the clock says which side moved first),
as the score form and the director's Scores page show them.
"""

import os
import threading

from .inputs import read_schedule
from .matching import other_side
from .pairings import table_key
from .tfile import read_config


class HallPairings:
    """A round's pairings from `tsh` (.t files), `config` (config.tsh) or `csv`, with `tables`
    (`--tables` ranges); ValueError (naming the option) if they cannot be read now."""

    def __init__(self, tsh=None, config=None, csv=None, tables=None):
        #: `read_schedule`'s arguments: where the pairings are read from (players.py reads them too)
        self.sources = (tsh, config, csv, tables)
        self.lock = threading.Lock()
        self._read_at = None
        self._rounds = None
        self.rounds(1)  # a file that cannot be read is said at the start, not on a phone

    def _files(self):
        tsh, config, csv, _tables = self.sources
        if config:
            return [config, *(file for _, file in read_config(config).divisions)]
        return list(tsh or []) or [csv]

    def rounds(self, number):
        """The `pairings.Round` of round `number`, from the files as they are now."""
        with self.lock:
            stamp = [(path, os.stat(path).st_mtime_ns) for path in self._files()]
            if stamp != self._read_at:
                _paired, self._rounds = read_schedule(*self.sources)
                self._read_at = stamp
            return self._rounds(number)

    def tables(self, number):
        """{table: Pairing} of round `number` (a table two pairings claim is left out: no names)."""
        seen = {}
        for pairing in self.rounds(number).pairings:
            if pairing.table is not None:
                key = table_key(pairing.table)
                seen[key] = None if key in seen else pairing
        return {table: pairing for table, pairing in seen.items() if pairing is not None}

    def players(self, number, table, first_side=None):
        """Who plays at `table` in round `number`, for the form: {"names": [both], "players": {"A":
        name, "B": name} when the sides are known, "sides": why not otherwise}; {} for no pairing.
        `first_side`: the side whose clock first ran in play, as the clock recorded it."""
        try:
            pairing = self.tables(number).get(table_key(table))
        except (OSError, ValueError) as error:  # a file TSH is writing just now: no names this once
            return {"names": [], "sides": f"the pairings cannot be read now ({error})"}
        if pairing is None:
            return {}
        found = {"names": [player.label() for player in pairing.players]}
        if pairing.first_known and first_side in ("A", "B"):
            found["players"] = {
                first_side: pairing.first.label(),
                other_side(first_side): pairing.second.label(),
            }
        elif not pairing.first_known:
            found["sides"] = pairing.why_unknown or "the pairings do not say who went first"
        else:
            found["sides"] = "no clock has run at this table yet"
        if "players" not in found and all(player.number for player in pairing.players):
            # who sat at side A can be said where the score is entered (`seat_a`: a TSH number)
            found["seats"] = [{"number": p.number, "name": p.label()} for p in pairing.players]
        return found
