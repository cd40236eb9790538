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
- `laptop_sleeps`: (d) broker and hall frozen (SIGSTOP) for `sleep_s`, then woken (SIGCONT);
- `bridge_cut`: (f) the spectators' broker's bridge to the hall's broker (through a proxy of its
  own) cut for `fault_s`: a spectator (MQTT over WebSockets, as the pages) notes when the bridge
  said down (the pages then say STALE, `spectators_stale_after_s`) and, after, when it said up and
  the first fresh public state came (`spectators_fresh_after_s`).

With `--netns` (root; netns.py) each group is also a network namespace of its own, its Fleet
process's sockets in it, reaching its proxy over a veth link, and the outages are made on the
links, as a hall's Wi-Fi makes them: nothing is closed, packets just stop, and the clocks and the
broker find out by their keep-alives and TCP's timeouts. The cases are then (b) `group_cut`, one
group's link down; (c) `ap_reboot`, every link down, then all up again within a second; (e)
`one_way`, a blackhole route to each group: its packets arrive, nothing comes back, not even TCP's
acks; and (d) `laptop_sleeps` and (f) `bridge_cut` as without namespaces.

Into each fault (g) a director's command goes from the page as its script sends it (an adjust, to
the first board away): one as the fault begins, one halfway through it, one once it is over. Its
figures: what the audit trail says became of them (applied, not delivered, refused, no answer
yet), `applied_twice` (a command taken more than once by its clock: must be 0) and `trail_wrong`
(the trail saying applied where the clock's journal has not exactly one record of it, or the other
way round: must be 0). The clocks play on, so an adjust is most often refused (running): the
trail's answer, from the clock. And the page's silent-board marking, from the page's snapshot
(`/api/boards`, read every 0.25 s): of the boards away, how many the page showed silent, the
longest it took after the fault began, and the longest until each was online again after it.

After each case's fault: the time until each board's records made before the fault's end are on
file at the hall (catch-up, p50/p99/max over boards), the connection attempts a second at the
peak at the proxies after it, the hall's CPU (% of one core) and peak RSS over the catch-up, and
records lost and duplicated so far (every clock's journal against the hall's game files, as
`count_on_disk` counts). The quick plan shortens every fault (its figures say so).
"""

import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlencode

from ..director.hall import audit_read
from ..director.hall.broker import LocalBroker, free_port
from ..director.hall.viewers_broker import ViewersBroker
from ..director.pages.app import COMMAND_HEADER
from ..director.records.history import read_records
from ..wire.topics import BRIDGE_TOPIC, VIEWERS
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
NETNS_PLANS = {"full": (200, 4, 10.0, 30, 120, 20, 60, 300), "quick": (8, 2, 10.0, 5, 10, 20, 10, 10)}
CASES = ("stalls", "group_cut", "ap_reboot", "one_way", "laptop_sleeps", "bridge_cut")
#: the cases made on the namespaces' links
LINK_CASES = ("group_cut", "ap_reboot", "one_way")
NETNS_CASES = (*LINK_CASES, "laptop_sleeps", "bridge_cut")
#: the longest a case's catch-up is waited for
CATCH_UP_LIMIT_S = 300


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


def _page(hall, method, path, form=None):
    """The hall's page asked as its own script asks it (JSON back); None if it did not answer (the
    laptop asleep) or refused."""
    host = f"127.0.0.1:{hall.director.web_port}"
    body = urlencode(form) if form else None
    headers = {"Host": host, "Origin": f"http://{host}", COMMAND_HEADER: "1"}
    if body:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection = http.client.HTTPConnection("127.0.0.1", hall.director.web_port, timeout=5)
        connection.request(method, path, body, headers)
        answer = connection.getresponse()
        text = answer.read()
        connection.close()
    except (OSError, http.client.HTTPException):
        return None
    return json.loads(text) if answer.status == 200 else None


class SilentWatch:
    """The page's snapshot (`/api/boards`, as the page reads it) every `every_s` in a thread of its
    own: when each board was first shown silent (offline) and online again."""

    def __init__(self, hall, every_s=0.25):
        self.hall, self.every_s = hall, every_s
        self.shown = {}  # clock -> whether online, as last seen
        self.changes = []  # (monotonic time, clock, online)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="silent-watch", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.every_s):
            answer = _page(self.hall, "GET", "/api/boards")
            if not answer:
                continue
            now = time.monotonic()
            for board in answer.get("boards", []):
                clock, online = board["clock"], board.get("online", True)
                if self.shown.get(clock, True) != online:
                    self.changes.append((now, clock, online))
                self.shown[clock] = online

    def delays(self, clocks, since, online):
        """For each of `clocks`, s from `since` until the page first showed it `online` (or not),
        None for a board never shown so."""
        first = {}
        for at, clock, shown in self.changes:
            if at >= since and shown == online and clock in clocks:
                first.setdefault(clock, at - since)
        return [first.get(clock) for clock in clocks]

    def close(self):
        self._stop.set()
        self._thread.join()


def command(hall, clock, side="A", delta_s=-60):
    """A director's adjust to `clock`, sent from the page as its script sends it; its action id
    on the audit trail (None: the page did not take it)."""
    form = {"action": "adjust", "side": side, "delta_s": delta_s}
    answer = _page(hall, "POST", f"/api/board/{clock}/command", form)
    return answer and answer.get("id")


def commands_figures(hall, sent):
    """What became of the actions `sent` ({id: clock}), from the audit trail and the clocks'
    journals: applied (once), twice (applied more than once: never), not delivered, refused, no
    answer yet; and whether every one was applied at most once."""
    trail = {e["id"]: e for e in audit_read.read(hall.director.records) if e.get("id") in sent}
    counts = dict.fromkeys(("applied", "not_delivered", "refused", "unanswered"), 0)
    twice = wrong = 0
    for action, clock in sent.items():
        taken = [r for r in read_records(os.path.join(hall.clocks_dir, clock)) if r.get("by") == action]
        taken = [r for r in taken if r["ev"] != "error"]
        outcome = (trail.get(action, {}).get("outcomes", {}).get(clock) or {}).get("outcome", "unanswered")
        counts[outcome] += 1
        twice += len(taken) > 1
        # the trail true to the clock: applied is one record taken, anything else none
        wrong += (outcome == "applied") != (len(taken) == 1)
    return {"commands": len(sent), **counts, "applied_twice": twice, "trail_wrong": wrong}


def _answers(hall, sent, timeout_s=20):
    """Wait (up to `timeout_s`) until the last action `sent` has its answer on the audit trail."""
    if not sent:
        return
    last = list(sent)[-1]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        entry = next((e for e in audit_read.read(hall.director.records) if e.get("id") == last), None)
        if entry and entry["outcomes"]:
            return
        time.sleep(0.25)


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
    if hall.links is not None and case in LINK_CASES:
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
    elif case == "bridge_cut":
        if on:
            hall.bridge.cut()
        else:
            hall.bridge.restore()


def run(plan, folder, progress, links=None):
    """Every case in turn (the namespaced ones with `links`); returns the figures of each, keyed by
    case."""
    clocks, groups, speed, steady_s, fault_s, outage_s, sleep_s, group_cut_s = plan
    lasts = {"stalls": fault_s, "one_way": fault_s, "ap_reboot": outage_s, "laptop_sleeps": sleep_s}
    lasts["group_cut"] = group_cut_s
    lasts["bridge_cut"] = fault_s
    memory = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    clocks_dir = tempfile.mkdtemp(prefix="tileclock-hall-chaos-clocks-", dir=memory or folder)
    where = " in namespaces, each" if links else ""
    progress.phase(
        f"mosquitto, tileclock hall, {clocks} clocks in {groups} groups{where} behind fault proxies"
    )
    hall = ChaosHall(folder, clocks_dir, clocks, groups, speed, links)
    watcher = reaper(hall)
    silent = SilentWatch(hall).start()
    first, count = split(clocks, groups)[0]
    cut_group = [f"clock-{n}" for n in range(1 + first, 1 + first + count)]
    every_clock = [f"clock-{n}" for n in range(1, clocks + 1)]
    results = {}
    try:
        progress.phase(f"steady play, {steady_s} s")
        time.sleep(steady_s)
        catch_up(hall, time.monotonic(), progress, "steady")
        for case in NETNS_CASES if links else CASES:
            progress.phase(f"{case}: {lasts[case]} s")
            away = cut_group if case == "group_cut" else [] if case == "bridge_cut" else every_clock
            target, sent = (away or every_clock)[0], {}

            def send(target=target, sent=sent):
                action = command(hall, target)
                if action:
                    sent[action] = target

            _fault(hall, case, True, plan)
            began = time.monotonic()
            send()  # (g) a command into the fault, as it begins
            time.sleep(lasts[case] / 2)
            send()  # and one halfway through it (the page may show the board silent by then)
            time.sleep(max(0.0, lasts[case] - (time.monotonic() - began)))
            spread = _fault(hall, case, False, plan)
            ended = time.monotonic()
            cpu_before, _ = _hall_usage(hall.director.process.pid)
            times, lost, duplicated, records = catch_up(hall, ended, progress, case)
            cpu_after, rss_mb = _hall_usage(hall.director.process.pid)
            took = max(time.monotonic() - ended, 1e-3)
            send()  # and one once it is over
            _answers(hall, sent)
            marked = silent.delays(away, began, online=False)
            cleared = silent.delays(away, ended, online=True)
            shown = [d for d in marked if d is not None]
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
                # the page's silent-board marking: of the boards away, how many it showed silent,
                # the longest it took, and the longest until shown online again after the fault
                "silent_shown": len(shown),
                "boards_away": len(away),
                "silent_marked_max_s": max(shown, default=None),
                "silent_cleared_max_s": max((d for d in cleared if d is not None), default=None),
                **commands_figures(hall, sent),
            }
            if case == "bridge_cut":  # the spectators' pages: STALE, then fresh again
                deadline = time.monotonic() + 60
                while hall.spectator.first(ended) is None and time.monotonic() < deadline:
                    time.sleep(0.1)
                results[case]["spectators_stale_after_s"] = hall.spectator.first(began, up=False)
                results[case]["spectators_bridge_back_s"] = hall.spectator.first(ended, up=True)
                results[case]["spectators_fresh_after_s"] = hall.spectator.first(ended)
            if spread is not None:
                results[case]["links_back_within_s"] = spread
            progress.say(f"{case}: {results[case]}")
    finally:
        silent.close()
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
        ("silent_marked_max_s", "{:.1f}"),
        ("silent_cleared_max_s", "{:.1f}"),
        ("commands", "{}"),
        ("applied", "{}"),
        ("applied_twice", "{}"),
        ("not_delivered", "{}"),
        ("refused", "{}"),
        ("unanswered", "{}"),
        ("trail_wrong", "{}"),
        ("spectators_stale_after_s", "{:.1f}"),
        ("spectators_fresh_after_s", "{:.1f}"),
    ]
    lines = ["  ".join(name for name, _ in columns)]
    for case, figures in results.items():
        row = {"case": case, **figures}
        cells = [("n/a" if row.get(name) is None else form.format(row[name])) for name, form in columns]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def main(quick=False, as_json=False, clocks=None, processes=None, speed=None, out=None, netns=False):
    """`tileclock hall-bench --chaos`: each case's figures, as a table or one JSON object.
    `processes` is the number of groups (one proxy and one Fleet process each; with `netns`, one
    namespace each too)."""

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
