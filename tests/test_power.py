"""The Pi's power supply watched (device/power.py): which monitor is read, a new under-voltage a
`fault` record and `LOW POWER` on the panels at no cost to the clock's time, `doctor`'s word on
it, and the simulator's `power` line; every read through a fake sysfs as strict as the kernel's."""

import errno

import pytest

from conftest import tap
from support.fake_sysfs import FakeSysfs
from tileclock.cli import main
from tileclock.clock.timecode import NS_PER_S
from tileclock.device import power
from tileclock.device.config_schema import Config
from tileclock.device.doctor import OK, WARN
from tileclock.device.doctor.power import check_power
from tileclock.device.power import FirmwareFlags, HwmonAlarm, PowerWatch, ReadAhead, find_source, read_state
from tileclock.sim.script import ScriptError, parse_script
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

S = NS_PER_S


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    return FakeSysfs(tmp_path / "root").install(monkeypatch)


def records(sim):
    return [unframe(line) for line in sim.serial_lines()]


def power_records(sim):
    return [(r["ev"], r["t_ms"], r.get("detail")) for r in records(sim) if r.get("part") == "power"]


@pytest.fixture
def watched(sysfs):
    """A simulated clock whose power monitor is the fake's get_throttled, reading 0 (fine)."""
    sysfs.firmware(0)
    sim = Simulator(Config())
    sim.power.source = find_source(sysfs.root)
    yield sim, sysfs
    sim.close()


def test_the_kernel_s_hwmon_is_read_first_and_another_sensor_is_not_it(sysfs):
    assert find_source(sysfs.root) is None  # not a Pi: nothing to watch
    sysfs.firmware(0)
    assert isinstance(find_source(sysfs.root), FirmwareFlags)
    sysfs.hwmon(number=0, name="cpu_thermal")  # a hwmon, but not the supply's
    assert isinstance(find_source(sysfs.root), FirmwareFlags)
    sysfs.hwmon(alarm=1, number=1)
    source = find_source(sysfs.root)
    assert isinstance(source, HwmonAlarm) and source.path.endswith("hwmon1/in0_lcrit_alarm")
    assert read_state(source).under_voltage


def test_values_are_read_as_the_kernel_writes_them_and_nothing_is_ever_written(sysfs):
    sysfs.firmware(0x50005)
    with open(sysfs.firmware_path) as file:
        assert file.read() == "50005\n"  # hex, no 0x, a newline
    for mode in ("w", "a", "r+"):  # refused as kernfs refuses a write open, root or not
        with pytest.raises(PermissionError):
            power.open(sysfs.firmware_path, mode)
    sysfs.writes_refused = 0
    state = read_state(find_source(sysfs.root))
    assert state.flags == 0x50005 and state.under_voltage and state.error is None
    assert sysfs.writes_refused == 0


def test_a_read_that_fails_or_says_nonsense_is_an_error_said_not_a_verdict_on_the_supply(sysfs):
    source = FirmwareFlags(sysfs.firmware(0))
    sysfs.fail(source.path, errno.EIO)  # an older kernel's mailbox call that failed
    assert read_state(source).flags is None and read_state(source).error.startswith("EIO reading")
    sysfs.heal(source.path)
    sysfs.set_flags(0)
    assert read_state(source).flags == 0
    missing = FirmwareFlags(source.path + "-gone")
    assert read_state(missing).error.startswith("ENOENT reading")
    hwmon = HwmonAlarm(sysfs.hwmon(alarm=0) + "/in0_lcrit_alarm")
    sysfs.fail(hwmon.path, errno.EINVAL)
    assert read_state(hwmon).error.startswith("EINVAL reading")


def test_a_new_under_voltage_is_one_fault_and_low_power_on_both_panels_and_the_time_is_exact(watched):
    sim, sysfs = watched
    tap(sim, "B", 0)  # A runs
    sim.run_to(20 * S)
    sysfs.set_flags(0x50005)  # the supply sags at 20 s, and stays low
    sim.run_to(40 * S)
    assert sim.daemon.alerts == ("LOW POWER",)
    assert sim.view().faults == () and "LOW POWER" in sim.daemon.alerts
    sysfs.set_flags(0x50000)  # fine again (the occurred bits stay set: not a new one)
    sim.run_to(60 * S)
    assert sim.daemon.alerts == ()
    said = power_records(sim)
    assert [ev for ev, _, _ in said] == ["fault", "fault_cleared"]  # once each, not every check
    fault_ms, cleared_ms = said[0][1], said[1][1]
    assert 20_000 <= fault_ms <= 25_000 and 40_000 <= cleared_ms <= 45_000  # within a check
    assert said[0][2] == "under-voltage, throttled (get_throttled 50005)"
    assert sim.clock.view(60 * S).side("A").used_ms == 60_000  # the clock's time untouched by the watch


def test_a_dip_shorter_than_a_check_is_still_a_new_under_voltage(watched):
    sim, sysfs = watched
    sim.run_to(10 * S)
    sysfs.set_flags(0x10000)  # only the "has occurred" bit: it came and went between checks
    sim.run_to(30 * S)
    sysfs.set_flags(0x10001)  # and now again, while the occurred bit is still set
    sim.run_to(45 * S)
    assert [ev for ev, _, _ in power_records(sim)] == ["fault", "fault_cleared", "fault"]


def test_the_hwmon_alarm_is_watched_the_same_way(sysfs):
    sysfs.hwmon(alarm=0)
    sim = Simulator(Config())
    sim.power.source = find_source(sysfs.root)
    sim.run_to(10 * S)
    sysfs.set_alarm(1)
    sim.run_to(20 * S)
    assert sim.daemon.alerts == ("LOW POWER",)
    sysfs.set_alarm(0)
    sim.run_to(40 * S)
    assert [ev for ev, _, _ in power_records(sim)] == ["fault", "fault_cleared"]
    sim.close()


def test_a_running_clock_checks_on_its_own_ticks_and_an_idle_one_wakes_every_ten_seconds(watched):
    sim, sysfs = watched
    tap(sim, "B", 0)
    before, reads = sim.daemon.wakeups, []
    sim.power.source.read = lambda real=sim.power.source.read: reads.append(1) or real()
    sim.run_to(600 * S)
    assert sim.daemon.wakeups - before == 599  # as without the watch (test_simulator.py)
    assert 280 <= len(reads) <= 301  # every 2 s, on the ticks
    tap(sim, "STOP", 600)
    sim.run_to(700 * S)
    reads.clear()
    before = sim.daemon.wakeups
    sim.run_to(800 * S)
    assert len(reads) == 10 and sim.daemon.wakeups - before == 10


def test_a_press_s_wake_never_waits_for_a_check(watched):
    sim, sysfs = watched
    sim.run_to(1 * S)
    checked, waking = [], []
    pump, check = sim.daemon.pump, sim.power.check

    def pumped(now_ns, taken=None):
        waking[:] = [sim.daemon.reactor.inputs.qsize() + (taken is not None)]  # the edges this wake takes
        pump(now_ns, taken)

    sim.daemon.pump = pumped
    sim.power.check = lambda now_ns: (
        checked.append((now_ns, waking[0], sim.power.due(now_ns))) or check(now_ns)
    )
    due_ns = 10 * S  # the idle check after the one at boot
    tap(sim, "B", due_ns / S)  # a press exactly when a check is due
    sim.run_to(due_ns + S)
    assert not [when for when, edges, due in checked if edges]  # never on a wake with an edge
    assert [when for when, edges, due in checked if due] == [due_ns]  # on the wake after it


def test_doctor_says_which_monitor_it_read_and_what_it_says(sysfs):
    assert check_power(sysfs.root) is None  # a laptop: nothing said
    missing = check_power(sysfs.root, on_pi=True)
    assert missing.status == WARN and "no power monitor found" in missing.seen
    sysfs.firmware(0)
    fine = check_power(sysfs.root, on_pi=True)
    assert fine.status == OK and fine.seen.startswith("get_throttled (") and "fine (flags 0)" in fine.seen
    sysfs.set_flags(0x50005)
    low = check_power(sysfs.root, on_pi=True)
    assert low.status == WARN and "under-voltage, throttled" in low.seen and "2.5 A" in low.fix
    sysfs.fail(sysfs.firmware_path, errno.EIO)
    broken = check_power(sysfs.root, on_pi=True)
    assert broken.status == WARN and "cannot be read: EIO" in broken.seen
    sysfs.hwmon(alarm=0)
    hwmon = check_power(sysfs.root, on_pi=True)
    assert hwmon.status == OK and hwmon.seen.startswith("rpi_volt (") and "in0_lcrit_alarm" in hwmon.seen


def test_tileclock_doctor_reads_the_config_s_power_root(sysfs, tmp_path, capsys):
    sysfs.firmware(0x50000)
    config = tmp_path / "config.toml"
    config.write_text(f'[clock]\npower_root = "{sysfs.root}"\n[buttons]\nbackend = "mock"\n')
    main(["doctor", "--config", str(config), "--state-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "warn  power supply: get_throttled (" in out and "under-voltage earlier" in out
    assert "fix: a 5.1 V supply" in out


def test_a_script_s_power_lines_drive_the_simulated_supply(tmp_path, capsys):
    script = tmp_path / "game.txt"
    script.write_text("0 press B\n20 power 50005\n40 power 0x50000\n60 until\n")
    assert main(["sim", "--script", str(script)]) == 0
    out = [unframe(line) for line in capsys.readouterr().out.splitlines()]
    said = [(r["ev"], r["t_ms"]) for r in out if r.get("part") == "power"]
    assert said == [("fault", 20_000), ("fault_cleared", 40_000)]
    assert out[-1]["ev"] == "status" and out[-1]["A"]["used_ms"] == 60_000


@pytest.mark.parametrize(
    "line", ["5 power", "5 power xyz", "5 power 50005 1", "5 power 100000", "5 power -1"]
)
def test_a_power_line_takes_get_throttled_s_flags_only(line):
    with pytest.raises(ScriptError, match="power takes get_throttled's flags"):
        parse_script(line)


def test_a_watch_with_no_monitor_never_wakes_the_loop():
    watch = PowerWatch(None)
    watch.check(5 * S)
    assert watch.next_wake_ns(0) is None and watch.failing is None and watch.state.source is None


def test_get_throttled_is_read_ahead_off_the_loop_and_its_errors_kept(sysfs):
    # the firmware's mailbox may keep a read waiting up to a second: the loop only ever takes the
    # last read's answer, and the next read is handed to a thread, one at a time
    reads = []  # the reads handed to a thread, run here when the test says
    source = ReadAhead(FirmwareFlags(sysfs.firmware(0x50005)), start=reads.append)
    watch = PowerWatch(source)
    watch.check(0)
    assert watch.state.flags is None and watch.state.error is None and watch.failing is None
    assert len(reads) == 1
    watch.check(1 * S)  # not due yet, and one read under way: nothing more handed over
    reads.pop()()
    watch.check(2 * S)
    assert watch.state.flags == 0x50005 and watch.failing is not None
    assert len(reads) == 1  # the next one started
    watch.check(4 * S)  # that one has not finished: the last answer stands, no second thread
    assert watch.state.flags == 0x50005 and len(reads) == 1
