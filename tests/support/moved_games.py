"""A game moved to a spare, on file as the hall files it, with no broker (issue 40): the dead
clock's records and the spare's go through a real `RecordStore` into its records folder, so
`tileclock replay`, the page's board and the store's late records read what a hall wrote.

`MovedGame` plays it on two pure `GameClock`s: `clock-12` (board 12) plays until it dies with A's
clock running; the hall's copy of its records ends at `heard` of them (the rest, `late`, are in its
journal but never reached the hall); `clock-31` (board 31) takes the game up from the hall's copy
and plays it to its end."""

import json
from dataclasses import dataclass, field

from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.spare import handover
from tileclock.director.follow.store import RecordStore
from tileclock.wire.protocol import frame, unframe

NS_PER_S = 10**9
RULES = PROFILES["naspa"]
DEAD, SPARE = "clock-12", "clock-31"


def press(clock, button, t_ns):
    """A press of `button` at `t_ns` on `clock` (a `GameClock`), 40 ms down: its records."""
    return clock.edge(button, True, t_ns) + clock.edge(button, False, t_ns + 40_000_000)


def boot(clock_id, board):
    """What a clock's `boot` record says of it: its board (the store files its games under it)."""
    return {"boot_id": f"boot-{clock_id}", "board": board, "firmware": "0.1.0", "protocol": 2}


@dataclass
class MovedGame:
    """The two clocks' records (dicts as the hall reads them, each naming its clock)."""

    dead: list = field(default_factory=list)  # every record the dead clock made, in its journal
    heard: int = 0  # how many of them the hall had when it died
    spare: list = field(default_factory=list)

    @property
    def late(self):
        """The dead clock's records the hall never heard before the move."""
        return self.dead[self.heard :]

    @property
    def takeover(self):
        """The spare's `takeover` record."""
        return next(r for r in self.spare if r["ev"] == "takeover")


def as_read(records, clock_id):
    """Records (a core's `Record`s, or dicts) as the hall reads them off the wire, each naming
    `clock_id`: framed, decoded."""
    fields = [record if isinstance(record, dict) else record.as_dict() for record in records]
    return [unframe(line(dict(one, clock=clock_id))) for one in fields]


def line(record):
    """A record (a dict) framed, as it goes on the wire and into the hall's game files."""
    return frame(json.dumps(record, separators=(",", ":")))


def play(late_presses=0, told=False, call=False):
    """The moved game: the dead clock's presses (A, B, A), STOP, a director's correction (B 5 s
    more), with `call` three taps of STOP that call the director (the call left open), and A's
    press that resumes it, then `late_presses` more (B first) that
    reach the hall only later (with `told`, and its `moved` record after them: the hall told it);
    the spare takes it up from what the hall heard, A presses, 5 s later STOP, and the round is
    over. A `MovedGame`."""
    dead = GameClock(RULES)
    made = dead.new_game(NS_PER_S, boot(DEAD, "12"))
    t = 3 * NS_PER_S
    for button, step_s in (("A", 10.125), ("B", 20.25), ("A", 30.5)):  # B, A, B run in turn
        made += press(dead, button, t)
        t += int(step_s * NS_PER_S)
    made += press(dead, "STOP", t)  # stopped, corrected (on the trail), and on again: B runs
    made += dead.adjust(t + NS_PER_S, "B", 5000, source="hall", by="director-1")
    t += 2 * NS_PER_S
    if call:  # three taps of STOP on the stopped clock: the players call the director
        for n in range(3):
            made += press(dead, "STOP", t + n * 300_000_000)
        t += 2 * NS_PER_S
    made += press(dead, "A", t)
    game = MovedGame(as_read(made, DEAD))
    game.heard = len(game.dead)
    late = []
    for n in range(late_presses):  # B runs at first: B presses 12 s on, then A 7.25 s after, ...
        t += (12_000 if n % 2 == 0 else 7_250) * 1_000_000
        late += press(dead, "BA"[n % 2], t)
    if told:  # the dead clock back, told by the hall: its game ends there
        late += dead.moved(t + NS_PER_S, game.dead[1]["seq"], SPARE, source="hall", by="hall_t1_1")
    game.dead += as_read(late, DEAD)
    taken = handover(DEAD, game.dead[: game.heard], RULES)
    spare = GameClock(RULES)  # its seqs from 0 too: a seq names no record of the whole game
    made = spare.new_game(900 * NS_PER_S, boot(SPARE, "31"))
    made += spare.take_over(1000 * NS_PER_S, taken, source="hall", by="director-1")
    made += press(spare, "A", 1010 * NS_PER_S)
    made += press(spare, "STOP", 1015 * NS_PER_S)
    made += spare.round_over(1016 * NS_PER_S)
    game.spare = as_read(made, SPARE)
    return game


def file_it(game, folder, late=True):
    """File `game` in the records folder `folder` through a `RecordStore`, as a hall does: what it
    heard of the dead clock, the spare's records, then (with `late`) the dead clock's late ones.
    Returns the store, still open (close it)."""
    store = RecordStore(str(folder))
    for record in game.dead[: game.heard] + game.spare + (game.late if late else []):
        store.add(record, line(record))
    store.flush()
    return store
