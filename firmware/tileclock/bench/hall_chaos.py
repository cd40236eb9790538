"""`tileclock hall-bench --chaos`: the hall on bad Wi-Fi, each fault a case with its own figures.

The clocks play in groups (one `Fleet` process each, as one access point's clocks), each group
reaching mosquitto through its own `FaultProxy` (fault_proxy.py: this kernel has no netem, so the
faults are made in user space on loopback); the broker and the real `tileclock hall` are as on the
director's laptop. The cases, in this order (issue 39's point 2):

- `stalls`: (a) 100-400 ms delay both ways and the stream stalled 0.5 s in every 2 s (loss as
  TCP sees it: pauses, then bursts), for `fault_s`;
- `loss5` and `loss25`: (a) 100-400 ms delay both ways (the jitter stands for Wi-Fi's reordering,
  which TCP turns into delay) and 5 % or 25 % of what is sent lost at random, each loss waiting for
  TCP's retransmission (fault_proxy.py's `loss`), for `fault_s`;
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

Here the plans, each case's fault and the run; the hall the cases run on: chaos_hall.py; what
they measure, and the table: chaos_report.py.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import time

from .chaos_hall import ChaosHall, reaper
from .chaos_report import (
    SilentWatch,
    catch_up,
    command,
    commands_figures,
    hall_usage,
    table,
    wait_for_answers,
)
from .fault_proxy import peak_rate
from .hall_clocks import split
from .hall_report import quantile
from .run import Progress
from .service import pick_state_parent

#: (clocks, groups, speed, s of steady play first, s of stalls, loss and one-way, s of the access
#: point's reboot, s asleep, s one group is cut off)
PLANS = {"full": (200, 4, 10.0, 30, 120, 20, 60, 300), "quick": (8, 2, 10.0, 10, 15, 20, 15, 20)}
#: the namespaced cases' plans: the quick one a check of under a minute of faults
NETNS_PLANS = {"full": (200, 4, 10.0, 30, 120, 20, 60, 300), "quick": (8, 2, 10.0, 5, 10, 20, 10, 10)}
CASES = ("stalls", "loss5", "loss25", "group_cut", "ap_reboot", "one_way", "laptop_sleeps", "bridge_cut")
#: the random-loss cases' share of what is sent lost
LOSSES = {"loss5": 0.05, "loss25": 0.25}
#: the cases made on the namespaces' links
LINK_CASES = ("group_cut", "ap_reboot", "one_way")
NETNS_CASES = (*LINK_CASES, "laptop_sleeps", "bridge_cut")


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
    elif case in LOSSES:
        for proxy in hall.proxies:
            if on:
                proxy.set(delay_s=0.1, jitter_s=0.3, loss=LOSSES[case])
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
    lasts = {
        "stalls": fault_s,
        "loss5": fault_s,
        "loss25": fault_s,
        "one_way": fault_s,
        "ap_reboot": outage_s,
        "laptop_sleeps": sleep_s,
    }
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
            cpu_before, _ = hall_usage(hall.director.process.pid)
            times, lost, duplicated, records = catch_up(hall, ended, progress, case)
            cpu_after, rss_mb = hall_usage(hall.director.process.pid)
            took = max(time.monotonic() - ended, 1e-3)
            send()  # and one once it is over
            wait_for_answers(hall, sent)
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
    print(table(results))
    print(
        f"(machine: {os.cpu_count()} cores, load average {load_before:.1f} before the run; {plan[0]} clocks "
        f"in {plan[1]} groups{' in namespaces' if netns else ''} at {plan[2]:g} times real time; the {kind} plan; lost and duplicated "
        f"are counted over the whole run so far; CPU in % of one core; in {folder})",
        file=sys.stdout,
    )
    return 0
