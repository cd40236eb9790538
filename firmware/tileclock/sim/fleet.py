"""Many simulated clocks playing whole games at once, each on the hall's broker (docs/hall.md).

Each clock is the whole clock (`Simulator`: the journal, the loop, the panels,
the uplink with its own paho client), played by a simple random player: turns
of a few seconds to a minute and a half, now and then a stop and a restart,
and at the end of a game the two-step STOP hold that ends it and starts the
next. Game time runs `speed` times faster than real time; one thread steps
every clock a few times a second (the clocks' loops are stepped, not woken).
"""

import random
import threading
import time
from dataclasses import replace

from ..clock.timecode import NS_PER_S
from ..device.config import Config, HallConfig
from .simulator import Simulator

#: how often the fleet's thread steps every clock (real seconds)
STEP_S = 0.1


class Player:
    """The presses of one board, as (game time ns, button, down), made up as the game goes."""

    def __init__(self, seed):
        self.random = random.Random(seed)
        self.t_ns = 0
        self.turns = 0

    def next_presses(self):
        """The presses of the next move: a turn, sometimes a stop and a restart, sometimes a game's end."""
        rnd, presses = self.random, []

        def tap(button, gap_s, hold_s=0.1):
            self.t_ns += int(gap_s * NS_PER_S)
            presses.append((self.t_ns, button, True))
            presses.append((self.t_ns + int(hold_s * NS_PER_S), button, False))
            self.t_ns += int(hold_s * NS_PER_S)

        self.turns += 1
        if self.turns > 60 or (self.turns > 20 and rnd.random() < 0.03):  # the game ends: a new one
            tap("STOP", 1)
            tap("STOP", 1, hold_s=2.2)  # hold to end
            tap("STOP", 0.3)  # confirm, where the rules ask for it
            tap("STOP", 2, hold_s=2.2)  # hold on an ended game: the next one
            tap("B", 5)  # and its first move
            self.turns = 0
            return presses
        if rnd.random() < 0.05:  # a challenge: stopped, then the loser restarts the other side
            tap("STOP", rnd.uniform(2, 20))
            tap(rnd.choice("AB"), rnd.uniform(5, 30))
            return presses
        tap(rnd.choice("AB"), rnd.uniform(3, 90))
        return presses


class Fleet:
    """`count` simulated clocks, ids `prefix-1`..`prefix-N`, on the broker at `host`:`port`."""

    def __init__(self, state_dir, host, port, passwords, count, prefix="clock", speed=1.0, first=1, seed=0):
        self.speed = speed
        self.clocks = {}
        self.players = {}
        self.queued = {}
        for number in range(first, first + count):
            clock_id = f"{prefix}-{number}"
            hall = HallConfig(broker=host, port=port, password=passwords[clock_id], keepalive_s=10)
            config = replace(Config(clock_id=clock_id, board=str(number)), hall=hall)
            self.clocks[clock_id] = Simulator(
                config, state_dir=f"{state_dir}/{clock_id}", refresh_on_ticks=False
            )
            self.players[clock_id] = Player(seed * 100_000 + number)
            self.queued[clock_id] = []
        self._stop = threading.Event()
        self._thread = None
        self._started = None

    def game_ns(self):
        """Game time now: real time since the start, times `speed`."""
        return int((time.monotonic() - self._started) * self.speed * NS_PER_S)

    def step(self):
        """Bring every clock to the current game time: its presses due, its deadlines, its uplink."""
        now = self.game_ns()
        for clock_id, sim in self.clocks.items():
            queued = self.queued[clock_id]
            while True:
                if not queued:
                    queued.extend(self.players[clock_id].next_presses())
                t_ns, button, down = queued[0]
                if t_ns > now:
                    break
                queued.pop(0)
                sim.time.set(max(sim.time(), t_ns))
                sim.press(button, down)
                sim.daemon.pump(sim.time())
            sim.time.set(max(sim.time(), now))
            sim.daemon.pump(sim.time())

    def start(self):
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="fleet", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(STEP_S):
            self.step()

    def stop(self):
        """Stop playing (the clocks stay up)."""
        self._stop.set()
        if self._thread:
            self._thread.join(10)

    def close(self):
        self.stop()
        for sim in self.clocks.values():
            sim.close()
