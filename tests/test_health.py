"""The clock's health in its state on the hall's broker (device/health.py): what it reads, how
seldom, what the hall takes of it (wire/state.py), and chrony never asked on the loop's thread."""

import json
import threading
from dataclasses import replace

import pytest

from conftest import tap
from support.fake_sysfs import FakeSysfs
from support.hall_helpers import Listener, hall_config, wait_for
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.health import Health, folder_kb, uptime_s, wifi_signal
from tileclock.device.power import PowerWatch, find_source
from tileclock.device.timesync import TimeReport
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import with_crc
from tileclock.wire.state import MAX_STATE_BYTES, StateError, decode_state

#: /proc/net/wireless as the kernel writes it (net/wireless/wext-proc.c): two lines of headings
WIRELESS = (
    "Inter-| sta-|   Quality        |   Discarded packets               | Missed | WE\n"
    " face | tus | link level noise |  nwid  crypt   frag  retry   misc | beacon | 22\n"
    " wlan0: 0000   52.  -58.  -256        0      0      0      3     17        0\n"
)


def proc(root, wireless=WIRELESS, uptime="12345.67 23456.78\n"):
    (root / "proc" / "net").mkdir(parents=True, exist_ok=True)
    if wireless is not None:
        (root / "proc" / "net" / "wireless").write_text(wireless)
    (root / "proc" / "uptime").write_text(uptime)
    return root


def test_the_wifi_signal_and_uptime_are_read_as_the_kernel_writes_them(tmp_path):
    root = proc(tmp_path)
    assert wifi_signal(str(root)) == {"if": "wlan0", "dbm": -58, "link": 52}
    assert uptime_s(str(root)) == 12345
    proc(tmp_path, WIRELESS.replace("-58.", "198."))  # an older driver's unsigned level
    assert wifi_signal(str(root))["dbm"] == -58
    proc(tmp_path, WIRELESS.splitlines(keepends=True)[0] + WIRELESS.splitlines(keepends=True)[1])
    assert wifi_signal(str(root)) is None  # no wireless interface: the headings alone
    assert wifi_signal(str(tmp_path / "nowhere")) is None and uptime_s(str(tmp_path / "nowhere")) is None


def test_the_health_is_read_at_most_every_thirty_seconds_and_says_the_supply(tmp_path, monkeypatch):
    root = proc(tmp_path / "root")
    sysfs = FakeSysfs(root).install(monkeypatch)
    sysfs.firmware(0x50005)
    watch = PowerWatch(find_source(str(root)))
    watch.check(0)
    journal = tmp_path / "journal"
    journal.mkdir()
    (journal / "000001.log").write_bytes(b"x" * 5000)
    now = [100.0]
    walks = []  # the journal's walks, handed to a thread: run here when the test says
    health = Health(
        str(root), str(journal), watch, monotonic=lambda: now[0], synced=lambda: True, version="0.1.0",
        start=walks.append,
    )  # fmt: skip  # laid out by hand, the way it reads best
    said = health()
    assert said["journal_kb"] is None and len(walks) == 1  # never walked on the loop's thread
    walks.pop()()  # the walk, on its own thread
    said = health.read(now[0])  # what the next read gives
    walks.clear()
    assert said["v"] == "0.1.0" and said["up_s"] == 12345 and said["run_s"] == 0 and said["sync"] is True
    assert said["journal_kb"] == 5 and said["free_mb"] > 0 and said["wifi"]["dbm"] == -58
    assert said["power"] == {"src": "get_throttled", "flags": 0x50005, "low": True}
    for _ in range(29):
        now[0] += 1
        health()
    assert health.reads == 1  # 29 s later: the same figures, nothing read again
    now[0] += 1
    assert health()["run_s"] == 30 and health.reads == 2
    assert folder_kb(str(tmp_path / "none")) == 0 and folder_kb(None) is None


HONEST = {
    "clock": "t01",
    "board": "7",
    "seq": 5,
    "state": "running",
    "run": "A",
    "A": {"used_ms": 1000, "pen": 0, "shown": "24:59"},
    "B": {"used_ms": 0, "pen": 0, "shown": "25:00"},
    "faults": {},
    "health": {
        "v": "0.1.0",
        "up_s": 12345,
        "run_s": 600,
        "free_mb": 27_000,
        "journal_kb": 480,
        "wifi": {"if": "wlan0", "dbm": -58, "link": 52},
        "sync": True,
        "power": {"src": "rpi_volt", "flags": 0x10001, "low": True},
        "restart": "power_cut",
    },
}


def test_an_honest_health_is_taken_field_for_field_and_stays_small():
    payload = json.dumps(HONEST).encode()
    assert decode_state(payload, "t01")["health"] == HONEST["health"]
    assert len(json.dumps(HONEST["health"], separators=(",", ":"))) < 300 < MAX_STATE_BYTES
    unknown = {
        **HONEST["health"],
        "wifi": None,
        "power": None,
        "free_mb": None,
        "sync": None,
        "restart": None,
    }
    assert decode_state(json.dumps({**HONEST, "health": unknown}).encode(), "t01")["health"] == unknown


@pytest.mark.parametrize(
    "field, value",
    [
        ("v", "0.1.0; rm -rf"),
        ("v", None),
        ("up_s", -1),
        ("free_mb", 1.5),
        ("journal_kb", True),
        ("wifi", {"if": "wlan0", "dbm": 12, "link": 52}),
        ("wifi", {"if": "<b>", "dbm": -50, "link": 52}),
        ("power", {"src": "rpi_volt", "flags": 0x100000, "low": False}),
        ("power", {"src": "mains", "flags": 0, "low": False}),
        ("power", {"src": "rpi_volt", "flags": 0, "low": "no"}),
        ("restart", "because"),
        ("sync", "yes"),
    ],
)
def test_a_health_field_out_of_shape_refuses_the_state(field, value):
    bad = {**HONEST, "health": {**HONEST["health"], field: value}}
    with pytest.raises(StateError, match="health"):
        decode_state(json.dumps(bad).encode(), "t01")


def test_a_power_with_no_source_is_taken_as_none_never_a_crash():
    # `src` may be left out (a clock with no monitor): before, the decoder raised KeyError
    state = {**HONEST, "health": {**HONEST["health"], "power": {"low": False}}}
    assert decode_state(json.dumps(state).encode(), "t01")["health"]["power"] == {
        "src": None,
        "flags": None,
        "low": False,
    }


def test_an_interface_name_the_hall_would_refuse_is_sent_as_a_label(tmp_path):
    # a VLAN-style `wlan0.1` made the hall refuse the clock's whole state: its board froze
    wireless = tmp_path / "proc" / "net" / "wireless"
    wireless.parent.mkdir(parents=True)
    wireless.write_text(
        "Inter-| sta-|   Quality\n face | tus | link level noise\n wlan0.1: 0000   52.  -58.  -256\n"
    )
    said = wifi_signal(str(tmp_path))
    assert said == {"if": "wlan0_1", "dbm": -58, "link": 52}
    state = {**HONEST, "health": {**HONEST["health"], "wifi": said}}
    assert decode_state(json.dumps(state).encode(), "t01")["health"]["wifi"] == said


def test_chrony_is_read_on_a_thread_of_its_own_never_the_caller_s():
    asked, answer = threading.Event(), threading.Event()
    threads = []

    def slow_chronyc():
        asked.set()
        answer.wait()
        return {"offset_us": -120, "error_us": 800, "synced": True, "stratum": 3}

    def start(target):
        threads.append(threading.Thread(target=target))
        threads[-1].start()

    report = TimeReport(every_s=60, read=slow_chronyc, monotonic=lambda: 0.0, start=start)
    assert report() is None  # returns at once, chronyc still running
    assert asked.wait(10) and report() is None and len(threads) == 1  # one read at a time
    answer.set()
    threads[0].join(10)
    assert report() == {"offset_us": -120, "error_us": 800, "synced": True}


def test_the_state_on_the_broker_says_the_clock_s_health_and_why_it_last_started(broker, tmp_path):
    listener = Listener(broker)
    config = replace(Config(clock_id="c1"), hall=hall_config(broker, "c1"))

    def health():
        states = listener.payloads("tileclock/c1/state") or [b"{}"]
        return json.loads(states[-1]).get("health")

    sim = Simulator(config, state_dir=str(tmp_path / "c1"))
    tap(sim, "B", 1)
    wait_for(lambda: sim.uplink.pump() or (health() or {}).get("restart") == "start", what="a health")
    first = health()
    assert first["v"] and first["run_s"] == 0 and first["free_mb"] > 0
    assert first["power"] == {"src": None, "flags": None, "low": False}  # the simulator: no monitor
    decode_state(listener.payloads("tileclock/c1/state")[-1], "c1")  # the hall takes it whole

    # the journal's size is walked on a thread of its own: it is in a read once the walk is done
    def read_again():
        sim.run_to(sim.time() + 31 * 10**9)  # a read is due every 30 s of the clock's time
        sim.uplink.pump()
        return (health() or {}).get("journal_kb") is not None

    wait_for(read_again, what="the journal's size")
    sim.close()
    again = Simulator(config, state_dir=str(tmp_path / "c1"))  # mid-game, on a new boot (its own time)
    wait_for(lambda: again.uplink.pump() or (health() or {}).get("restart") == "power_cut", what="restart")
    again.close()
    listener.close()


def test_the_state_says_the_last_self_test_until_the_clock_restarts(broker, tmp_path):
    listener = Listener(broker)
    config = replace(Config(clock_id="c1"), hall=hall_config(broker, "c1"))

    def selftest():
        states = listener.payloads("tileclock/c1/state") or [b"{}"]
        return json.loads(states[-1]).get("selftest", "none")

    sim = Simulator(config, state_dir=str(tmp_path / "c1"))
    sim.send(with_crc("selftest"), 1 * NS_PER_S)
    for t_s in (2, 3):  # A and B answer, STOP never does
        tap(sim, "AB"[t_s - 2], t_s)
    sim.run_to(20 * NS_PER_S)
    wait_for(lambda: sim.uplink.pump() or selftest() != "none", what="the self-test in the state")
    assert selftest() == {"result": "fail", "failed": ["STOP not pressed"]}
    assert decode_state(listener.payloads("tileclock/c1/state")[-1], "c1")["selftest"]["result"] == "fail"
    sim.close()
    again = Simulator(config, state_dir=str(tmp_path / "c1"))  # restarted: never tested since
    wait_for(lambda: again.uplink.pump() or selftest() == "none", what="forgotten")
    again.close()
    listener.close()
