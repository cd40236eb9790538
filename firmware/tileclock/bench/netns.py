"""Network namespaces for the hall's faults: each group of clocks behind its own link, set down for
an outage or an access point that reboots (issue 39).

`Links(groups)` makes one namespace per group, named for this run (`tcnet-PID-K`), each with a veth
pair to the root namespace on private addresses (`10.251.K.0/30`: `.1` the root side, where the
group's `FaultProxy` listens, `.2` the group's side). The namespace has no other address and no
default route, and nothing here turns forwarding on: a socket in it reaches `.1` and nothing else,
nothing leaves the machine. A process's sockets live there through `command(group, argv)` (`ip netns
exec`), a thread's through `enter(group)` (setns(2) on the namespace's file, for that thread and
the threads it starts, as paho's). `down(group)` / `up(group)` set the root side of the link down
and up: the group's side loses its carrier, its packets go nowhere, as when a clock's access point
is gone; the connections are not closed, they time out, as on Wi-Fi. `one_way(group, on)`: the
group's packets arrive, nothing comes back to it.

Everything a `Links` made is removed by `close()`: on leaving its `with`, on an exception, on
SIGTERM or SIGINT (they end the run through KeyboardInterrupt, so every `finally` runs), and, for a
kill nothing can catch (SIGKILL), by a watcher process that outlives this one by a moment. `sweep()`
removes the leftovers of runs whose process is gone (their names hold its pid).

Root and iproute2's `ip` are needed (`unavailable()` says why not, in words).
"""

import contextlib
import ctypes
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

PREFIX = "tcnet"
#: the private /16 the links' /30s are taken from: 10.251.K.0/30, K in 0..255
NET = "10.251"
CLONE_NEWNET = 0x40000000
LOCK = "/run/tileclock-netns.lock"
_NAME = re.compile(rf"^{PREFIX}-(\d+)-(\d+)$")
_LINK = re.compile(r"^tc(\d+)r(\d+)$")


def unavailable():
    """Why namespaces cannot be made here (None: they can)."""
    if sys.platform != "linux":
        return "network namespaces are Linux's"
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed (apt-get install iproute2)"
    return None


def ip(*args, check=True):
    """`ip ARGS`; its output. A failure raises with ip's own words."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def namespaces():
    """The names `ip netns list` shows."""
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def sweep(alive=_alive):
    """Remove the namespaces (and root-side links) of runs whose process is gone; their names."""
    removed = []
    for name in namespaces():
        match = _NAME.match(name)
        if match and not alive(int(match.group(1))):
            ip("netns", "del", name, check=False)
            removed.append(name)
    for line in ip("-o", "link", "show").splitlines():
        link = line.split(":")[1].strip().split("@")[0]
        match = _LINK.match(link)
        if match and not alive(int(match.group(1))):
            ip("link", "del", link, check=False)
            removed.append(link)
    taken = _taken_subnets()  # a one-way fault's route left by a run killed in it
    for route in re.findall(
        rf"blackhole ({re.escape(NET)}\.(\d+)\.2)\b", ip("route", "show", "type", "blackhole")
    ):
        if int(route[1]) not in taken:
            ip("route", "del", "blackhole", f"{route[0]}/32", check=False)
            removed.append(f"blackhole {route[0]}")
    return removed


def _taken_subnets():
    """The K of every 10.251.K.x address in the root namespace (another run's links)."""
    return {int(k) for k in re.findall(rf"inet {re.escape(NET)}\.(\d+)\.", ip("-4", "-o", "addr", "show"))}


class Group:
    """One group's namespace and link: `name`, `root_if` (in the root namespace), `ns_if`, and the
    addresses `root_addr` (the proxy listens there) and `ns_addr`."""

    def __init__(self, pid, number, subnet):
        self.number = number
        self.name = f"{PREFIX}-{pid}-{number}"
        self.root_if, self.ns_if = f"tc{pid}r{number}", f"tc{pid}n{number}"
        self.root_addr, self.ns_addr = f"{NET}.{subnet}.1", f"{NET}.{subnet}.2"

    def __repr__(self):
        return f"Group({self.name}, {self.root_addr} <-> {self.ns_addr})"


_WATCHER = """
import os, subprocess, sys, time
parent, names = int(sys.argv[1]), sys.argv[2:]
while os.getppid() == parent:
    time.sleep(0.5)
for name in names:
    if name.startswith("10."):
        subprocess.run(["ip", "route", "del", "blackhole", name + "/32"], capture_output=True)
    else:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
"""


class Links:
    """`groups` namespaces, each with its link to the root namespace; a context manager."""

    def __init__(self, groups):
        reason = unavailable()
        if reason:
            raise RuntimeError(reason)
        self.pid = os.getpid()
        self.groups = []
        self._watcher = None
        self._previous = {}
        try:
            with open(LOCK, "a") as lock:  # two runs at once take different /30s
                fcntl.flock(lock, fcntl.LOCK_EX)
                sweep()  # under the lock: a run making its links is never swept mid-way
                free = (k for k in range(256) if k not in _taken_subnets())
                for number in range(groups):
                    self._make(Group(self.pid, number, next(free)))
            names = [group.name for group in self.groups] + [group.ns_addr for group in self.groups]
            self._watcher = subprocess.Popen(
                [sys.executable, "-c", _WATCHER, str(self.pid), *names], start_new_session=True
            )
        except BaseException:
            self.close()
            raise

    def _make(self, group):
        ip("netns", "add", group.name)
        self.groups.append(group)  # made: close() removes it, whatever fails next
        ip("link", "add", group.root_if, "type", "veth", "peer", "name", group.ns_if, "netns", group.name)
        ip("addr", "add", f"{group.root_addr}/30", "dev", group.root_if)
        ip("link", "set", group.root_if, "up")
        ip("-n", group.name, "addr", "add", f"{group.ns_addr}/30", "dev", group.ns_if)
        ip("-n", group.name, "link", "set", group.ns_if, "up")
        ip("-n", group.name, "link", "set", "lo", "up")
        return group

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._previous[sig] = signal.signal(sig, _interrupted)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        self.close()

    def down(self, group):
        """The group's link down: an outage, an access point gone."""
        ip("link", "set", group.root_if, "down")

    def up(self, group):
        """The group's link back."""
        ip("link", "set", group.root_if, "up")

    def one_way(self, group, on):
        """A one-way fault (`on`) or its end: the group's packets reach the root side, nothing comes
        back (a blackhole route to the group's address: no TCP ack, no MQTT ack, no command)."""
        ip("route", "add" if on else "del", "blackhole", f"{group.ns_addr}/32")

    def is_up(self, group):
        """Whether the group's side has its carrier (the link is up at both ends)."""
        shown = ip("-n", group.name, "-o", "link", "show", group.ns_if)
        return "LOWER_UP" in shown and "NO-CARRIER" not in shown

    def command(self, group, argv):
        """`argv` run in the group's namespace (for `subprocess`)."""
        return ["ip", "netns", "exec", group.name, *argv]

    @contextlib.contextmanager
    def enter(self, group):
        """This thread in the group's namespace while inside (the threads it starts meanwhile stay
        there): the sockets it opens are the group's."""
        libc = ctypes.CDLL(None, use_errno=True)
        home = os.open(f"/proc/self/task/{threading.get_native_id()}/ns/net", os.O_RDONLY)
        there = os.open(f"/run/netns/{group.name}", os.O_RDONLY)
        try:
            if libc.setns(there, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {group.name}")
            try:
                yield group
            finally:
                if libc.setns(home, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back to the root namespace")
        finally:
            os.close(there)
            os.close(home)

    def close(self):
        """Every namespace (and with it its link) removed; again is harmless."""
        for group in self.groups:
            ip("route", "del", "blackhole", f"{group.ns_addr}/32", check=False)
            ip("netns", "del", group.name, check=False)
            ip("link", "del", group.root_if, check=False)  # gone with the namespace, unless half made
        self.groups = []
        if self._watcher is not None:
            self._watcher.kill()
            self._watcher.wait()
            self._watcher = None


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")
