"""Every clock is known apart: an id from its hardware or its state directory, in every record."""

import os

import pytest

from tileclock.device.assembly import RunningClock, device_parts, simulated_parts
from tileclock.device.config import ConfigError, parse_config
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.identity import ID_FILE, board_serial, hardware_clock_id, is_label, stored_clock_id
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe, unframe_any

PI_CPUINFO = (
    "processor\t: 0\nHardware\t: BCM2835\nRevision\t: 902120\nSerial\t\t: 00000000{}\nModel\t\t: Pi\n"
)


def test_a_pi_is_known_by_its_serial_number_not_its_card(tmp_path):
    cpuinfo, machine_id = tmp_path / "cpuinfo", tmp_path / "machine-id"
    machine_id.write_text("0123456789abcdef0123456789abcdef\n")
    cpuinfo.write_text(PI_CPUINFO.format("8a1b2c3d"))
    first = hardware_clock_id(str(cpuinfo), str(machine_id))
    machine_id.write_text("fedcba9876543210fedcba9876543210\n")  # the same Pi with another card
    assert hardware_clock_id(str(cpuinfo), str(machine_id)) == first
    cpuinfo.write_text(PI_CPUINFO.format("8a1b2c3e"))  # another Pi
    assert hardware_clock_id(str(cpuinfo), str(machine_id)) != first
    assert is_label(first) and len(first) == 12 and "8a1b2c3d" not in first  # hashed, shortened


def test_without_a_serial_number_the_machine_id_serves_and_without_either_there_is_none(tmp_path):
    cpuinfo, machine_id = tmp_path / "cpuinfo", tmp_path / "machine-id"
    cpuinfo.write_text(PI_CPUINFO.format("00000000"))  # all zeros: no real serial
    machine_id.write_text("0123456789abcdef0123456789abcdef\n")
    by_machine = hardware_clock_id(str(cpuinfo), str(machine_id))
    assert is_label(by_machine)
    machine_id.write_text("fedcba9876543210fedcba9876543210\n")
    assert hardware_clock_id(str(cpuinfo), str(machine_id)) != by_machine
    none = str(tmp_path / "none")
    assert hardware_clock_id(none, none, dt_serial=none) is None


def test_debians_kernel_shows_the_serial_in_the_device_tree_and_the_pi_keeps_its_id(tmp_path):
    # Pi OS: the serial in /proc/cpuinfo; Debian's mainline kernel (the image): only in the device
    # tree, written by the same firmware. The same Pi must be the same clock on either card.
    cpuinfo, machine_id, dt = tmp_path / "cpuinfo", tmp_path / "machine-id", tmp_path / "serial-number"
    machine_id.write_text("0123456789abcdef0123456789abcdef\n")
    cpuinfo.write_text(PI_CPUINFO.format("8a1b2c3d"))
    on_pi_os = hardware_clock_id(str(cpuinfo), str(machine_id), dt_serial=str(dt))
    cpuinfo.write_text("processor\t: 0\nBogoMIPS\t: 38.40\nCPU part\t: 0xd03\n")  # mainline: no Serial
    dt.write_bytes(b"000000008a1b2c3d\0")
    machine_id.write_text("fedcba9876543210fedcba9876543210\n")  # another card, another OS
    assert hardware_clock_id(str(cpuinfo), str(machine_id), dt_serial=str(dt)) == on_pi_os
    for junk in (b"0000000000000000\0", b"not hex\0", b"\xff\xfe", b""):  # an emulator's, or damaged
        dt.write_bytes(junk)
        assert board_serial(str(cpuinfo), str(dt)) is None


def test_a_state_directory_keeps_its_id_and_a_damaged_or_unwritable_one_never_stops_the_clock(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    assert stored_clock_id(str(one)) == stored_clock_id(str(one)) != stored_clock_id(str(two))
    (one / ID_FILE).write_text("../../etc/passwd\n")  # not an id: replaced by a good one
    replaced = stored_clock_id(str(one))
    assert is_label(replaced) and (one / ID_FILE).read_text().strip() == replaced
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert is_label(stored_clock_id(str(locked)))


def clock_ids(lines):
    return {unframe(line)["clock"] for line in lines}


def test_a_simulated_clock_is_one_clock_per_state_directory_across_restarts(tmp_path):
    def run(state_dir):
        sim = Simulator(Config(), state_dir=str(state_dir))
        sim.set_button("B", True, 10**9)
        sim.finish(2 * 10**9)
        lines = list(sim.journal.lines)
        sim.close()
        return lines

    first = run(tmp_path / "a")
    again = run(tmp_path / "a")  # a restart on the same state: the same clock, seq going on
    other = run(tmp_path / "b")
    assert len(clock_ids(first)) == 1 and clock_ids(again) == clock_ids(first)
    assert clock_ids(other) != clock_ids(first)
    assert (tmp_path / "a" / ID_FILE).read_text().strip() in clock_ids(first)


def test_every_record_carries_the_id_even_answers_and_errors(tmp_path):
    config = parse_config({"clock": {"id": "hall-7"}, "serial": {"port": "loop://"}})
    clock = RunningClock(config, device_parts(config, str(tmp_path), simulate=True)).boot()
    clock.link.accepts_commands = True  # loop:// reads back what it writes: let it hear commands
    clock.link.port.write(b"status\nfrobnicate\n")
    clock.daemon.pump(clock.time())
    sent = clock.link.port.read(clock.link.port.in_waiting).decode().splitlines()
    answer = unframe_any(next(line for line in sent if '"ev":"status"' in line))
    clock.close()
    records = [unframe(line) for line in clock.journal.lines]
    assert [r["ev"] for r in records][-1:] == ["error"]  # the status answer is sent, not journaled
    assert answer["ev"] == "status" and answer["clock"] == "hall-7"
    assert {r["clock"] for r in records} == {"hall-7"}  # the config's id wins over the state directory's
    assert clock.clock_id == "hall-7"


def test_the_hardware_id_wins_over_the_state_directory(tmp_path):
    parts = simulated_parts(VirtualTime(), state_dir=str(tmp_path))
    parts.hardware_id = lambda: "0a1b2c3d4e5f"
    clock = RunningClock(Config(), parts)
    clock.close()
    assert clock.clock_id == "0a1b2c3d4e5f" and not (tmp_path / ID_FILE).exists()


@pytest.mark.parametrize(
    "key, value",
    [
        ("board", "x/../../../../escaped"),
        ("board", '=HYPERLINK("http://x")'),
        ("board", ""),
        ("board", "a" * 33),
        ("board", "table 3"),
        ("id", "../clock"),
        ("id", "é"),
    ],
)
def test_a_board_name_or_clock_id_that_is_not_a_label_is_refused_by_name(key, value):
    with pytest.raises(ConfigError) as refused:
        parse_config({"clock": {key: value}})
    assert f"clock.{key} = {value!r}" in str(refused.value)


def test_a_label_board_name_is_taken():
    assert parse_config({"clock": {"board": "Hall-B_12"}}).board == "Hall-B_12"


def test_a_clock_named_by_its_config_still_says_the_pis_serial_id_in_its_boot_record(tmp_path):
    # a card from `hall-setup --cards`: its id (board-12) came in the settings file, before anyone
    # read the Pi's serial; the boot record keeps the serial's id beside it
    parts = simulated_parts(VirtualTime(), state_dir=str(tmp_path))
    parts.hardware_id = lambda: "0a1b2c3d4e5f"
    clock = RunningClock(Config(clock_id="board-12"), parts).boot()
    clock.close()
    boot = unframe(clock.journal.lines[0])
    assert (boot["ev"], boot["clock"], boot["hw_id"]) == ("boot", "board-12", "0a1b2c3d4e5f")
    parts = simulated_parts(VirtualTime(), state_dir=str(tmp_path / "b"))
    parts.hardware_id = lambda: "0a1b2c3d4e5f"
    clock = RunningClock(Config(), parts).boot()  # the serial's id is the clock's: not said twice
    clock.close()
    assert "hw_id" not in unframe(clock.journal.lines[0])
