"""Many simulated clocks playing whole games at once, each on the hall's broker (docs/hall.md).

Each clock is the whole clock (`Simulator`: the journal, the loop, the panels,
the uplink with its own paho client), played by a simple random player: turns
of a few seconds to a minute and a half, now and then a stop and a restart,
and at the end of a game the two-step STOP hold that ends it and starts the
next. Game time runs `speed` times faster than real time; one thread steps
every clock a few times a second (the clocks' loops are stepped, not woken).
`hold()` stops the play and the game time but keeps every uplink going, so a
benchmark can let every record reach the director before it counts them.
"""

import logging
import os
import random
import threading
import time
from dataclasses import replace

from ..clock.timecode import NS_PER_S
from ..device.config_schema import Config, HallConfig
from ..device.hardware.virtual import VirtualTime
from .simulator import Simulator

#: how often the fleet's thread steps every clock (real seconds)
STEP_S = 0.1
#: a step longer than this is said in the log: the clocks fell behind their game time
SLOW_STEP_S = 2.0

log = logging.getLogger(__name__)


class Player:
    """The presses of one board, as (game time ns, button, down), made up as the game goes."""

    def __init__(self, seed, calls=None):
        self.random = random.Random(seed)
        self.t_ns = 0
        self.turns = 0
        #: None: never calls the director; else the turn of its first call (then now and then)
        self.calls = calls

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
        if self.calls is not None and (self.turns == self.calls or rnd.random() < 0.01):
            tap("STOP", rnd.uniform(2, 20))  # a question for the director: stopped, then a call
            for _ in range(3):  # STOP tapped three times within 2 s (docs/player-guide.md)
                tap("STOP", 0.4)
            tap(rnd.choice("AB"), rnd.uniform(30, 90))  # answered or not, the game goes on
            return presses
        if rnd.random() < 0.05:  # a challenge: stopped, then the loser restarts the other side
            tap("STOP", rnd.uniform(2, 20))
            tap(rnd.choice("AB"), rnd.uniform(5, 30))
            return presses
        tap(rnd.choice("AB"), rnd.uniform(3, 90))
        return presses


class Fleet:
    """`count` simulated clocks, ids `prefix-1`..`prefix-N`, on the broker at `host`:`port` (over
    TLS checked by `tls_ca`, a CA file, when given)."""

    def __init__(
        self,
        state_dir,
        host,
        port,
        passwords,
        count,
        prefix="clock",
        speed=1.0,
        first=1,
        seed=0,
        rounds=False,
        calls=False,
        tls_ca=None,
    ):
        """`calls`: the players call the director now and then (the first board on its third move)."""
        self.speed = speed
        self._started_wall_ns = time.time_ns()  # the time of day at game time 0 (set again at start)
        #: the players wait at a fresh game for the director's round to start (`set start=`)
        self.rounds = rounds
        self.clocks = {}
        self.players = {}
        self.queued = {}
        self._lines = {}  # clock id -> (pty master, pty slave): each clock's serial line, read by nobody
        for number in range(first, first + count):
            clock_id = f"{prefix}-{number}"
            hall = HallConfig(
                broker=host, port=port, password=passwords[clock_id], keepalive_s=10, tls_ca=tls_ca
            )
            config = replace(Config(clock_id=clock_id, board=str(number)), hall=hall)
            # a pty, not loop://: a real port's buffer, emptied with one read a step
            master, slave = self._lines[clock_id] = os.openpty()
            os.set_blocking(master, False)
            self.clocks[clock_id] = Simulator(
                config,
                state_dir=f"{state_dir}/{clock_id}",
                refresh_on_ticks=False,
                serial_url=os.ttyname(slave),
                time=(game_time := VirtualTime(0)),
                # the time of day of its game time, so spectators' pages count with it (at speed 1)
                wall=lambda game_time=game_time: self._started_wall_ns + game_time(),
            )
            # each clock's wall clock is this laptop's (`wall` above): no offset to report, exactly
            self.clocks[clock_id].uplink.report_time(lambda: {"offset_us": 0, "error_us": 0, "synced": True})
            first_call = (3 if number == first else 0) if calls else None
            self.players[clock_id] = Player(seed * 100_000 + number, first_call)
            self.queued[clock_id] = []
        self.playing = True
        #: the longest a step took (real seconds): how far the fleet fell behind its game time
        self.longest_step_s = 0.0
        self._stepping = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._started = None

    def game_ns(self):
        """Game time now: real time since the start, times `speed`."""
        return int((time.monotonic() - self._started) * self.speed * NS_PER_S)

    def step(self):
        """Bring every clock to the current game time: its presses due, its deadlines, its uplink.
        Once held, only the uplinks move (commands answered, records handed to paho)."""
        began = time.monotonic()
        with self._stepping:
            if self.playing:
                self._play(self.game_ns())
            else:
                for sim in self.clocks.values():
                    sim.daemon.pump(sim.time())
        took = time.monotonic() - began
        self.longest_step_s = max(self.longest_step_s, took)
        if took > SLOW_STEP_S:
            log.warning("fleet: a step took %.1f s (%s)", took, "playing" if self.playing else "held")

    def _play(self, now):
        for clock_id, sim in self.clocks.items():
            if not self.playing:
                return  # held mid-step
            queued = self.queued[clock_id]
            if self.rounds and self._waiting(sim):
                self.players[clock_id].t_ns = now  # its players sit at the board until the round starts
                queued.clear()
                sim.time.set(max(sim.time(), now))
                sim.daemon.pump(sim.time())
                self._empty_line(clock_id)
                continue
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
            self._empty_line(clock_id)

    @staticmethod
    def _waiting(sim):
        """A fresh game whose round has not started: its players wait for the director's start."""
        game = sim.clock.game
        return game.state == "ready" and game.round_start_ns is None and game.round_start_at is None

    def _empty_line(self, clock_id):
        """Nobody reads the clocks' serial lines here: throw their output away."""
        try:
            while os.read(self._lines[clock_id][0], 65536):
                pass
        except BlockingIOError:
            pass

    def start(self):
        self._started = time.monotonic()
        self._started_wall_ns = time.time_ns()
        self._thread = threading.Thread(target=self._run, name="fleet", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(STEP_S):
            self.step()

    def hold(self):
        """Stop pressing and stop the game time; the uplinks go on. Returns once no step presses
        anything any more."""
        self.playing = False
        with self._stepping:
            pass

    def stop(self):
        """Stop playing (the clocks stay up)."""
        self._stop.set()
        if self._thread:
            self._thread.join()

    def close(self):
        self.stop()
        for sim in self.clocks.values():
            sim.close()
        for fds in self._lines.values():
            for fd in fds:
                os.close(fd)
