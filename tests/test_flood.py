"""A line that cannot flood the clock: floods of commands through a real pseudo-terminal.

`status` answers are sent, never journaled; `error` answers are rationed and say how many were
dropped; `resend 0` asked hundreds of times over a 2,000-record journal costs one pass over it,
streamed from disk, while presses still go out first. The figures under load (500 requests in
5 s, memory and press-to-line time) are `tileclock bench`'s.
"""

import os
import select
import tracemalloc

import pytest

from conftest import charged, tap, used_at_switches
from support.cable import Plug
from tileclock.bench.history import make_history, sample_game
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.journal import Journal
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe, unframe_any

S = NS_PER_S


@pytest.fixture
def plug(tmp_path):
    plug = Plug(str(tmp_path), "ttyCLOCK")
    yield plug
    plug.pull()


def drain(plug, quiet_s=0.2):
    """Every complete line the clock has written, read until the line has been quiet `quiet_s`
    (the pty hands what the clock wrote to this end from a kernel worker, later under load)."""
    data = b""
    while select.select([plug.master], [], [], quiet_s)[0]:
        data += os.read(plug.master, 65536)
    plug.partial = getattr(plug, "partial", b"") + data
    *lines, plug.partial = plug.partial.split(b"\n")
    return [line.decode("ascii") for line in lines]


def send(sim, plug, lines, t_s):
    """Write command lines into the line (in pieces the pty takes) and let the clock wake on them."""
    for start in range(0, len(lines), 100):
        plug.write("".join(line + "\n" for line in lines[start : start + 100]))
        select.select([sim.link.fileno()], [], [], 5)  # the pty hands them over in its own time
        sim.daemon.pump(int(t_s * S))


@pytest.fixture(
    params=[pytest.param(4, id="400-records"), pytest.param(20, id="2000-records", marks=pytest.mark.slow)]
)
def history(request, tmp_path):
    """A clock whose journal holds the records of earlier games: 4 games (some 400 records) in
    `make test`, 20 (some 2,000) in `make test-slow`."""
    state = str(tmp_path / "state")
    made = make_history(state, request.param, sample_game(minutes=10))
    return state, made


def test_resend_0_asked_hundreds_of_times_costs_one_pass_and_presses_go_first(plug, history):
    state, made = history
    time = VirtualTime(0)
    sim = Simulator(
        Config(), serial_url=plug.path, journal=Journal.open(os.path.join(state, "journal")), time=time
    )
    # the history's last game was left stopped, unconfirmed: the clock takes it up (a hold only asks)
    tap(sim, "STOP", 0.5, hold_s=2.5)
    presses = [(4, "B"), *((5 + round_ + 0.5, "AB"[round_ % 2]) for round_ in range(10))]
    tap(sim, "B", 4)
    got = drain(plug)
    wire = []  # what the port was handed, and where each switch was made, in order
    write = sim.link.port.write
    sim.link.port.write = lambda data: wire.append(bytes(data)) or write(data)
    sim.daemon.on_record = lambda record: record.ev == "switch" and wire.append(record.seq)
    tracemalloc.start()
    for round_ in range(10):
        t = 5 + round_
        send(sim, plug, ["resend 0"] * 50, t)  # 500 requests in all
        got += drain(plug)  # the director reads as lines come
        tap(sim, *reversed(presses[1 + round_]))  # a press in the middle of the flood
        got += drain(plug)
        sim.run_to(int((t + 1) * S))  # the resend streams on at the loop's own pace
        got += drain(plug)
    for _ in range(400):  # let the stream finish
        deadline = sim.daemon.reactor.next_deadline()
        time.set(deadline)
        sim.daemon.pump(deadline)
        got += drain(plug)
        if not sim.link.pending:
            break
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    records = [unframe(line) for line in got]
    seqs = [r["seq"] for r in records]
    first_seen = list(dict.fromkeys(seq for seq in seqs if seq >= made))
    assert first_seen == list(
        range(made, sim.journal.next_seq)
    )  # every new record, in order (then resent too)
    assert set(seqs) == set(range(sim.journal.next_seq))  # the whole journal, from disk
    assert len(seqs) <= 11 * sim.journal.next_seq  # a pass a round of requests at most, not one a request
    assert len(set(got)) == len(set(seqs))  # a seq sent again is the same record, never another
    assert [seq for seq, _ in sim.journal.read(0)] == list(range(sim.journal.next_seq))  # each once
    new = [records[seqs.index(seq)] for seq in first_seen]
    taken_up = next((r["A"]["used_ms"], r["B"]["used_ms"]) for r in new if r["ev"] == "recovered")
    assert used_at_switches(new) == charged(presses, used=taken_up)  # each turn, edge to edge
    switches = [seq for seq in wire if isinstance(seq, int)]
    assert len(switches) == 10 and set(switches) <= set(seqs)
    for seq in switches:  # each went out as the next whole line (after one cut short, at most)
        after = b"".join(data for data in wire[wire.index(seq) + 1 :] if isinstance(data, bytes))
        whole = after.split(b"\n")[:2]
        assert seq in [unframe_any(line.decode())["seq"] for line in whole if line.startswith(b"{")]
    assert peak < 4_000_000  # streamed: not 2,000 lines held per request
    sim.close()


def test_a_flood_of_status_writes_nothing_and_gets_an_answer(plug, tmp_path):
    sim = Simulator(Config(), serial_url=plug.path, journal=Journal.open(str(tmp_path / "journal")))
    drain(plug)
    before = sim.journal.next_seq
    send(sim, plug, ["status"] * 2000, 1)
    answers = [unframe_any(line) for line in drain(plug)]
    assert sim.journal.next_seq == before  # nothing journaled: the card is spared
    assert answers and all(a["ev"] == "status" and a["last_seq"] == before - 1 for a in answers)
    assert len(answers) <= 20  # the newest answer waits, one a wake: not 2,000 lines back
    sim.close()


def test_bad_lines_get_rationed_error_answers_that_count_what_they_dropped(plug, tmp_path):
    sim = Simulator(Config(), serial_url=plug.path, journal=Journal.open(str(tmp_path / "journal")))
    drain(plug)
    for second in range(1, 61):  # a minute of noise, a burst every second
        send(sim, plug, ["frobnicate"] * 5, second)
    sim.run_to(75 * S)
    errors = [r for r in (unframe(line) for line in drain(plug)) if r["ev"] == "error"]
    assert 5 <= len(errors) <= 5 + 75 // 10 + 1  # five at once, then one every 10 s
    assert sum(r.get("dropped", 0) for r in errors) > 30  # and they say how many were dropped,
    assert sim.daemon.commands.errors.dropped == 0  # every one of them, once the ration allowed
    sim.close()
