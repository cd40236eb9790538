"""The collector's tests' pieces: a game played on a simulated clock and the framed lines it made,
a clock to set by hand, and polling a feed until it gets somewhere."""

import os
import select
from dataclasses import replace

from tileclock.device.config_schema import Config
from tileclock.device.journal import Journal
from tileclock.sim.script import parse_script
from tileclock.sim.simulator import Simulator

GAME = "0 press B\n10 press A\n25 press B\n30 press STOP\n40 hold STOP 2.5\n43 press STOP\n"


def journal_of(script=GAME, board="1", path=None):
    """The framed lines a clock made playing `script` (its board name unchecked, as a hostile clock's)."""

    sim = Simulator(
        replace(Config(), board=board),
        journal=Journal.open(path and os.path.join(path, "journal")),
        refresh_on_ticks=False,  # the records only: no frame drawn for each second
    )
    return lines_played(sim, script)


def lines_played(sim, script):
    """The framed lines `sim`'s journal holds after it plays `script` to its end; `sim` closed."""
    parsed = parse_script(script)
    for t_ns, button, down in parsed.edges:
        sim.set_button(button, down, t_ns)
    sim.finish(parsed.end_ns)
    lines = list(sim.journal.lines)
    sim.close()
    return lines


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def poll_until(feed, done, plug=None, answer=None, rounds=500):
    """Poll the feed (waiting on its port, not sleeping) until `done()`; answer its requests with `answer`."""
    for _ in range(rounds):
        if feed.fileno() is not None:
            select.select([feed.fileno()], [], [], 0.02)
        feed.poll()
        if answer and plug:
            for request in plug.drain(0.01):
                answer(request)
        if done():
            return
    raise AssertionError(
        f"the collector did not get there: next seq {feed.expected}, waiting {sorted(feed.pending)}, "
        f"bad lines {feed.bad_lines}, rejected {feed.store.rejects}, down {feed.down}"
    )
