"""The hall `tileclock hall-bench --chaos` runs its cases on (hall_chaos.py): mosquitto, the real
`tileclock hall`, the clocks in groups each behind its own `FaultProxy`, and the spectators' broker
bridged through a proxy of its own with a spectator reading it; and a watcher that ends it all
should this process be killed where it cannot clean up."""

import os
import secrets
import signal
import subprocess
import sys
import time

from ..director.hall.broker import LocalBroker, free_port
from ..director.hall.viewers_broker import ViewersBroker
from ..wire.topics import BRIDGE_TOPIC, VIEWERS
from .fault_proxy import FaultProxy
from .hall import Director
from .hall_clocks import FleetProcess, split


class ChaosHall:
    """mosquitto, `tileclock hall`, and `groups` Fleet processes each behind its own FaultProxy."""

    def __init__(self, folder, clocks_dir, clocks, groups, speed, links=None):
        ids = [f"clock-{n}" for n in range(1, clocks + 1)]
        users = {name: secrets.token_urlsafe(12) for name in ["director", VIEWERS, *ids]}
        self.folder, self.clocks_dir = folder, clocks_dir
        self.broker = LocalBroker(os.path.join(folder, "broker"), users).start()
        self.proxies, self.fleets, self.director = [], [], None
        self.bridge = self.viewers = self.spectator = None
        self.frozen = False
        self.links = links
        try:
            self.director = Director(folder, self.broker.port, users["director"], free_port()).start()
            # the spectators' broker, its bridge to the hall's through a proxy of its own (f)
            self.bridge = FaultProxy(("127.0.0.1", self.broker.port), seed=99).start()
            viewers_dir = os.path.join(folder, "viewers")
            self.viewers = ViewersBroker(viewers_dir, self.bridge.port, users[VIEWERS]).start()
            self.spectator = Spectator(self.viewers.port)
            for number, (first, count) in enumerate(split(clocks, groups)):
                group = links.groups[number] if links else None
                host = group.root_addr if group else "127.0.0.1"
                proxy = FaultProxy(("127.0.0.1", self.broker.port), seed=number, host=host).start()
                self.proxies.append(proxy)
                prefix = links.command(group, []) if group else ()
                fleet = FleetProcess(
                    folder, clocks_dir, number, proxy.port, users, count, 1 + first, speed, host, prefix
                )
                self.fleets.append(fleet.start())
            for fleet in self.fleets:
                fleet.expect("playing")
        except BaseException:
            self.close()
            raise

    def freeze(self, frozen):
        """The director's laptop asleep (SIGSTOP to broker and hall) or woken (SIGCONT)."""
        sig = signal.SIGSTOP if frozen else signal.SIGCONT
        for process in (self.broker.process, self.director.process):
            process.send_signal(sig)
        self.frozen = frozen

    def close(self):
        """Everything it started, stopped: also after a failure or a kill (SIGTERM, Ctrl-C)."""
        if self.frozen:
            self.freeze(False)
        for fleet in self.fleets:
            fleet.quit()
        for proxy in self.proxies:
            proxy.close()
        if self.spectator is not None:
            self.spectator.close()
        if self.viewers is not None:
            self.viewers.stop()
        if self.bridge is not None:
            self.bridge.close()
        if self.director is not None:
            self.director.stop()
        self.broker.stop()


class Spectator:
    """A spectator's page as its script reads the spectators' broker (MQTT over WebSockets): when
    the bridge said it was down ("0": the pages say STALE) and up, and when each public state came."""

    def __init__(self, port):
        import paho.mqtt.client as mqtt

        self.bridge = []  # (monotonic time, up)
        self.states = []  # monotonic times of the public states (not retained ones)
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, transport="websockets")
        topics = [(BRIDGE_TOPIC, 0), ("tileclock/+/public", 0)]
        self.client.on_connect = lambda c, u, f, r, p: c.subscribe(topics)
        self.client.on_message = self._message
        self.client.connect_async("127.0.0.1", port)
        self.client.loop_start()

    def _message(self, client, userdata, message):
        now = time.monotonic()
        if message.topic == BRIDGE_TOPIC:
            self.bridge.append((now, message.payload == b"1"))
        elif message.payload and not message.retain:
            self.states.append(now)

    def first(self, since, up=None):
        """s from `since` to the first bridge notice `up` (or, `up` None, the first state) after it."""
        times = [t for t, said in self.bridge if said == up] if up is not None else self.states
        return next((t - since for t in times if t >= since), None)

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()


_REAPER = """
import os, shutil, signal, sys, time
parent, folder, pids = int(sys.argv[1]), sys.argv[2], [int(p) for p in sys.argv[3:]]
while os.getppid() == parent:
    time.sleep(0.5)
for pid in pids:
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
shutil.rmtree(folder, ignore_errors=True)
"""


def reaper(hall):
    """A watcher process for a kill this process cannot catch (SIGKILL): once this process is gone
    it ends the broker, the hall and the clocks' processes (woken first, were they frozen), and
    removes the clocks' state. The Fleet processes also end by themselves when their stdin closes."""
    pids = [hall.broker.process.pid, hall.director.process.pid, hall.viewers.process.pid]
    pids += [fleet.process.pid for fleet in hall.fleets]
    command = [sys.executable, "-c", _REAPER, str(os.getpid()), hall.clocks_dir, *map(str, pids)]
    return subprocess.Popen(command, start_new_session=True)
