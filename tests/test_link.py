"""The record line through real pseudo-terminals: records out, commands in, a cable pulled and put back."""

from dataclasses import replace

import pytest

from conftest import tap
from support.cable import Plug
from support.serial_link import command, deliver, records
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe_any, with_crc

S = NS_PER_S


@pytest.fixture
def plug(tmp_path):
    plug = Plug(str(tmp_path), "ttyCLOCK")
    yield plug
    if plug.master is not None:
        plug.pull()


@pytest.fixture
def clock(plug):
    sim = Simulator(Config(), serial_url=plug.path)
    yield sim
    sim.close()


def read_through(sim, plug):
    """The records on the line up to the newest the clock has sent (its link's `next_seq` - 1),
    whatever was lost before them: waits for that record, not for a quiet spell of the line."""
    newest = sim.link.next_seq - 1
    got = []
    while not got or got[-1]["seq"] != newest:
        got += records(plug.read_lines(1, timeout=30))
    return got


def test_records_go_out_framed_and_in_order(clock, plug):
    tap(clock, "B", 0)
    got = records(plug.read_lines(3))
    assert [(r["seq"], r["ev"]) for r in got] == [(0, "boot"), (1, "new_game"), (2, "start")]


def test_status_and_resend_are_answered_from_the_journal(clock, plug):
    tap(clock, "B", 0)
    first = plug.read_lines(3)
    command(clock, plug, "status", 5)
    status = unframe_any(plug.read_lines(1)[0])
    assert status["ev"] == "status" and status["last_seq"] == 2 and status["A"]["used_ms"] == 5000
    assert "seq" not in status and clock.journal.next_seq == 3  # an answer, not a record: nothing written
    command(clock, plug, "resend 0 2", 6)
    assert plug.read_lines(3) == first  # the very same lines, from the journal


def test_a_resend_beyond_the_journal_is_answered_with_an_error(clock, plug):
    plug.read_lines(2)
    command(clock, plug, "resend 1 99", 1)
    got = records(plug.read_lines(2))
    # the error is a live record: it goes out before the resent line
    assert got[0]["ev"] == "error" and "journal holds seq 0-" in got[0]["detail"] and got[1]["seq"] == 1


def test_an_adjust_needs_a_stopped_clock_and_its_crc(clock, plug):
    tap(clock, "B", 0)
    plug.read_lines(3)
    command(clock, plug, with_crc("adjust A +60000"), 5)
    assert "only while the clock is stopped" in records(plug.read_lines(1))[0]["detail"]
    tap(clock, "STOP", 10)
    command(clock, plug, "adjust A +60000", 12)
    command(clock, plug, with_crc("adjust A +60000"), 13)
    got = records(plug.read_lines(3))
    assert got[0]["ev"] == "pause" and "needs its CRC" in got[1]["detail"]
    assert got[2]["ev"] == "adjust" and got[2]["source"] == "serial" and got[2]["A"]["shown"] == "25:50"


def test_noise_and_over_long_lines_get_one_error_and_change_nothing(clock, plug):
    tap(clock, "B", 0)
    plug.read_lines(3)
    deliver(clock, plug, b"\x00\x01\xfe garbage\n" + b"x" * 500 + b"\nresend x\n")
    clock.daemon.pump(5 * S)
    error = records(plug.read_lines(1))[0]
    assert error["ev"] == "error" and "and 2 more bad lines" in error["detail"]
    assert error["state"] == "running" and error["A"]["used_ms"] == 5000
    tap(clock, "A", 6)
    assert records(plug.read_lines(1))[0]["ev"] == "switch"


def test_a_pulled_cable_costs_nothing_and_sending_resumes_where_it_stopped(clock, plug):
    tap(clock, "B", 0)
    before = records(plug.read_lines(3))
    plug.pull()
    tap(clock, "A", 10)  # made while the cable is out
    tap(clock, "B", 20)
    clock.run_to(25 * S)
    assert clock.daemon.alerts == ("LINK DOWN",)
    plug.connect()
    clock.run_to(27 * S)  # the loop retries every second
    after = read_through(clock, plug)
    seqs = [r["seq"] for r in after]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # resumes in order, nothing twice
    # a line written into the dying tty before the failure showed is lost on the wire: the
    # director sees the gap by seq and asks; the clock answers from the journal
    if seqs[0] > 3:
        command(clock, plug, f"resend 3 {seqs[0] - 1}", 28)
        after = records(plug.read_lines(seqs[0] - 3, timeout=30)) + after
    every = sorted(r["seq"] for r in before + after)
    assert every == list(range(len(every)))
    by_ev = {r["ev"]: r for r in after}
    assert by_ev["switch"]["t_ms"] in (10_000, 20_000) and "fault" in by_ev and "fault_cleared" in by_ev
    assert clock.daemon.alerts == ()


def test_a_reader_that_stops_reading_never_blocks_the_clock(tmp_path):
    plug = Plug(str(tmp_path), "ttyCLOCK")
    sim = Simulator(replace(Config(), timing=replace(Config().timing, min_turn_ms=0)), serial_url=plug.path)
    for index in range(400):  # ~100 kB of records into a pty nobody reads
        tap(sim, "A" if index % 2 else "B", index * 0.3)
    assert sim.link.pending  # the rest waits in the clock, not in a blocked write
    assert sim.clock.view(int(120 * S)).state == "running"
    got = []
    for _ in range(200):  # the director starts reading: each wake sends what the pty takes
        got += records(plug.drain(0.05))
        if not sim.link.pending:
            break
        sim.run_to(sim.time() + 2 * S)
    got += records(plug.drain(0.05))
    assert [r["seq"] for r in got] == list(range(len(got))) and len(got) >= 402
    sim.close()
    plug.pull()
