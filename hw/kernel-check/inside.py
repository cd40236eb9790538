"""The kernel check's VM side: the gpiod backend and `tileclock run` against the kernel's gpio-sim.

Run by the initramfs's /init (hw/kernel-check/run.sh boots it), as root, on a kernel with configfs
and gpio-sim loaded. It makes a gpio-sim chip, then checks, printing each figure:

1. the backend lets go of its lines and takes them again 50 rounds in one process (the pin
   factory under the buttons, exactly as `tileclock run` builds it), each change made while its
   edge reader sits in poll() on the request's descriptor: not one EBUSY;
2. the real `tileclock run` (buttons.backend = "gpiod", its records on a pty) holds the three
   lines with pull-ups and both edges, under the consumer "tileclock";
3. its edge thread's wake-ups while idle, from /proc: 0;
4. presses driven through gpio-sim's sysfs pulls: each record's `at_ns` (the kernel's edge
   timestamp) against the time the pull was written;
5. contact-bounce bursts: one press each, stamped inside its burst (a burst the VM stalled in,
   its edges as far apart as the glitch window, is done again);
6. the service stopped and started again: each start holds the lines and takes a press;
7. a line held by another process: `tileclock doctor` names it (from the line's consumer).

Exits 0 only when every check passed; prints FAIL lines otherwise.
"""

import ctypes
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import types

import gpiod

CLONE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = "/sys/kernel/config/gpio-sim/kc"
PINS = {"A": 17, "STOP": 27, "B": 22}
ROUNDS = 50
RESTARTS = 3
BURSTS = 3
# buttons.min_press_ms, the default: a level held this long is a press or a release (CLOCK_RULES
# §9), so only edges closer than this are one contact's chatter
GLITCH_NS = 5_000_000
IDLE_S = 5
HOLDER = "kc-holder"  # the other process's consumer label and name
failures = []
passes = []


def check(ok, what):
    print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
    (passes if ok else failures).append(what)
    return ok


def write(path, text):
    with open(path, "w") as file:
        file.write(text)


def read(path):
    with open(path) as file:
        return file.read().strip()


class Sim:
    """A gpio-sim chip of 32 lines, made through configfs; `pull` drives a line as a button would."""

    def __init__(self):
        os.mkdir(SIM)
        os.mkdir(f"{SIM}/bank0")
        write(f"{SIM}/bank0/num_lines", "32")
        write(f"{SIM}/live", "1")
        self.chip = "/dev/" + read(f"{SIM}/bank0/chip_name")
        self.sysfs = f"/sys/devices/platform/{read(f'{SIM}/dev_name')}/{read(f'{SIM}/bank0/chip_name')}"

        self._pulls = {}  # offset -> the open pull attribute

    def pull(self, offset, level):
        """Write the line's pull (down: the button closes it to ground); the times around the write."""
        if offset not in self._pulls:  # kept open: an open() per edge stretched a burst under TCG
            self._pulls[offset] = os.open(f"{self.sysfs}/sim_gpio{offset}/pull", os.O_WRONLY)
        before = time.monotonic_ns()
        os.pwrite(self._pulls[offset], b"pull-up" if level else b"pull-down", 0)
        return before, time.monotonic_ns()


def reader_in_poll(tid):
    """Whether thread `tid` of this process sleeps in poll (x86_64: poll 7, ppoll 271)."""
    with (
        open(f"/proc/self/task/{tid}/stat") as stat,
        open(f"/proc/self/task/{tid}/syscall") as syscall,
    ):
        return stat.read().rsplit(")", 1)[1].split()[0] == "S" and syscall.read().split()[0] in ("7", "271")


def until(condition, what, within_s=30):
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {within_s} s")
        time.sleep(0.002)


def rerequest_rounds(sim):
    """ROUNDS rounds of the pin factory and buttons as the service builds them, each line change made
    under a reader blocked in poll(): (requests made, EBUSY refusals, rounds whose press went astray)."""
    from tileclock.device.hardware.buttons import ButtonBoard
    from tileclock.device.hardware.gpiod_pins import GpiodFactory

    requests = refused = astray = 0
    real = gpiod.request_lines

    def counted(*args, **kwargs):
        nonlocal requests, refused
        requests += 1
        try:
            return real(*args, **kwargs)
        except OSError as error:
            refused += error.errno == 16
            raise

    names = ("line", "LineSettings", "EdgeEvent", "Chip")
    shim = types.SimpleNamespace(request_lines=counted, **{name: getattr(gpiod, name) for name in names})
    for round_ in range(ROUNDS):
        edges = queue.Queue()
        try:
            factory = GpiodFactory(chip=sim.chip, gpiod=shim, revision=0xA02082)
            board = ButtonBoard(PINS, lambda *edge, edges=edges: edges.put(edge), pin_factory=factory)
        except OSError as error:
            print(f"  round {round_}: {error}", flush=True)
            continue
        tid = factory._reader.native_id
        until(lambda tid=tid: reader_in_poll(tid), "the edge reader back in poll()")
        board.buttons["STOP"].close()  # A and B requested again, the reader in poll() on the old fd
        until(lambda tid=tid: reader_in_poll(tid), "the edge reader back in poll()")
        sim.pull(17, 0)
        got = edges.get(timeout=10)
        sim.pull(17, 1)
        edges.get(timeout=10)
        until(lambda tid=tid: reader_in_poll(tid), "the edge reader back in poll()")
        board.close()
        if got[:2] != ("A", True):
            print(f"  round {round_}: edge {got}", flush=True)
            astray += 1
    return requests, refused, astray


class Service:
    """`tileclock run` on the gpio-sim lines, its record line a pty read by a thread."""

    def __init__(self, config):
        self.records = queue.Queue()
        self.t0_ns = None
        master, slave = os.openpty()
        self.master = master
        self.tty = os.ttyname(slave)
        with open(config, "w") as file:
            file.write(
                f'[clock]\nboard = "kc"\n[buttons]\nbackend = "gpiod"\n[serial]\nport = "{self.tty}"\n'
            )
        self.config = config
        self.slave = slave
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        pending = b""
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("ev") == "new_game":
                    self.t0_ns = record["mono_ns"]  # a record's at_ns counts from the game's start
                self.records.put(record)

    def start(self, state):
        began = time.monotonic()
        self.log = f"{state}.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tileclock", "run", "--config", self.config, "--state-dir", state],
                stderr=log,
            )
        boot = self.next("boot", within_s=120)
        return boot, time.monotonic() - began

    def said(self):
        with open(self.log) as log:
            return log.read()

    def next(self, event=None, within_s=10):
        deadline = time.monotonic() + within_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None and self.records.empty():
                print(self.said()[-3000:], flush=True)
                raise AssertionError(
                    f"no {event or 'record'} from tileclock run (exit {self.process.poll()})"
                )
            try:
                record = self.records.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if event is None or record.get("ev") == event:
                return record

    def presses(self, quiet_s=3.0):
        """Every record of a button's press, until none comes for `quiet_s`."""
        found = []
        while True:
            try:
                record = self.records.get(timeout=quiet_s)
            except queue.Empty:
                return found
            if "button" in record:
                found.append(record)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60), self.said()

    def edge_thread(self, within_s=10):
        """The service's edge reader (it names itself gpiod-edges as it starts), by its id."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            for tid in os.listdir(f"/proc/{self.process.pid}/task"):
                if read(f"/proc/{self.process.pid}/task/{tid}/comm") == "gpiod-edges":
                    return tid
            time.sleep(0.05)
        return None

    def wakeups(self, tid):
        status = read(f"/proc/{self.process.pid}/task/{tid}/status")
        fields = dict(line.split(":", 1) for line in status.splitlines())
        return int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])


def lines_held(sim, consumer):
    with gpiod.Chip(sim.chip) as chip:
        infos = [chip.get_line_info(offset) for offset in PINS.values()]
    return all(
        info.used
        and info.consumer == consumer
        and info.direction == gpiod.line.Direction.INPUT
        and info.bias == gpiod.line.Bias.PULL_UP
        and info.edge_detection == gpiod.line.Edge.BOTH
        for info in infos
    )


def press(sim, offset, hold_s=0.12):
    """Close and open a button; the closing write's window."""
    window = sim.pull(offset, 0)
    time.sleep(hold_s)
    sim.pull(offset, 1)
    time.sleep(0.4)  # past min_turn_ms: the next press is a turn of its own
    return window


def burst(sim, offset, hold_s=0.12):
    """A press whose contact bounces: 3 closings with 2 openings between, held, then 2 openings with a
    closing between. (The closings' window, each write's times, and whether each edge came within
    the glitch window of the one before: a VM stalled longer between two writes makes a real
    release or press of them, as the rule says, not chatter.)"""
    # real-time while writing (below the kernel's irq threads), so the service's threads, busy
    # with each edge, do not get between two writes of one burst
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    try:
        closing = [sim.pull(offset, level) for level in (0, 1, 0, 1, 0)]
        time.sleep(hold_s)
        opening = [sim.pull(offset, level) for level in (1, 0, 1)]
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    time.sleep(0.4)
    tight = all(
        later[1] - earlier[0] < GLITCH_NS
        for group in (closing, opening)
        for earlier, later in zip(group, group[1:], strict=False)
    )
    return (closing[0][0], closing[-1][1]), tight, closing + opening


def main():
    began = time.monotonic()
    print(
        f"kernel check: Linux {os.uname().release}, Python {sys.version.split()[0]}",
        flush=True,
    )
    sim = Sim()
    print(f"gpio-sim chip {sim.chip} ({sim.sysfs})", flush=True)

    print(
        f"1. {ROUNDS} rounds of the buttons let go and taken again under a reader in poll():",
        flush=True,
    )
    requests, refused, astray = rerequest_rounds(sim)
    check(
        refused == 0 and astray == 0 and requests == ROUNDS * 5,
        f"{requests} line requests ({ROUNDS * 4} of them re-requests), {refused} refused (EBUSY), "
        f"{ROUNDS - astray} of {ROUNDS} presses through",
    )

    state = "/run/kc/state"
    service = Service("/run/kc/config.toml")
    print("2. tileclock run with buttons.backend = gpiod:", flush=True)
    boot, took = service.start(state)
    check(
        boot["ev"] == "boot",
        f"booted in {took:.1f} s (the boot record came on the serial line)",
    )
    check(
        lines_held(sim, "tileclock"),
        "lines 17, 27, 22 held by 'tileclock': input, pull-up, both edges",
    )
    tid = service.edge_thread()
    check(tid is not None, f"its edge thread gpiod-edges is thread {tid}")

    print(f"3. idle wake-ups of the edge thread over {IDLE_S} s (from /proc):", flush=True)
    before = service.wakeups(tid)
    time.sleep(IDLE_S)
    idle = service.wakeups(tid) - before
    check(idle == 0, f"{idle} wake-ups while idle")

    print(
        "4. presses through gpio-sim's pulls, kernel stamps against the writes:",
        flush=True,
    )
    before = service.wakeups(tid)
    order = ["B", "A"] * 5 + ["STOP"]
    windows = [press(sim, PINS[name]) for name in order]
    got = service.presses()
    woke = service.wakeups(tid) - before
    matched, errors = 0, []
    for name, (first, last), record in zip(order, windows, got, strict=False):
        stamp = service.t0_ns + record["at_ns"]  # the kernel's timestamp of the press's edge
        error_us = (stamp - first) / 1000
        errors.append(error_us)
        inside = record["button"] == name and first <= stamp <= last
        matched += inside
        print(
            f"     {record['ev']:<8} {name:<4} stamp - write = {error_us:8.1f} us "
            f"(the write took {(last - first) / 1000:.1f} us){'' if inside else '  <- out'}",
            flush=True,
        )
    check(
        len(got) == len(order) and matched == len(order),
        f"{matched} of {len(order)} presses matched",
    )
    if errors:
        print(
            f"     stamp errors: min {min(errors):.1f} us, max {max(errors):.1f} us",
            flush=True,
        )
    print(f"     edge thread wake-ups for {2 * len(order)} edges: {woke}", flush=True)

    print("5. contact-bounce bursts (3 closings and 2 openings, held, 2 openings and a closing):", flush=True)
    good = bad = stalled = 0
    running = got[-1].get("run") if got else None
    while good + bad < BURSTS and stalled < 20 * BURSTS:
        name = running if running in ("A", "B") else "A"  # the running side ends its turn
        (first, last), tight, writes = burst(sim, PINS[name])
        got = service.presses(quiet_s=1.5)
        running = got[-1].get("run") if got else running
        if not tight:
            stalled += 1
            print(
                f"     {name}: the VM stalled mid-burst (edges {GLITCH_NS // 1_000_000} ms apart or more): again",
                flush=True,
            )
            continue
        stamps = [(service.t0_ns + record["at_ns"] - first) / 1000 for record in got]
        one = len(got) == 1 and got[0]["button"] == name and first <= service.t0_ns + got[0]["at_ns"] <= last
        good, bad = good + one, bad + (not one)
        said = ", ".join(f"{stamp:.1f} us" for stamp in stamps)
        print(f"     {name}: {len(got)} press, stamped {said} after the first closing began", flush=True)
        if not one:  # what the kernel was given, to tell a stalled VM from a wrong clock
            given = ", ".join(
                f"{(before - first) / 1000:.0f}-{(after - first) / 1000:.0f}" for before, after in writes
            )
            print(f"     {name}: writes at {given} us; records {json.dumps(got)}", flush=True)
    check(good == BURSTS, f"{good} of {BURSTS} bursts one press each, stamped inside the burst")
    code, errors_text = service.stop()
    check(code == 0 and "busy" not in errors_text.lower(), f"stopped (exit {code})")

    print(f"6. the service stopped and started {RESTARTS} times:", flush=True)
    for number in range(RESTARTS):
        boot, took = service.start(state)
        held = lines_held(sim, "tileclock")
        first, _ = press(sim, PINS["STOP"])
        got = service.presses()
        code, errors_text = service.stop()
        check(
            held and len(got) == 1 and code == 0 and "busy" not in errors_text.lower(),
            f"start {number + 1}: booted in {took:.1f} s, lines held, {len(got)} press, exit {code}",
        )

    print("7. a line held by another process, and tileclock doctor:", flush=True)
    child = os.fork()
    if child == 0:  # the other process: names itself, holds STOP's line, waits to be killed
        ctypes.CDLL(None).prctl(15, HOLDER.encode())
        held = gpiod.request_lines(sim.chip, {PINS["STOP"]: None}, consumer=HOLDER)  # noqa: F841  kept till killed
        signal.pause()
        os._exit(0)
    until(
        lambda: gpiod.Chip(sim.chip).get_line_info(PINS["STOP"]).used,
        "the other process's request",
    )
    doctor = subprocess.run(
        [
            sys.executable,
            "-m",
            "tileclock",
            "doctor",
            "--config",
            service.config,
            "--state-dir",
            state,
        ],
        capture_output=True,
        text=True,
    )
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    said = [line for line in doctor.stdout.splitlines() if "held" in line or "busy" in line.lower()]
    print(
        "     doctor: " + "\n     doctor: ".join(said or doctor.stdout.splitlines()[:6]),
        flush=True,
    )
    check(
        doctor.returncode != 0 and any(HOLDER in line and str(child) in line for line in said),
        f"doctor names {HOLDER!r} (pid {child}) as the holder of GPIO{PINS['STOP']}",
    )

    print(f"kernel check: {time.monotonic() - began:.0f} s in the VM", flush=True)
    print(f"KERNEL-CHECK-COUNTS={len(passes)} {len(failures)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # anything unexpected is a failure, said, never a silent pass
        import traceback

        traceback.print_exc()
        print(f"kernel check: FAIL: {error}", flush=True)
        print(f"KERNEL-CHECK-COUNTS={len(passes)} {len(failures) + 1}", flush=True)
        sys.exit(2)
