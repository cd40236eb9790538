"""Faults that must cost no time and no record: restarts, power cuts, torn journals, stuck buttons."""

import os

import pytest

from conftest import events, tap
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.journal import Journal
from tileclock.device.journal.reader import JournalReader
from tileclock.device.screen.face import notice_text
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

S = NS_PER_S


def new_records(sim, before):
    return sim.journal.records(before)


def last(sim, ev):
    """The newest record of kind `ev` in the clock's journal."""
    return [record for record in sim.journal.records() if record["ev"] == ev][-1]


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "journal")


def journal(path, boot_id):
    """The journal as the service opens it: a restart in the same boot goes on where the last run stopped."""
    run = os.path.join(os.path.dirname(path), "run")
    os.makedirs(run, exist_ok=True)
    return Journal.open(path, runtime=(run, boot_id))


def start_game(path, time, boot_id="boot-1"):
    """A game: A runs 0-100 s, then B from 100 s; the process dies at 130.5 s (nothing closed)."""
    sim = Simulator(Config(), time=time, journal=journal(path, boot_id), boot_id=boot_id, checkpoints=True)
    tap(sim, "B", 0)
    tap(sim, "A", 100)
    sim.run_to(int(130.5 * S))
    return sim


def test_a_process_restart_charges_the_running_side_exactly_for_the_time_it_was_down(path):
    time = VirtualTime()
    start_game(path, time)  # killed: no finish, no close
    time.set(int(170.25 * S))  # the same boot: the monotonic clock ran on
    sim = Simulator(Config(), time=time, journal=journal(path, "boot-1"), boot_id="boot-1", checkpoints=True)
    boot, recovered = new_records(sim, sim.journal.next_seq - 2)  # no seq skipped: the same boot knows
    assert boot["ev"] == "boot" and recovered["ev"] == "recovered"
    assert (
        recovered["reason"] == "restart"
        and recovered["was_running"] == "B"
        and recovered["state"] == "running"
    )
    assert recovered["down_ms"] == 170_250 - 130_000  # since the last record (a checkpoint at 130 s)
    assert recovered["B"]["used_ms"] == 70_250 and recovered["A"]["used_ms"] == 100_000
    sim.finish(200 * S)
    status = new_records(sim, sim.journal.next_seq - 1)[0]
    assert status["B"]["used_ms"] == 100_000  # exactly: 100 s to 200 s, the process down or not
    assert status["t_ms"] == 200_000  # the game's own time goes on


def test_what_fell_due_while_the_process_was_down_is_recorded_at_its_own_instant(path):
    time = VirtualTime()
    start_game(path, time)
    time.set(1700 * S)  # B passed 25:00 while the process was down
    sim = Simulator(Config(), time=time, journal=journal(path, "boot-1"), boot_id="boot-1", checkpoints=True)
    records = sim.journal.records()
    overtime = next(r for r in records if r["ev"] == "overtime")
    assert overtime["t_ms"] == 100_000 + 1_501_000 and overtime["B"]["shown"] == "-0:01"
    assert [r["ev"] for r in records[-4:]] == ["penalty", "penalty", "boot", "recovered"]


def test_after_a_power_cut_the_game_comes_back_stopped_with_its_uncertainty_said(path):
    start_game(path, VirtualTime())
    sim = Simulator(
        Config(), time=VirtualTime(), journal=journal(path, "boot-2"), boot_id="boot-2", checkpoints=True
    )
    recovered = last(sim, "recovered")
    assert recovered["reason"] == "power_cut" and recovered["was_running"] == "B"
    # a checkpoint every 10 s, and (on ext4) up to its commit interval for the last one to stay
    doubt_ms = 10_000 + (sim.journal.settle_ms or 0)
    assert recovered["state"] == "paused" and recovered["uncertain_ms"] == doubt_ms
    assert recovered["B"]["used_ms"] == 30_000  # as of the last checkpoint, at 130 s
    view = sim.clock.view(sim.time())
    assert notice_text(view.notice) == f"RECOVERED +-{doubt_ms // 1000}s" and view.state == "paused"
    # the director gives the time back with the usual correction, then play goes on
    sim.set_button("STOP", True, 5 * S)
    tap(sim, "B", 5.5)
    sim.set_button("STOP", False, 7 * S)
    tap(sim, "A", 10)  # A's press starts B again
    adjust, resume = [r for r in new_records(sim, recovered["seq"] + 1) if r["ev"] in ("adjust", "resume")]
    assert adjust["player"] == "B" and adjust["delta_ms"] == 60_000
    assert resume["run"] == "B" and resume["t_ms"] == recovered["t_ms"] + 10_000


def test_checkpoints_while_a_side_runs_bound_the_loss(path):
    sim = start_game(path, VirtualTime())
    checkpoints = [r["t_ms"] for r in new_records(sim, 0) if r["ev"] == "checkpoint"]
    assert checkpoints == [10_000 * k for k in range(1, 14)]  # 10 s after the last record, while a side runs


def test_a_torn_journal_starts_the_clock_keeps_the_good_records_and_reports_the_damage(path, tmp_path):
    sim = start_game(path, VirtualTime())
    newest = sim.journal.next_seq - 1
    segment = tmp_path / "journal" / "000000000000.log"
    data = segment.read_bytes()
    segment.write_bytes(data[:-30])  # the power went while the last record was being written
    sim = Simulator(
        Config(), time=VirtualTime(), journal=journal(path, "boot-2"), boot_id="boot-2", checkpoints=True
    )
    damage = [r for r in events(sim.journal.records(), "fault") if "damaged" in r["detail"]]
    assert damage[0]["part"] == "journal" and "cut off mid-write" in damage[0]["detail"]
    kept = list((tmp_path / "journal" / "damaged").iterdir())
    assert [p.read_bytes() for p in kept] == [data[:-30]]  # kept aside, byte for byte
    recovered = last(sim, "recovered")
    assert recovered["B"]["used_ms"] == 20_000  # as of the checkpoint before the torn record
    assert recovered["seq"] > newest  # the torn record's seq is never used again


def test_an_ended_game_comes_back_ended(path):
    time = VirtualTime()
    sim = Simulator(Config(), time=time, journal=journal(path, "b"), boot_id="b")
    tap(sim, "B", 0)
    tap(sim, "STOP", 10)
    tap(sim, "STOP", 20, hold_s=3)  # held 3 s on a stopped clock: the panels ask to confirm
    tap(sim, "STOP", 25)  # which this press does: the game ends
    time.set(30 * S)
    again = Simulator(Config(), time=time, journal=journal(path, "b"), boot_id="b")
    assert again.clock.state == "ended" and again.clock.view(30 * S).A.used_ms == 10_000


def test_a_stuck_button_is_a_fault_is_shown_and_its_release_does_nothing(sim):
    records = sim("0 press B\n10 down A\n15 press B\n25 up A\n30 until\n")
    fault, cleared = events(records, "fault", "fault_cleared")
    assert fault["part"] == "button A" and fault["t_ms"] == 20_000 and cleared["t_ms"] == 25_000
    assert events(records, "switch")[1]["button"] == "B"  # the other buttons work meanwhile


def test_a_stuck_stop_never_ends_the_game(sim):
    records = sim("0 press B\n10 press STOP\n20 hold STOP 15\n40 until\n")
    assert not events(records, "end") and records[-1]["state"] == "paused"


def test_a_stuck_button_shows_on_the_screens():
    sim = Simulator(Config())
    sim.set_button("A", True, 1 * S)
    sim.run_to(12 * S)
    assert "button A" in sim.clock.view(12 * S).faults


def test_a_disk_that_stops_taking_writes_never_stops_the_clock_and_loses_no_record(path, monkeypatch):
    """The same with a real full and a real read-only filesystem: tests/test_storage_faults.py."""
    sim = Simulator(Config(), journal=Journal.open(path))
    tap(sim, "B", 0)
    fdatasync = os.fdatasync

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("tileclock.device.journal.os.fdatasync", full)
    tap(sim, "A", 10)  # the disk is full: the press still counts, and is still sent
    sim.run_to(12 * S)
    assert sim.daemon.alerts == ("DISK FAULT",)
    assert any('"ev":"switch"' in line for line in sim.serial_lines())
    monkeypatch.setattr("tileclock.device.journal.os.fdatasync", fdatasync)
    sim.run_to(14 * S)  # retried every second
    assert sim.daemon.alerts == ()
    sim.close()
    on_disk = JournalReader(path).lines
    assert [unframe(line)["seq"] for line in on_disk] == list(
        range(len(on_disk))
    )  # every record once, in order
    assert [unframe(line)["ev"] for line in on_disk][-2:] == ["fault", "fault_cleared"]
