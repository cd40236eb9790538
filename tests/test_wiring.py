"""The panels' wiring: the config picks one, the simulated panels are wired so (SPI through luma's
own SPI interface), two buses are written at once on a press, the bench prices each, doctor checks it."""

import threading

import pytest

from conftest import tap
from support.doctor import by_what, fresh_card
from support.panel_ram import ControllerRAM
from tileclock.bench.service import press_latencies
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S
from tileclock.device.config import ConfigError, parse_config
from tileclock.device.doctor import FAIL, OK
from tileclock.device.doctor.panels import check_panels
from tileclock.device.doctor.pi import check_boot
from tileclock.device.hardware.oled import RecordingSPI, pack_pages
from tileclock.device.wiring import WIRINGS
from tileclock.sim.simulator import Simulator

S = NS_PER_S


def wired(name, **screens):
    return parse_config({"screens": {"wiring": name, **screens}})


def test_the_config_picks_a_wiring_and_a_panel_table_overrides_it():
    one, two, spi = (wired(name) for name in WIRINGS)
    assert [(p.interface, p.port, p.address) for p in one.panels] == [("i2c", 1, 0x3C), ("i2c", 1, 0x3D)]
    assert [(p.port, p.address) for p in two.panels] == [(1, 0x3C), (3, 0x3C)]
    assert [(p.interface, p.spi_device, p.dc_pin) for p in spi.panels] == [("spi", 0, 24), ("spi", 1, 24)]
    assert spi.spi_hz == 8_000_000 and parse_config({}).wiring == "i2c-one-bus"
    mixed = parse_config(
        {"screens": {"wiring": "i2c-two-buses"}, "panel": [{"faces": "A"}, {"faces": "B", "port": 4}]}
    )
    assert [(p.port, p.address) for p in mixed.panels] == [(1, 0x3C), (4, 0x3C)]
    with pytest.raises(ConfigError, match="wiring"):
        wired("i2c-three-buses")
    with pytest.raises(ConfigError, match="same address"):
        parse_config({"panel": [{"faces": "A"}, {"faces": "B", "address": 0x3C}]})
    with pytest.raises(ConfigError, match="button"):
        parse_config({"screens": {"wiring": "spi"}, "buttons": {"a": 24}})


def test_spi_panels_are_driven_through_luma_s_own_spi_interface_at_its_clock():
    sim = Simulator(wired("spi"))
    buses = sim.buses
    assert all(isinstance(bus, RecordingSPI) for bus in buses.values())
    assert {bus.opened for bus in buses.values()} == {(0, 0), (0, 1)} and buses["A"].max_speed_hz == 8_000_000
    before = {side: bus.bytes_on_wire() for side, bus in buses.items()}
    tap(sim, "B", 1)
    assert all(bus.bytes_on_wire() > before[side] for side, bus in buses.items())  # both panels redrawn
    sim.close()


def test_on_two_buses_a_press_writes_both_at_once_and_a_tick_one_after_the_other():
    sim = Simulator(wired("i2c-two-buses"))
    specs = {spec.faces: spec for spec in sim.config.panels}
    rams = {side: ControllerRAM(specs[side].driver, specs[side].address) for side in specs}
    threads = []
    for side, bus in sim.buses.items():
        rams[side].feed(bus.writes)
        bus.writes.clear()
        bus.tap = lambda _bus, *_, side=side: threads.append((side, threading.get_ident()))
    loop = threading.get_ident()
    tap(sim, "B", 1)  # A runs: a press
    assert {side for side, thread in threads if thread != loop} == {"B"}  # B's bus from a helper
    assert {side for side, thread in threads if thread == loop} == {"A"}
    threads.clear()
    sim.run_to(int(2.5 * S))  # A's second ticks over: no press
    assert threads and all(thread == loop for _, thread in threads)
    for side, bus in sim.buses.items():
        rams[side].feed(bus.writes)
        assert rams[side].pages() == pack_pages(sim.daemon.frames[side])  # and each panel shows its frame
    sim.close()


def rows(turn, whole, tick):
    """A switch's wake and a tick's, with each panel's bus counts (A, B)."""
    edge = 10 * S
    switch = {
        "edges": [["A", True, edge]],
        "records": [[1, "switch", edge]],
        "turn_ns": edge,
        "panels_ns": edge,
        "journaled_ns": edge,
        "sent_ns": edge,
        "turn_buses": turn,
        "buses": whole,
        "bus_bytes": sum(b for b, _ in whole),
        "bus_transactions": sum(t for _, t in whole),
    }
    ticked = {
        "edges": [],
        "records": [],
        "panels_ns": edge,
        "journaled_ns": edge,
        "sent_ns": edge,
        "buses": tick,
        "bus_bytes": sum(b for b, _ in tick),
        "bus_transactions": sum(t for _, t in tick),
    }
    return [switch, ticked]  # fmt: skip  # two wakes as the service writes them, a field group a line


def test_each_wiring_prices_a_switch_and_a_tick_from_its_own_buses():
    found = rows(turn=[[22, 2], [22, 2]], whole=[[300, 6], [320, 6]], tick=[[60, 2], [50, 2]])
    one = press_latencies(found, 400_000, wired("i2c-one-bus").panels)
    assert one["turn_bus"] == [(44 * 9 + 4 * 2) / 400] and one["bus"] == [(620 * 9 + 12 * 2) / 400]
    two = press_latencies(found, 400_000, wired("i2c-two-buses").panels)
    assert two["turn_bus"] == [(22 * 9 + 2 * 2) / 400] and two["bus"] == [(320 * 9 + 6 * 2) / 400]  # at once
    assert two["tick_bus"] == one["tick_bus"] == [(110 * 9 + 4 * 2) / 400]  # a tick: one bus, then the other
    spi = press_latencies(found, 400_000, wired("spi").panels, 8_000_000)
    assert spi["bus"] == [(620 * 8 + 12 * 2) / 8_000]  # 8 clocks a byte at 8 MHz
    assert spi["panel"][0] < one["panel"][0] / 10 and spi["turn"][0] == pytest.approx(0 + spi["turn_bus"][0])
    assert NS_PER_MS  # (times in ms)


def test_doctor_names_the_wiring_and_what_a_second_bus_or_spi_needs(tmp_path):
    card = fresh_card(tmp_path)
    two = by_what(check_boot(wired("i2c-two-buses"), str(card)))
    assert (
        two["boot config: I2C bus 3"].status == FAIL and "i2c-gpio,bus=3" in two["boot config: I2C bus 3"].fix
    )
    config_txt = card / "boot" / "firmware" / "config.txt"
    config_txt.write_text(
        config_txt.read_text() + "dtoverlay=i2c-gpio,bus=3,i2c_gpio_sda=23,i2c_gpio_scl=24\n"
    )
    assert by_what(check_boot(wired("i2c-two-buses"), str(card)))["boot config: I2C bus 3"].status == OK
    assert by_what(check_boot(wired("spi"), str(card)))["boot config: SPI"].status == FAIL
    checks = by_what(check_panels(wired("spi")))
    assert "spi: A on /dev/spidev0.0, B on /dev/spidev0.1" in checks["panel wiring"].seen
    assert checks["panel A"].status == FAIL  # no /dev/spidev0.0 here
