"""Journals as the tests make them: a game played on a clock with a given journal, games ended
one after another, one game with every kind of record (made once), and lines written or reframed
as a segment holds them."""

import json
import os

from conftest import tap
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.journal import Journal
from tileclock.sim.simulator import Simulator
from tileclock.wire import segments

S = NS_PER_S
GAME = ((0, "B"), (10, "A"), (20, "B"))


def play(journal, presses=GAME, end=False, time=None, boot_id=None):
    """Play a game on a clock with `journal` (its records sent on the line); `end` ends it and opens
    the next. Returns the lines sent; the clock is closed cleanly."""
    time = time or VirtualTime()
    start = time()
    sim = Simulator(Config(), journal=journal, time=time, boot_id=boot_id)
    for t_s, button in presses:
        sim.set_button(button, True, start + t_s * S)
        sim.set_button(button, False, start + t_s * S + S // 10)
    if end:
        sim.set_button("STOP", True, start + 30 * S)
        sim.set_button("STOP", False, start + 30 * S + S // 10)
        sim.set_button("STOP", True, start + 31 * S)  # end the game: hold, let go, confirm...
        sim.set_button("STOP", False, start + 34 * S)
        sim.set_button("STOP", True, start + 35 * S)
        sim.set_button("STOP", False, start + 35 * S + S // 10)
        sim.set_button("STOP", True, start + 36 * S)  # ...then open the next: one hold
        sim.set_button("STOP", False, start + 39 * S)
    sim.finish(start + 40 * S)
    lines = sim.serial_lines()
    sim.close()
    return lines


def ended_games(folder, count, retention):
    """`count` games played and ended, each by a clock started afresh on `folder` (the next game
    opened); returns the last start's journal and the segments' first seqs."""
    journal = Journal.open(folder, retention=retention)
    for _ in range(count):
        play(journal, end=True)
        journal = Journal.open(folder, retention=retention)
    return journal, segments.list_segments(folder)


_RICH = {}


def rich_game():
    """The lines of one game that uses every kind of record a game holds (a set, a late start and
    an arrival, switches, an ignored press, checkpoints, overtime and its penalty, a correction, an
    end and a reopen), still running at its last record; made once."""
    if not _RICH:
        import tempfile

        from tileclock.wire.protocol import with_crc

        folder = os.path.join(tempfile.mkdtemp(prefix="tileclock-rich-"), "journal")
        sim = Simulator(
            Config(), journal=Journal.open(folder), time=VirtualTime(0, "boot-1"), checkpoints=True
        )
        sim.send(with_crc("set wall=1800000000000 round=3 table=T4 A=1:00 B=1:00"), 0)
        sim.send(with_crc("late B"), 1 * S)
        for button, t_s in (("B", 5), ("B", 6), ("A", 16), ("B", 26), ("B", 27), ("STOP", 80)):
            tap(sim, button, t_s)  # B arrives, and runs A; turns; a press that is not B's turn; a stop
        sim.send(with_crc("adjust A +60000"), 81 * S)
        tap(sim, "A", 82)
        tap(sim, "STOP", 95)
        tap(sim, "STOP", 96, hold_s=3)  # end the game: hold, let go, confirm
        tap(sim, "STOP", 100)
        sim.send(with_crc("reopen"), 102 * S)
        tap(sim, "B", 105)
        tap(sim, "A", 110)
        sim.run_to(125 * S)
        sim.close()
        _RICH["lines"] = open(os.path.join(folder, segments.segment_name(0))).read().splitlines()
    return _RICH["lines"]


def write_game(folder, lines):
    """A journal folder holding `lines` as its one segment."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, segments.segment_name(0)), "w") as file:
        file.write("".join(line + "\n" for line in lines))


def reframed(line, **changes):
    """`line` with `changes` to its fields, framed again with a good integrity field."""
    from tileclock.wire.protocol import frame

    record = {key: value for key, value in json.loads(line).items() if key != "crc"}
    return frame(json.dumps(record | changes, separators=(",", ":")))
