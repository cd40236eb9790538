"""A clock's history made up quickly: a state directory holding many whole games, for measuring
what history costs (start-up, memory, export) without playing each game in real time.

One game is played through the real clock in virtual time (presses every 20 s,
a checkpoint every 10 s while a side runs, about 50 minutes: some 400 records);
its records are then written again and again, each copy renumbered and
reframed, one segment a game, as the journal itself lays them out.
"""

import json
import os

from ..clock.timecode import NS_PER_S
from ..wire import segments
from ..wire.protocol import frame, unframe


def sample_game(minutes=50, turn_s=20):
    """The records (dicts) of one whole game, from its `boot` to its `end`, made by the real clock."""
    from ..device.config_schema import Config
    from ..device.hardware.virtual import VirtualTime
    from ..sim.simulator import Simulator

    sim = Simulator(Config(), time=VirtualTime(), refresh_on_ticks=False, checkpoints=True, boot_id="history")
    t = 0
    for turn in range(minutes * 60 // turn_s):
        button = "B" if turn % 2 == 0 else "A"
        sim.set_button(button, True, t)
        sim.set_button(button, False, t + NS_PER_S // 10)
        t += turn_s * NS_PER_S
    sim.set_button("STOP", True, t)
    sim.set_button("STOP", False, t + NS_PER_S // 10)
    sim.set_button("STOP", True, t + NS_PER_S)
    sim.set_button("STOP", False, t + 4 * NS_PER_S)
    records = sim.journal.records()
    sim.close()
    return [r for r in records if r["ev"] != "status"]


def make_history(state_dir, games, game=None):
    """Write `games` whole games into `state_dir`'s journal (one segment each); returns the seq
    the next record would carry."""
    game = game or sample_game()
    folder = os.path.join(state_dir, "journal")
    os.makedirs(folder, exist_ok=True)
    seq = 0
    for _ in range(games):
        lines = []
        for record in game:
            lines.append(frame(json.dumps(dict(record, seq=seq), separators=(",", ":"))))
            seq += 1
        with open(
            os.path.join(folder, segments.segment_name(seq - len(game))), "w", encoding="ascii"
        ) as file:
            file.write("".join(line + "\n" for line in lines))
    open(os.path.join(folder, f"{segments.RESERVED}{seq}"), "w").close()
    unframe(lines[-1])  # the copies are records the clock reads back
    return seq


def make_legacy(state_dir, games, game=None):
    """Write `games` whole games into `state_dir` as an earlier version kept them: one file,
    `journal.log`, every record renumbered. Returns the seq the next record would carry."""
    game = game or sample_game()
    os.makedirs(state_dir, exist_ok=True)
    seq = 0
    with open(os.path.join(state_dir, "journal.log"), "w", encoding="ascii") as file:
        for _ in range(games):
            for record in game:
                file.write(frame(json.dumps(dict(record, seq=seq), separators=(",", ":"))) + "\n")
                seq += 1
    return seq
