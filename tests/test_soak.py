"""A soak: whole tournaments of random play through the simulator, checked against a reference model.

`make test` runs a small tournament; `TILECLOCK_SOAK=full make test ARGS=tests/test_soak.py` runs
hundreds of games. The generator is seeded: a failure names its seed and game, and happens again.

The reference model below is written from docs/rules.md alone, at the level of presses and holds;
it shares no code with the clock.
"""

import os
import random

import pytest

from tileclock.clock.rules import PROFILES
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.journal import Journal
from tileclock.sim.simulator import Simulator

S = 1_000_000_000
MS = 1_000_000
PROFILE = {  # docs/rules.md, "Profiles"
    "naspa": {"cap_s": 600, "late_forfeit_at_overtime": True, "late_every_s": None, "late_forfeit_s": None,
              "absence_runs_clock": True},
    "nsa1997": {"cap_s": None, "late_forfeit_at_overtime": False, "late_every_s": None, "late_forfeit_s": None,
                "absence_runs_clock": True},
    "school": {"cap_s": None, "late_forfeit_at_overtime": False, "late_every_s": 180, "late_forfeit_s": 900,
               "absence_runs_clock": False, "round_s": 3000},
}  # fmt: skip  # one profile a row reads as a table


def other(side):
    return "B" if side == "A" else "A"


def clock_text(seconds):
    sign = "-" if seconds < 0 else ""
    return f"{sign}{abs(seconds) // 60}:{abs(seconds) % 60:02d}"


class Model:
    """What the clock must record, from the rules as written."""

    def __init__(self, rules):
        self.rules = rules
        self.p = PROFILE[rules]
        self.out = []

    # --- state
    def new_game(self, t):
        self.t0, self.state, self.run, self.since = t, "ready", None, t
        self.used = {"A": 0, "B": 0}
        self.limit = {"A": 1500 * S, "B": 1500 * S}
        self.late, self.late_since, self.lost, self.capped = None, None, None, False
        self.late_pen = {"A": 0, "B": 0}
        self.round_start = None
        self.forfeited = False
        self.ended_by = None
        self.stop = None  # [when it went down, began while stopped, a chord or a press was made]
        self.chord = {}
        self.confirm_until = None
        self.last_input = self.stopped_since = t
        self.waking = getattr(self, "waking", {})
        self.emit("new_game", t)

    def used_at(self, side, t):
        return self.used[side] + (t - self.since if self.run == side else 0)

    def shown(self, side, t):
        over = self.limit[side] // S - self.used_at(side, t) // S
        return over if self.p["cap_s"] is None else max(over, -(self.p["cap_s"] + 1))

    def past_cap(self, side, t):
        cap = self.p["cap_s"]
        return cap is not None and self.limit[side] // S - self.used_at(side, t) // S <= -(cap + 1)

    def over_pen(self, side, t):
        if self.past_cap(side, t):
            return 100
        over = -self.shown(side, t)
        return 10 * -(-over // 60) if over > 0 else 0

    def emit(self, ev, t, **fields):
        sides = {
            s: {
                "used_ms": self.used_at(s, t) // MS,
                "shown": clock_text(self.shown(s, t)),
                "pen": self.over_pen(s, t) + self.late_pen[s],
                "late_pen": self.late_pen[s],
            }
            for s in "AB"
        }
        self.out.append(
            dict(ev=ev, t_ms=(t - self.t0) // MS, state=self.state, run=self.run, **sides, **fields)
        )

    def go(self, side, t):
        if self.run:
            self.used[self.run] += t - self.since
        self.state, self.run, self.since, self.turn_since = "running", side, t, t
        if self.round_start is None:
            self.round_start = t

    def halt(self, t, state):
        if self.state == "running":
            self.stopped_since = t
        if self.run:
            self.used[self.run] += t - self.since
        self.state, self.run, self.late = state, None, None

    def finish(self, t, reason, lost=None, why=None):
        self.halt(t, "ended")
        if lost:
            self.lost, self.capped, self.forfeited = lost, why == "overtime_limit", True
            self.emit("forfeit", t, player=lost, reason=why)
        self.ended_by = reason
        self.emit("end", t, reason=reason)

    # --- time
    def advance(self, t):
        """Everything the rules make happen by themselves up to `t`."""
        while self.state in ("running", "paused"):
            marks = []  # (instant, what)
            x = self.run
            if x is not None:
                u, limit = self.used_at(x, self.since), self.limit[x]
                first = limit + S
                k = 0
                while first + k * 60 * S <= u:
                    k += 1
                if first + k * 60 * S > u:
                    marks.append((self.since + first + k * 60 * S - u, "step"))
                if self.p["cap_s"] is not None:
                    marks.append((self.since + limit + (self.p["cap_s"] + 1) * S - u, "cap"))
                if self.late == x and self.p["late_forfeit_at_overtime"]:
                    marks.append((self.since + first - u, "absent"))
            if self.late and self.p["late_every_s"]:
                every, away = self.p["late_every_s"] * S, self.since - self.late_since
                marks.append((self.late_since + (away // every + 1) * every, "late"))
                marks.append((self.late_since + self.p["late_forfeit_s"] * S, "absent"))
            if self.p.get("round_s") and self.round_start is not None:
                marks.append((self.round_start + self.p["round_s"] * S, "round"))
            marks = [
                (m, what) for m, what in marks if m > self.since or (what == "round" and m >= self.since)
            ]
            if not marks:
                return
            at = min(m for m, _ in marks)
            if at > t:
                return
            kinds = {what for m, what in marks if m == at}
            if x is not None:
                self.used[x] += at - self.since
            self.since = at
            if kinds & {"cap", "absent"}:
                who = x if "cap" in kinds else self.late
                self.finish(at, "forfeit", who, "overtime_limit" if "cap" in kinds else "absent")
                return
            if "late" in kinds:
                self.late_pen[self.late] = 10 * ((at - self.late_since) // (self.p["late_every_s"] * S))
                self.emit("penalty", at, player=self.late, kind="late")
            if "step" in kinds:
                if self.used[x] == self.limit[x] + S:
                    self.emit("overtime", at, player=x)
                self.emit("penalty", at, player=x, kind="overtime")
            if "round" in kinds:
                self.finish(at, "round_over")
                return

    # --- buttons (docs/rules.md, "The buttons" and the gestures)
    def side_down(self, x, t):
        self.advance(t)
        self.confirm_until = None
        hold = self.stop
        if hold and hold[1] and self.state != "running":
            hold[2] = True
            if t - hold[0] >= 500 * MS:
                self.chord[x] = t
                return
        elif hold:
            self.emit("ignored", t, reason="stop_held")
            return
        if self.state == "ended":
            self.emit("ignored", t, reason="ended")
        elif self.late == x:
            self.arrive(t, x)
        elif self.state in ("ready", "paused"):
            ev = "start" if self.state == "ready" else "resume"
            self.go(other(x), t)
            self.emit(ev, t)
        elif self.run != x:
            self.emit("ignored", t, reason="not_running")
        elif t - self.turn_since < 250 * MS:  # `since` moves at every penalty step; a turn does not
            self.emit("ignored", t, reason="too_soon")
        else:
            self.go(other(x), t)
            self.emit("switch", t)

    def arrive(self, t, x):
        self.halt(t, "paused")
        self.emit("pause", t, arrived=x)

    def side_up(self, x, t):
        self.advance(t)
        if x not in self.chord:
            return
        since = self.chord.pop(x)  # a chord takes effect at its side's first edge, not its release
        if self.state == "ready":
            self.late, self.late_since = other(x), since
            self.round_start = since
            if self.p["absence_runs_clock"]:
                self.go(other(x), since)
            else:
                self.state, self.since = "running", since
            self.emit("late_start", since, player=other(x))
        elif self.state == "paused" or (self.state == "ended" and not self.forfeited):
            self.correct(x, -60 * S if t - since >= S else 60 * S, since)
        elif self.state == "ended":
            self.emit("error", since)  # a forfeit stands: no correction

    def correct(self, x, delta, t):
        shown_before, pen_before = self.limit[x] // S - self.used[x] // S, self.over_pen(x, t)
        self.limit[x] += delta
        self.emit("adjust", t, player=x)
        if shown_before >= 0 > self.limit[x] // S - self.used[x] // S:
            self.emit("overtime", t, player=x)
        if self.over_pen(x, t) != pen_before:
            self.emit("penalty", t, player=x, kind="overtime")
        if self.past_cap(x, t):
            self.finish(t, "forfeit", x, "overtime_limit")
        elif self.state == "ended":
            self.finish(t, self.ended_by)

    def stop_down(self, t):
        self.advance(t)
        if self.confirm_until is not None and t < self.confirm_until and self.state in ("ready", "paused"):
            self.confirm_until = None
            self.stop = [t, True, True]
            self.finish(t, "stop_hold")
            return
        self.confirm_until = None
        if self.state == "running":
            self.stop = [t, False, False]
            if self.late:
                self.arrive(t, self.late)  # the late player arrives and stops the clock
            else:
                self.halt(t, "paused")
                self.emit("pause", t)
        else:
            self.stop = [t, True, False]

    def stop_up(self, t, held):
        self.advance(t)
        began_stopped, used = self.stop[1], self.stop[2]
        self.stop = None
        if not began_stopped or used:
            return
        if held < 2 * S:
            self.emit("ignored", t, reason="ended" if self.state == "ended" else "stopped")
        elif self.state == "ended":
            self.new_game(t)
        else:
            self.confirm_until = t + 5 * S

    def crashed(self, t):
        """After a restart no gesture is half made, and the panels are lit."""
        self.confirm_until = None
        self.last_input = t

    def woke(self, button, down, t):
        """Whether this press (or its release) only woke dark panels (docs/rules.md)."""
        self.advance(t)
        if not down:
            self.last_input = t
            return self.waking.pop(button, False)
        idle = self.state != "running" and t - max(self.last_input, self.stopped_since) >= 1800 * S
        self.last_input = t
        if idle:
            self.waking[button] = True
            self.emit("ignored", t, reason="wake")
        return idle


def tournament(seed, games):
    """A seeded stream of (t_ns, action, args): presses (some bouncing), stops, holds, corrections,
    late starts, long waits into overtime and past the cap, and crashes."""
    rng = random.Random(seed)
    t = 1 * S
    finished = 0
    while finished < games:
        roll = rng.random()
        if roll < 0.55:
            yield t, "press", (rng.choice("AB"), rng.random() < 0.3)
            t += rng.choice([rng.randrange(300, 2000), rng.randrange(2000, 60000)]) * MS
        elif roll < 0.65:
            yield t, "stop", (rng.choice([0.1, 0.1, 2.5]),)
            t += 3 * S
            if rng.random() < 0.5:  # a director's correction while the clock is stopped
                yield t, "chord", (rng.choice("AB"), rng.choice([0.1, 1.2]))
                t += 3 * S
        elif roll < 0.75:
            yield t, "chord", (rng.choice("AB"), rng.choice([0.1, 1.2]))
            t += 3 * S
        elif roll < 0.85:
            yield t, "wait", ()
            t += rng.choice([60, 600, 1800]) * S
        elif roll < 0.9:
            yield t, "crash", ()
            t += rng.randrange(1, 30) * S
        else:
            yield t, "end_and_new", ()
            finished += 1
            t += 9 * S
            if rng.random() < 0.3:  # a late start on the fresh game
                yield t, "chord", (rng.choice("AB"), 0.1)
                t += 3 * S


def edges_for(t, action, args):
    """The raw edges (t_ns, button, down) a person's action makes."""
    if action == "press":
        side, bouncy = args
        if bouncy:
            return [(t, side, True), (t + 2 * MS, side, False), (t + 4 * MS, side, True),
                    (t + 100 * MS, side, False), (t + 103 * MS, side, True), (t + 105 * MS, side, False)]  # fmt: skip  # one gesture's edges together
        return [(t, side, True), (t + 100 * MS, side, False)]
    if action == "stop":
        return [(t, "STOP", True), (t + int(args[0] * S), "STOP", False)]
    if action == "chord":
        side, hold = args
        return [(t, "STOP", True), (t + 600 * MS, side, True), (t + 600 * MS + int(hold * S), side, False),
                (t + 2 * S + 100 * MS, "STOP", False)]  # fmt: skip  # one gesture's edges together
    if action == "end_and_new":  # stop, end (hold, release, confirm), start a new game
        return [(t, "STOP", True), (t + 100 * MS, "STOP", False), (t + S, "STOP", True), (t + 3500 * MS, "STOP", False),
                (t + 4 * S, "STOP", True), (t + 4100 * MS, "STOP", False),
                (t + 5 * S, "STOP", True), (t + 7500 * MS, "STOP", False)]  # fmt: skip  # one gesture's edges together
    return []


def settled(edges, contacts):
    """The presses and releases the clock takes from `edges`: a contact's new level counts once it
    has held 5 ms, dated at the first edge that left the old one; shorter pulses are chatter.
    `contacts` keeps each button's (settled level, raw level, first edge of an undecided change)."""
    out = []
    for i, (t, button, down) in enumerate(edges):
        level, raw, since = contacts.get(button, (False, False, None))
        if down == raw:
            continue
        since = t if since is None else since
        after = next((e[0] for e in edges[i + 1 :] if e[1] == button), None)
        if after is not None and after - t < 5 * MS:
            contacts[button] = (level, down, since)  # not held yet: the change is undecided
            continue
        if down != level:
            out.append((since, button, down))
        contacts[button] = (down, down, None)
    return sorted(out, key=lambda change: change[0])


def feed_model(model, edges, contacts):
    """Give the model the presses and releases in `edges` (see `settled`): a press while the panels
    are dark (30 idle minutes) only wakes them, and so does its release."""
    held = {}
    for t, button, down in settled(edges, contacts):
        if model.woke(button, down, t):
            continue
        if button == "STOP":
            if down:
                held["STOP"] = t
                model.stop_down(t)
            else:
                model.stop_up(t, t - held.pop("STOP"))
        elif down:
            model.side_down(button, t)
        else:
            model.side_up(button, t)


def compare(got, expected, where):
    keys = ("ev", "t_ms", "state", "run", "A", "B", "player", "reason", "kind", "arrived")
    got = [{k: r[k] for k in keys if k in r} for r in got if r["ev"] not in ("boot", "recovered", "status")]
    expected = [{k: r[k] for k in keys if k in r} for r in expected]
    # compared pairwise first so a mismatch names the record; the count is checked after
    for index, (g, e) in enumerate(zip(got, expected, strict=False)):
        for key in e:
            assert g.get(key) == e[key], (
                f"{where}: record {index} ({g['ev']}), {key}: clock {g.get(key)} model {e[key]}"
            )
    assert len(got) == len(expected), f"{where}: clock made {len(got)} records, the model {len(expected)}"


def play(seed, games, rules):
    config = Config(rules=rules)
    time, journal = VirtualTime(), Journal()
    sim = Simulator(config, refresh_on_ticks=False, time=time, journal=journal, boot_id="soak")
    model = Model(rules)
    model.new_game(0)
    model.out = []  # the clock's own new_game came with its boot
    checked = sim.journal.next_seq
    crashes = 0
    contacts = {}
    for t, action, args in tournament(seed, games):
        where = f"seed {seed}, {rules}, at {t / S:.3f} s, {action} {args}"
        if action == "crash":
            sim.run_to(t)
            time.set(t)
            model.advance(t)
            model.crashed(t)
            sim = Simulator(config, refresh_on_ticks=False, time=time, journal=journal, boot_id="soak")
            contacts = {}
            crashes += 1
        else:
            edges = edges_for(t, action, args)
            for edge in edges:
                sim.set_button(edge[1], edge[2], edge[0])
            if edges:
                sim.run_to(edges[-1][0] + 5 * MS + 1)  # the last change counts once held 5 ms
            feed_model(model, edges, contacts)
        got = journal.records(checked)
        checked = journal.next_seq
        if action == "wait":
            continue  # checked with what follows
        expected, model.out = model.out, []
        compare(got, expected, where)
    return crashes


@pytest.mark.parametrize("rules", sorted(PROFILES))
def test_a_seeded_tournament_matches_the_reference_model_record_by_record(rules):
    full = os.environ.get("TILECLOCK_SOAK") == "full"
    seeds = range(20) if full else range(2)  # make test: 20 games a profile, the full soak 800
    games = 40 if full else 10
    crashes = sum(play(seed, games, rules) for seed in seeds)
    assert crashes > 0
