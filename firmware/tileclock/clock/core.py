"""The clock itself: raw button edges in, records out, in exact integer time.

`GameClock` is pure: it never reads a clock, sleeps or touches hardware. Every
input carries its own timestamp (nanoseconds of one monotonic clock), every
query names the instant it asks about, and `next_deadline()` tells the caller
when something will next change without any input, so the caller can sleep
until then. Time is charged only at transitions, from edge to edge; nothing is
accumulated tick by tick.

Button gestures (see docs/rules.md for the full table):

- A side's press ends that side's turn and runs the other side; from a fresh
  game or a stopped clock it runs the other side.
- STOP stops a running clock at once.
- With the clock already stopped, holding STOP for `end_hold` and releasing it
  ends the game; the same on an ended game starts a new one.
- With the clock stopped mid-game, hold STOP and tap a side (under
  `correction_hold`) to give that side a minute; hold the side longer to take
  a minute off it.
- On a fresh game, hold STOP and press the present side's button to run the
  absent side's clock as a late start.
"""

from dataclasses import dataclass

from .debounce import Debouncer
from .records import BUTTONS, SIDES, Record, SideState
from .timecode import NS_PER_MS, NS_PER_S, format_clock, ms

READY, RUNNING, PAUSED, ENDED = "ready", "running", "paused", "ended"
STOP = "STOP"
#: Records that start or stop a clock carry `at_ns`, their exact instant, so a restart can rebuild
#: the game to the nanosecond from the journal.
TRANSITIONS = ("new_game", "start", "switch", "resume", "pause", "late_start", "forfeit", "end", "recovered")


def other(side):
    """The opponent of `side`."""
    return "B" if side == "A" else "A"


@dataclass(frozen=True)
class ButtonTiming:
    """How presses are told apart: settings of the clock, not of a rulebook."""

    #: Edges closer together than this are contact bounce.
    bounce_ms: int = 20
    #: A side's press ends its turn only once its clock has run this long (collisions).
    min_turn_ms: int = 250
    #: Hold STOP this long on a stopped clock, then release, to end (or start) a game.
    end_hold_ms: int = 2000
    #: In a correction, a side held at least this long takes time off instead of adding it.
    correction_hold_ms: int = 1000
    #: The size of one correction.
    correction_ms: int = 60_000
    #: A button held down longer than this is stuck: a fault, and its release does nothing.
    stuck_ms: int = 10_000


@dataclass(frozen=True)
class SideView:
    """One side as a screen shows it."""

    used_ms: int
    shown: str
    pen: int
    overtime: bool
    late: bool
    lost: bool


@dataclass(frozen=True)
class View:
    """Everything a screen needs, at one instant."""

    state: str
    run: str | None
    A: SideView
    B: SideView
    #: What a held STOP will do on release ("release: end game").
    hint: str | None = None
    #: The last correction, shown while the clock stays stopped ("A +1:00").
    notice: str | None = None
    #: Faults and other alerts the daemon adds (the core knows no hardware).
    alerts: tuple = ()

    def side(self, name):
        return self.A if name == "A" else self.B


@dataclass
class _StopHold:
    since_ns: int
    began_stopped: bool  # a STOP that stopped a running clock never makes a gesture
    used: bool = False  # a chord was made during this hold


def _last_game(records):
    """The last game's records (from its `new_game`), and the boot id its monotonic origin belongs to."""
    game, boot_id, origin_boot = None, None, None
    for record in records:
        if record["ev"] == "boot":
            boot_id = record.get("boot_id")
        elif record["ev"] == "new_game":
            game = [record]
            origin_boot = boot_id
        elif game is not None:
            game.append(record)
            if "mono_ns" in record:
                origin_boot = boot_id
    return game, origin_boot


class ClockError(Exception):
    """A call the clock cannot take (a programming error, never a player's)."""


class GameClock:
    """The tournament clock for one board: every rule of `rules`, buttons per `timing`."""

    def __init__(self, rules, timing=ButtonTiming(), times_s=None, first_seq=0, checkpoint_ms=None):
        self.rules = rules
        self.timing = timing
        #: while a side runs, a `checkpoint` record this often bounds what a power cut can lose
        self.checkpoint_ms = checkpoint_ms
        self._down_since = {}  # button -> when its debounced press began
        self.stuck = set()
        times_s = times_s or {}
        self.start_ns = {side: times_s.get(side, rules.time_s) * NS_PER_S for side in SIDES}
        self._seq = first_seq
        self._buttons = {name: Debouncer(timing.bounce_ms * NS_PER_MS) for name in BUTTONS}
        self._out = []
        self.now_ns = None
        self.state = None

    # ----------------------------------------------------------------- inputs

    def new_game(self, t_ns, boot=None):
        """Start a fresh game at `t_ns` (at power-on; later games by the STOP gesture).

        `boot`, at power-on, is what a `boot` record before the game says of the
        clock (board, firmware, ...).
        """
        if self.now_ns is not None:
            self.advance(t_ns)
            t_ns = max(t_ns, self.now_ns)
        self.now_ns = t_ns
        self._start_game(t_ns, boot)
        return self._flush()

    def recover(self, records, now_ns, boot):
        """Rebuild the journal's last game from its `records` (dicts, oldest first) and go on at `now_ns`.

        `boot` is this start's boot record (with `boot_id`, the kernel's id of this boot). If the
        game's monotonic origin is from this boot, the process was restarted and the monotonic
        clock kept running: the game goes on exactly, the running side charged for the time the
        process was down, and whatever fell due meanwhile is recorded at its own instant. After a
        power cut the game comes back stopped as of its last record; the running side's time since
        that record is unknown, at most one checkpoint interval. Either way a `recovered` record
        says what happened. With no game in `records`, a new game starts.
        """
        game, origin_boot = _last_game(records)
        if game is None:
            return self.new_game(now_ns, boot)
        self._seq = max(self._seq, records[-1]["seq"] + 1)
        last = game[-1]
        last_at = last.get("at_ns", last["t_ms"] * NS_PER_MS)
        same_boot = origin_boot is not None and origin_boot == boot.get("boot_id")
        origin = [r for r in game if "mono_ns" in r][-1]["mono_ns"] if same_boot else now_ns - last_at
        self._rebuild(game, origin)
        was_running = self.run
        if same_boot:
            checkpoint_ms, self.checkpoint_ms = self.checkpoint_ms, None  # none for time nobody was there
            self._advance(max(now_ns, self.now_ns))  # penalties and forfeits that fell due while down
            self.checkpoint_ms = checkpoint_ms
            extra = {"reason": "restart", "down_ms": ms(now_ns - (origin + last_at))}
        else:
            if self.state == RUNNING:
                self._stop(self.now_ns, PAUSED)
            self.now_ns = now_ns
            extra = {"reason": "power_cut", "uncertain_ms": self.checkpoint_ms if was_running else 0}
        self._emit("boot", self.now_ns, **boot)
        self._notice = "RECOVERED" + (
            f" +-{self.checkpoint_ms // 1000}s" if extra.get("uncertain_ms") else ""
        )
        self._emit("recovered", self.now_ns, was_running=was_running, mono_ns=self.t0_ns, **extra)
        return self._flush()

    def _rebuild(self, game, origin):
        """Replay a game's records onto a fresh state whose monotonic origin is `origin`."""
        first = game[0]
        self.now_ns = origin
        self._reset_game(origin)
        self.allowance_ns = {side: first["time_ms"][side] * NS_PER_MS for side in SIDES}
        for record in game[1:]:
            t = origin + record.get("at_ns", record["t_ms"] * NS_PER_MS)
            self.now_ns = self._last_t_ns = t
            ev = record["ev"]
            if ev in ("start", "resume", "switch", "late_start"):
                if ev == "switch":
                    self.turns[record["button"]] += 1
                self.late = record["player"] if ev == "late_start" else None
                self._run(record["run"], t)
            elif ev == "pause" or (ev == "recovered" and record["state"] == PAUSED and self.state == RUNNING):
                self.late = None
                self._stop(t, PAUSED)
            elif ev == "adjust":
                self.allowance_ns[record["player"]] += record["delta_ms"] * NS_PER_MS
                self.corrections.append(
                    {k: record[k] for k in ("player", "delta_ms")} | {"t_ms": record["t_ms"]}
                )
            elif ev == "penalty" and record.get("kind") == "late":
                self.late_pen[record["player"]] = self.rules.late_penalty(self.used_ns(record["player"], t))
            elif ev == "forfeit":
                self.lost, self.lost_reason = record["player"], record["reason"]
                self._stop(t, ENDED)
            elif ev == "end":
                self._stop(t, ENDED)

    def edge(self, button, down, t_ns):
        """One raw contact edge of `button` (`A`, `B`, `STOP`): `down` for contact made.

        An edge stamped before an instant the clock has already processed is
        taken at that instant: the clock never goes back in time.
        """
        t_ns = self._catch_up(t_ns)
        change = self._buttons[button].edge(down, t_ns)
        if change:
            self._transition(button, *change)
        return self._flush()

    def advance(self, t_ns):
        """Run the clock on to `t_ns`: overtime, penalty steps and forfeits, each at its instant."""
        self._catch_up(t_ns)
        return self._flush()

    def status(self, t_ns):
        """Advance to `t_ns` and report the state as a `status` record."""
        self._catch_up(t_ns)
        self._emit("status", self.now_ns)
        return self._flush()

    def adjust(self, t_ns, side, delta_ms, source="serial"):
        """A director's correction from outside the buttons: allowed only while the clock is stopped mid-game."""
        self._catch_up(t_ns)
        if self.state != PAUSED:
            self._emit(
                "error", self.now_ns, detail=f"adjust only while the clock is stopped mid-game ({self.state})"
            )
        else:
            self._correct(side, delta_ms * NS_PER_MS, self.now_ns, source)
        return self._flush()

    def error(self, t_ns, detail, line=None):
        """Answer a bad input (a malformed command, noise on the line) with an `error` record."""
        self._catch_up(t_ns)
        extra = {"detail": detail}
        if line is not None:
            extra["line"] = line
        self._emit("error", self.now_ns, **extra)
        return self._flush()

    def fault(self, t_ns, part, detail):
        """Record that `part` (`panel A`, `serial`, ...) stopped working; the clock keeps time regardless."""
        self._catch_up(t_ns)
        self._emit("fault", self.now_ns, part=part, detail=detail)
        return self._flush()

    def fault_cleared(self, t_ns, part):
        """Record that `part` works again."""
        self._catch_up(t_ns)
        self._emit("fault_cleared", self.now_ns, part=part)
        return self._flush()

    # ---------------------------------------------------------------- queries

    def used_ns(self, side, t_ns):
        """Time charged to `side` as of `t_ns`."""
        running = self.run == side and t_ns > self.run_since_ns
        return self.used[side] + (t_ns - self.run_since_ns if running else 0)

    def stopped_ns(self, t_ns):
        """Time in this game when no side ran, as of `t_ns`."""
        if self.state == RUNNING:
            return self.stopped_total_ns
        return self.stopped_total_ns + max(0, t_ns - self.stopped_since_ns)

    def display_seconds(self, side, t_ns):
        """The signed whole seconds the display shows: limit minus whole seconds used."""
        return self.allowance_ns[side] // NS_PER_S - self.used_ns(side, t_ns) // NS_PER_S

    def penalty(self, side, t_ns):
        """Points the clock deducts from `side` as of `t_ns`."""
        if self.lost == side and self.lost_reason == "overtime_limit":
            return self.rules.cap_deduction
        over_s = -self.display_seconds(side, t_ns)
        return self.rules.overtime_penalty(over_s) + self.late_pen[side]

    def view(self, t_ns):
        """What the screens show at `t_ns` (call `advance` first for events up to then)."""
        sides = {}
        for side in SIDES:
            shown = self.display_seconds(side, t_ns)
            sides[side] = SideView(
                used_ms=ms(self.used_ns(side, t_ns)),
                shown=format_clock(shown),
                pen=self.penalty(side, t_ns),
                overtime=shown < 0,
                late=self.late == side,
                lost=self.lost == side,
            )
        alerts = tuple(f"BUTTON {b} STUCK" for b in sorted(self.stuck))
        return View(self.state, self.run, sides["A"], sides["B"], self._hint(t_ns), self._notice, alerts)

    def next_deadline(self):
        """The next instant anything changes without an input: a record, a displayed digit, a hint."""
        candidates = [self._next_display_change(), self._next_hint_change()]
        due = self._due()
        if due:
            candidates.append(due[0])
        candidates = [c for c in candidates if c is not None]
        return min(candidates) if candidates else None

    # ------------------------------------------------------------- game state

    def _require_game(self):
        if self.state is None:
            raise ClockError("no game yet: call new_game first")

    def _catch_up(self, t_ns):
        """Before anything happens at `t_ns`: fire what fell due up to then; returns the instant used
        (never earlier than one already processed)."""
        self._require_game()
        t_ns = max(t_ns, self.now_ns)
        self._advance(t_ns)
        return t_ns

    def _start_game(self, t_ns, boot=None):
        self._reset_game(t_ns)
        if boot is not None:
            self._emit("boot", t_ns, **boot)
        self._emit(
            "new_game",
            t_ns,
            rules=self.rules.name,
            time_ms={side: ms(self.start_ns[side]) for side in SIDES},
            mono_ns=t_ns,
        )

    def _reset_game(self, t_ns):
        self.t0_ns = t_ns
        self.state = READY
        self.run = None
        self.run_since_ns = t_ns
        self.used = {side: 0 for side in SIDES}
        self.allowance_ns = dict(self.start_ns)
        self.stopped_total_ns = 0
        self.stopped_since_ns = t_ns
        self.late = None
        self.late_pen = {side: 0 for side in SIDES}
        self.lost = None
        self.lost_reason = None
        self._stop_hold = None
        self._chord = {}
        self._notice = None
        self.corrections = []
        self.turns = {side: 0 for side in SIDES}
        self._last_t_ns = t_ns

    def _run(self, side, t_ns):
        if self.state != RUNNING:
            self.stopped_total_ns += t_ns - self.stopped_since_ns
        elif self.run is not None:
            self.used[self.run] += t_ns - self.run_since_ns
        self.state = RUNNING
        self.run = side
        self.run_since_ns = t_ns
        self._notice = None

    def _stop(self, t_ns, state):
        if self.state == RUNNING:
            self.used[self.run] += t_ns - self.run_since_ns
            self.stopped_since_ns = t_ns
        self.state = state
        self.run = None

    # ---------------------------------------------------------------- buttons

    def _transition(self, button, down, t_ns):
        if down:
            self._down_since[button] = t_ns
        else:
            self._down_since.pop(button, None)
            if button in self.stuck:
                self.stuck.discard(button)
                self._emit("fault_cleared", t_ns, part=f"button {button}")
                if button == STOP:
                    self._stop_hold = None
                self._chord.pop(button, None)
                return  # a stuck button's release is not a gesture
        if button == STOP:
            (self._stop_down if down else self._stop_up)(t_ns)
        else:
            (self._side_down if down else self._side_up)(button, t_ns)

    def _stop_down(self, t_ns):
        if self.state == RUNNING:
            arrived = self.late
            self.late = None
            self._stop(t_ns, PAUSED)
            self._emit("pause", t_ns, button=STOP, **({"arrived": arrived} if arrived else {}))
            self._stop_hold = _StopHold(t_ns, began_stopped=False)
        else:
            self._stop_hold = _StopHold(t_ns, began_stopped=True)

    def _stop_up(self, t_ns):
        hold, self._stop_hold = self._stop_hold, None
        if hold is None or not hold.began_stopped or hold.used:
            return
        if t_ns - hold.since_ns < self.timing.end_hold_ms * NS_PER_MS:
            self._ignore(STOP, t_ns, "stopped" if self.state != ENDED else "ended")
        elif self.state == ENDED:
            self._start_game(t_ns)
        else:
            self._stop(t_ns, ENDED)
            self._emit("end", t_ns, reason="stop_hold", summary=self._summary(t_ns))

    def _side_down(self, side, t_ns):
        hold = self._stop_hold
        if hold and hold.began_stopped and self.state in (READY, PAUSED):
            hold.used = True
            if self.state == READY:
                self.late = other(side)
                self._run(self.late, t_ns)
                self._emit("late_start", t_ns, button=side, player=self.late)
            else:
                self._chord[side] = t_ns
            return
        if hold:
            self._ignore(side, t_ns, "stop_held")
        elif self.state == ENDED:
            self._ignore(side, t_ns, "ended")
        elif self.state in (READY, PAUSED):
            event = "start" if self.state == READY else "resume"
            self._run(other(side), t_ns)
            self._emit(event, t_ns, button=side)
        elif self.run != side:
            self._ignore(side, t_ns, "not_running")
        elif t_ns - self.run_since_ns < self.timing.min_turn_ms * NS_PER_MS:
            self._ignore(side, t_ns, "too_soon")
        else:
            arrived = self.late
            self.late = None
            self.turns[side] += 1
            self._run(other(side), t_ns)
            self._emit("switch", t_ns, button=side, **({"arrived": arrived} if arrived else {}))

    def _side_up(self, side, t_ns):
        since = self._chord.pop(side, None)
        if since is None or self.state != PAUSED:
            return
        held = t_ns - since >= self.timing.correction_hold_ms * NS_PER_MS
        delta_ns = (-1 if held else 1) * self.timing.correction_ms * NS_PER_MS
        self._correct(side, delta_ns, t_ns, "buttons")

    def _correct(self, side, delta_ns, t_ns, source):
        self.allowance_ns[side] += delta_ns
        self.corrections.append({"player": side, "delta_ms": ms(delta_ns), "t_ms": ms(t_ns - self.t0_ns)})
        sign = "-" if delta_ns < 0 else "+"
        self._notice = f"{side} {sign}{format_clock(abs(delta_ns) // NS_PER_S)}"
        self._emit("adjust", t_ns, player=side, delta_ms=ms(delta_ns), source=source)

    def _summary(self, t_ns):
        """The game's result as the `end` record carries it."""
        summary = {}
        for side in SIDES:
            shown = self.display_seconds(side, t_ns)
            summary[side] = {
                "used_ms": ms(self.used_ns(side, t_ns)),
                "shown": format_clock(shown),
                "overtime_s": max(0, -shown),
                "pen": self.penalty(side, t_ns),
                "lost_on_time": self.lost == side,
                "turns": self.turns[side],
            }
        summary["stopped_ms"] = ms(self.stopped_ns(t_ns))
        summary["corrections"] = list(self.corrections)
        return summary

    def _ignore(self, button, t_ns, reason):
        self._emit("ignored", t_ns, button=button, reason=reason)

    def _hint(self, t_ns):
        hold = self._stop_hold
        if not hold or not hold.began_stopped or hold.used:
            return None
        if t_ns - hold.since_ns < self.timing.end_hold_ms * NS_PER_MS:
            return None
        return "release: new game" if self.state == ENDED else "release: end game"

    def _next_hint_change(self):
        hold = self._stop_hold
        if not hold or not hold.began_stopped or hold.used:
            return None
        at = hold.since_ns + self.timing.end_hold_ms * NS_PER_MS
        return at if at > self.now_ns else None

    # ---------------------------------------------------- time-driven events

    def _advance(self, t_ns):
        """Fire, in time order, every time-driven event up to and including `t_ns`."""
        while True:
            due = self._due()
            if due is None or due[0] > t_ns:
                break
            at, kind, what = due
            self.now_ns = at
            if kind == "event":
                self._fire(at, *what)
            elif kind == "settle":
                change = self._buttons[what].settle(at)
                if change:
                    down, since = change
                    self._transition(what, down, max(since, self._last_t_ns))
            elif kind == "stuck":
                self.stuck.add(what)
                self._emit(
                    "fault",
                    at,
                    part=f"button {what}",
                    detail=f"held down for over {self.timing.stuck_ms // 1000} s",
                )
            else:
                self._emit("checkpoint", at)
        self.now_ns = t_ns

    def _due(self):
        """(t_ns, kind, what) of the earliest time-driven thing, or None; rule events first on a tie."""
        candidates = []
        event = self._next_event()
        if event:
            candidates.append((event[0], 0, "event", event[1:]))
        for name, debouncer in self._buttons.items():
            if debouncer.deadline() is not None:
                candidates.append((debouncer.deadline(), 1, "settle", name))
        for name, since in self._down_since.items():
            if name not in self.stuck:
                candidates.append((since + self.timing.stuck_ms * NS_PER_MS, 2, "stuck", name))
        checkpoint = self._next_checkpoint()
        if checkpoint is not None:
            candidates.append((checkpoint, 3, "checkpoint", None))
        if not candidates:
            return None
        at, _, kind, what = min(candidates, key=lambda c: (c[0], c[1]))
        return at, kind, what

    def _next_checkpoint(self):
        if self.checkpoint_ms is None or self.state != RUNNING:
            return None
        return self._last_t_ns + self.checkpoint_ms * NS_PER_MS

    def _thresholds(self, side):
        """(used_ns, kind) instants of the running side at which a record is due."""
        rules = self.rules
        allowance = self.allowance_ns[side]
        first_over = allowance + NS_PER_S  # the display first reads -0:01
        step = rules.overtime_step_s * NS_PER_S
        used = self.used_ns(side, self.now_ns)
        if used < first_over:
            yield first_over, "overtime"
            if self.late == side and rules.late_forfeit_at_overtime:
                yield first_over, "absent"
        else:
            yield first_over + ((used - first_over) // step + 1) * step, "penalty"
        if rules.overtime_cap_s is not None:
            yield allowance + (rules.overtime_cap_s + 1) * NS_PER_S, "overtime_limit"
        if self.late == side and rules.late_interval_s:
            interval = rules.late_interval_s * NS_PER_S
            yield (used // interval + 1) * interval, "late_penalty"
        if self.late == side and rules.late_forfeit_after_s is not None:
            yield rules.late_forfeit_after_s * NS_PER_S, "absent"

    def _next_event(self):
        """(t_ns, side, kinds) of the next time-driven record, or None."""
        if self.state != RUNNING:
            return None
        side = self.run
        used = self.used_ns(side, self.now_ns)
        due = [(at, kind) for at, kind in self._thresholds(side) if at > used]
        if not due:
            return None
        first = min(at for at, _ in due)
        kinds = {kind for at, kind in due if at == first}
        return self.now_ns + (first - used), side, kinds

    def _next_display_change(self):
        if self.state != RUNNING:
            return None
        used = self.used_ns(self.run, self.now_ns)
        return self.now_ns + (used // NS_PER_S + 1) * NS_PER_S - used

    def _fire(self, t_ns, side, kinds):
        forfeit = kinds & {"overtime_limit", "absent"}
        if forfeit:
            reason = "overtime_limit" if "overtime_limit" in forfeit else "absent"
            self.lost = side
            self.lost_reason = reason
            self._stop(t_ns, ENDED)
            self._emit("forfeit", t_ns, player=side, reason=reason)
            self._emit("end", t_ns, reason="forfeit", summary=self._summary(t_ns))
            return
        if "late_penalty" in kinds:
            self.late_pen[side] = self.rules.late_penalty(self.used_ns(side, t_ns))
            self._emit("penalty", t_ns, player=side, kind="late")
        if "overtime" in kinds:
            self._emit("overtime", t_ns, player=side)
        if kinds & {"overtime", "penalty"}:
            self._emit("penalty", t_ns, player=side, kind="overtime")

    # ---------------------------------------------------------------- records

    def _emit(self, ev, t_ns, **extra):
        if ev in TRANSITIONS:
            extra["at_ns"] = t_ns - self.t0_ns
        sides = {}
        for side in SIDES:
            sides[side] = SideState(
                used_ms=ms(self.used_ns(side, t_ns)),
                shown=format_clock(self.display_seconds(side, t_ns)),
                pen=self.penalty(side, t_ns),
            )
        self._out.append(
            Record(self._seq, ev, ms(t_ns - self.t0_ns), self.state, self.run, sides["A"], sides["B"], extra)
        )
        self._seq += 1
        self._last_t_ns = t_ns

    def _flush(self):
        out, self._out = self._out, []
        return out
