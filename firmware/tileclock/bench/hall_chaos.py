"""`tileclock hall-bench --chaos`: the hall on bad Wi-Fi, each fault a case with its own figures.

The clocks play in groups (one `Fleet` process each, as one access point's clocks), each group
reaching mosquitto through its own `FaultProxy` (fault_proxy.py: this kernel has no netem, so the
faults are made in user space on loopback); the broker and the real `tileclock hall` are as on the
director's laptop. The cases, in this order (issue 39's point 2):

- `stalls`: (a) 100-400 ms delay both ways and the stream stalled 0.5 s in every 2 s (loss as
  TCP sees it: pauses, then bursts), for `fault_s`;
- `group_cut`: (b) one group (one access point's clocks) cut off for `group_cut_s`, the others
  playing on through it, then back;
- `ap_reboot`: (c) every group's link cut (connections closed, new ones refused) for `outage_s`,
  then every group back at the same moment;
- `one_way`: (e) the clocks can send, but nothing from the broker (acks, commands) arrives, for
  `fault_s`;
- `laptop_sleeps`: (d) broker and hall frozen (SIGSTOP) for `sleep_s`, then woken (SIGCONT).

With `--netns` (root; netns.py) each group is also a network namespace of its own, its Fleet
process's sockets in it, reaching its proxy over a veth link, and the outages are made on the
links, as a hall's Wi-Fi makes them: nothing is closed, packets just stop, and the clocks and the
broker find out by their keep-alives and TCP's timeouts. The cases are then (b) `group_cut`, one
group's link down; (c) `ap_reboot`, every link down, then all up again within a second; (e)
`one_way`, a blackhole route to each group: its packets arrive, nothing comes back, not even TCP's
acks.

After each case's fault: the time until each board's records made before the fault's end are on
file at the hall (catch-up, p50/p99/max over boards), the connection attempts a second at the
peak at the proxies after it, the hall's CPU (% of one core) and peak RSS over the catch-up, and
records lost and duplicated so far (every clock's journal against the hall's game files, as
`count_on_disk` counts). The quick plan shortens every fault (its figures say so).
"""

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ..director.hall.broker import LocalBroker, free_port
from . import procstat
from .fault_proxy import FaultProxy, peak_rate
from .hall import Director, count_on_disk, journaled
from .hall_clocks import FleetProcess, split
from .hall_report import quantile
from .run import Progress
from .service import pick_state_parent

#: (clocks, groups, speed, s of steady play first, s of delay/stalls and one-way, s of the access
#: point's reboot, s asleep, s one group is cut off)
PLANS = {"full": (200, 4, 10.0, 30, 120, 20, 60, 300), "quick": (8, 2, 10.0, 10, 15, 20, 15, 20)}
#: the namespaced cases' plans: the quick one a check of under a minute of faults
NETNS_PLANS = {"full": (200, 4, 10.0, 30, 120, 20, 60, 300), "quick": (8, 2, 10.0, 5, 10, 20, 0, 10)}
CASES = ("stalls", "group_cut", "ap_reboot", "one_way", "laptop_sleeps")
NETNS_CASES = ("group_cut", "ap_reboot", "one_way")
#: the longest a case's catch-up is waited for
CATCH_UP_LIMIT_S = 300


class ChaosHall:
    """mosquitto, `tileclock hall`, and `groups` Fleet processes each behind its own FaultProxy."""

    def __init__(self, folder, clocks_dir, clocks, groups, speed, links=None):
        ids = [f"clock-{n}" for n in range(1, clocks + 1)]
        users = {name: secrets.token_urlsafe(12) for name in ["director", *ids]}
        self.folder, self.clocks_dir = folder, clocks_dir
        self.broker = LocalBroker(os.path.join(folder, "broker"), users).start()
        self.proxies, self.fleets, self.director = [], [], None
        self.frozen = False
        self.links = links
        try:
            self.director = Director(folder, self.broker.port, users["director"], free_port()).start()
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
        if self.director is not None:
            self.director.stop()
        self.broker.stop()


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
    pids = [hall.broker.process.pid, hall.director.process.pid]
    pids += [fleet.process.pid for fleet in hall.fleets]
    command = [sys.executable, "-c", _REAPER, str(os.getpid()), hall.clocks_dir, *map(str, pids)]
    return subprocess.Popen(command, start_new_session=True)


def _hall_usage(pid):
    """(CPU seconds, peak RSS MB) of the hall's process now."""
    return procstat.cpu_seconds(pid) or 0.0, procstat.peak_rss_mb(pid) or 0.0


def catch_up(hall, since, progress, what):
    """Wait until every board's records journaled by now are on file at the hall; returns each
    board's catch-up time (s after `since`) and the lost/duplicated counts when all were in."""
    keys, _ = journaled(hall.clocks_dir)
    wanted = {}
    for clock, seq in keys:
        wanted.setdefault(clock, set()).add(seq)
    caught = {}
    deadline = time.monotonic() + CATCH_UP_LIMIT_S
    stored = {}
    while len(caught) < len(wanted) and time.monotonic() < deadline:
        stored = count_on_disk(hall.director.records)
        now = time.monotonic()
        for clock, seqs in wanted.items():
            if clock not in caught and all((clock, seq) in stored for seq in seqs):
                caught[clock] = now - since
        time.sleep(0.25)
    if len(caught) < len(wanted):
        progress.say(f"{what}: {len(wanted) - len(caught)} boards not caught up in {CATCH_UP_LIMIT_S} s")
    stored = count_on_disk(hall.director.records)
    lost = sum(1 for key in keys if key not in stored)
    duplicated = sum(1 for n in stored.values() if n > 1)
    return list(caught.values()), lost, duplicated, len(keys)


def _link_fault(hall, case, on):
    """Case `case`'s fault made (`on`) or ended on the groups' links; returns how far apart in
    time (s) the links were set."""
    links, times = hall.links, []
    for group in links.groups if case != "group_cut" else links.groups[:1]:
        if case == "one_way":
            links.one_way(group, on)
        elif on:
            links.down(group)
        else:
            links.up(group)
        times.append(time.monotonic())
    return times[-1] - times[0]


def _fault(hall, case, on, plan):
    """Make (`on`) or end case `case`'s fault on every group."""
    if hall.links is not None and case in NETNS_CASES:
        return _link_fault(hall, case, on)
    if case == "stalls":
        for proxy in hall.proxies:
            if on:
                proxy.set(delay_s=0.1, jitter_s=0.3, stall_every_s=2.0, stall_for_s=0.5)
            else:
                proxy.clear()
    elif case == "one_way":
        for proxy in hall.proxies:
            proxy.set(down={"hold": on})
    elif case in ("ap_reboot", "group_cut"):
        for proxy in hall.proxies if case == "ap_reboot" else hall.proxies[:1]:
            if on:
                proxy.cut()
            else:
                proxy.restore()
    elif case == "laptop_sleeps":
        hall.freeze(on)


def run(plan, folder, progress, links=None):
    """Every case in turn (the namespaced ones with `links`); returns the figures of each, keyed by
    case."""
    clocks, groups, speed, steady_s, fault_s, outage_s, sleep_s, group_cut_s = plan
    lasts = {"stalls": fault_s, "one_way": fault_s, "ap_reboot": outage_s, "laptop_sleeps": sleep_s}
    lasts["group_cut"] = group_cut_s
    memory = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    clocks_dir = tempfile.mkdtemp(prefix="tileclock-hall-chaos-clocks-", dir=memory or folder)
    where = " in namespaces, each" if links else ""
    progress.phase(
        f"mosquitto, tileclock hall, {clocks} clocks in {groups} groups{where} behind fault proxies"
    )
    hall = ChaosHall(folder, clocks_dir, clocks, groups, speed, links)
    watcher = reaper(hall)
    results = {}
    try:
        progress.phase(f"steady play, {steady_s} s")
        time.sleep(steady_s)
        catch_up(hall, time.monotonic(), progress, "steady")
        for case in NETNS_CASES if links else CASES:
            progress.phase(f"{case}: {lasts[case]} s")
            _fault(hall, case, True, plan)
            time.sleep(lasts[case])
            spread = _fault(hall, case, False, plan)
            ended = time.monotonic()
            cpu_before, _ = _hall_usage(hall.director.process.pid)
            times, lost, duplicated, records = catch_up(hall, ended, progress, case)
            cpu_after, rss_mb = _hall_usage(hall.director.process.pid)
            took = max(time.monotonic() - ended, 1e-3)
            results[case] = {
                "fault_s": lasts[case],
                "records": records,
                "lost": lost,
                "duplicated": duplicated,
                "catch_up_p50_s": quantile(times, 0.5),
                "catch_up_p99_s": quantile(times, 0.99),
                "catch_up_max_s": max(times, default=None),
                "attempts_peak_per_s": peak_rate([t for p in hall.proxies for t in p.accepts], ended),
                # connections the broker was offered after the fault: one a clock that was away
                "attempts_after": sum(1 for p in hall.proxies for t in p.accepts if t >= ended),
                "hall_cpu_percent": 100 * (cpu_after - cpu_before) / took,
                "hall_rss_mb": rss_mb,
            }
            if spread is not None:
                results[case]["links_back_within_s"] = spread
            progress.say(f"{case}: {results[case]}")
    finally:
        hall.close()
        shutil.rmtree(clocks_dir, ignore_errors=True)
        watcher.kill()  # all it would end is ended
        watcher.wait()
    return results


def _table(results):
    columns = [
        ("case", "{}"),
        ("fault_s", "{:g}"),
        ("records", "{:,}"),
        ("lost", "{}"),
        ("duplicated", "{}"),
        ("catch_up_p50_s", "{:.1f}"),
        ("catch_up_p99_s", "{:.1f}"),
        ("catch_up_max_s", "{:.1f}"),
        ("attempts_peak_per_s", "{:g}"),
        ("hall_cpu_percent", "{:.0f}"),
        ("hall_rss_mb", "{:.0f}"),
    ]
    lines = ["  ".join(name for name, _ in columns)]
    for case, figures in results.items():
        row = {"case": case, **figures}
        cells = [("n/a" if row[name] is None else form.format(row[name])) for name, form in columns]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def main(quick=False, as_json=False, clocks=None, processes=None, speed=None, out=None, netns=False):
    """`tileclock hall-bench --chaos`: each case's figures, as a table or one JSON object.
    `processes` is the number of groups (one proxy and one Fleet process each; with `netns`, one
    namespace each too)."""
    import json

    kind = "quick" if quick else "full"
    planned_clocks, planned_groups, planned_speed, *phases = (NETNS_PLANS if netns else PLANS)[kind]
    plan = (clocks or planned_clocks, processes or planned_groups, speed or planned_speed, *phases)
    folder = out or tempfile.mkdtemp(prefix="tileclock-hall-chaos-", dir=pick_state_parent())
    os.makedirs(folder, exist_ok=True)
    load_before = os.getloadavg()[0]

    def terminated(signum, frame):
        raise KeyboardInterrupt  # the finally blocks stop and remove all it started

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        if netns:
            from .netns import Links

            with Links(plan[1]) as links:  # removed however the run ends
                results = run(plan, folder, Progress(2 + len(NETNS_CASES)), links)
        else:
            results = run(plan, folder, Progress(2 + len(CASES)))
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        print(json.dumps(results))
        return 0
    print(_table(results))
    print(
        f"(machine: {os.cpu_count()} cores, load average {load_before:.1f} before the run; {plan[0]} clocks "
        f"in {plan[1]} groups{' in namespaces' if netns else ''} at {plan[2]:g} times real time; the {kind} plan; lost and duplicated "
        f"are counted over the whole run so far; CPU in % of one core; in {folder})",
        file=sys.stdout,
    )
    return 0
