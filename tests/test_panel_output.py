"""The panels as the clock keeps them: a whole frame again after a bus error, burn-in care (dim,
move, dark, woken by a press), and frames written to disk as PNGs."""

import os

from luma.core.interface.serial import i2c
from PIL import Image

from conftest import tap
from support.scenes import SCENES
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.oled import PagedSSD1306, RecordingBus
from tileclock.device.hardware.screens import PanelOutput
from tileclock.device.screen.idle import IdlePolicy
from tileclock.device.screen.text import Panel
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

S = NS_PER_S


def test_after_a_bus_error_the_next_frame_goes_out_whole():
    bus = RecordingBus()
    output = PanelOutput(Panel("A"), PagedSSD1306(i2c(bus=bus)))
    view = SCENES["running"]
    output.show(view)
    bus.fail = OSError(121, "Remote I/O error")
    output.show(SCENES["overtime"])
    assert output.failing and output.faults == 1
    bus.fail = None
    bus.writes.clear()
    output.show(SCENES["overtime"])
    assert output.failing is None
    assert sum(len(p) for _, control, p in bus.writes if control == 0x40) == 1024


class FakePanel:
    def __init__(self):
        self.calls = []

    def contrast(self, level):
        self.calls.append(("contrast", level))

    def show(self):
        self.calls.append(("show",))

    def hide(self):
        self.calls.append(("hide",))

    def display(self, image):
        self.calls.append(("display", image))


def test_an_idle_panel_dims_moves_goes_dark_and_wakes():
    policy = IdlePolicy(dim_after_s=300, shift_every_s=60, blank_after_s=1800, dim_contrast=8)
    device = FakePanel()
    output = PanelOutput(Panel("A"), device, contrast=0xCF, idle=policy)
    view = SCENES["paused"]
    awake = output.show(view, idle_ns=10 * S)
    assert ("contrast", 0xCF) in device.calls
    dimmed = output.show(view, idle_ns=300 * S)
    assert device.calls[-3:-1] == [("contrast", 8), ("show",)]
    moved = output.show(view, idle_ns=360 * S)
    assert awake.getbbox() != dimmed.getbbox() != moved.getbbox()
    output.show(view, idle_ns=1800 * S)
    assert ("hide",) in device.calls
    output.show(view, idle_ns=None)
    assert device.calls[-3:-1] == [("contrast", 0xCF), ("show",)]


def lit(bus):
    """Whether the panel on `bus` was last told to light (DISPLAYON) rather than go dark (DISPLAYOFF)."""
    switches = [
        payload for _, control, payload in bus.writes if control == 0x00 and payload in (b"\xae", b"\xaf")
    ]
    return switches[-1] == b"\xaf"


def test_a_press_wakes_a_dark_panel():
    sim = Simulator(Config())
    tap(sim, "B", 0)
    tap(sim, "STOP", 10)
    sim.run_to(40 * 60 * S)
    assert not any(lit(bus) for bus in sim.buses.values())  # 30 idle minutes after the stop: dark
    tap(sim, "STOP", 40 * 60)  # a short STOP on a stopped clock changes nothing in the game...
    assert all(lit(bus) for bus in sim.buses.values()) and sim.clock.state == "paused"  # ...but wakes both
    sim.run_to(80 * 60 * S)
    assert not any(lit(bus) for bus in sim.buses.values())
    sim.serial_lines()
    tap(sim, "A", 80 * 60)  # the press that wakes dark panels only wakes them (docs/rules.md)
    assert all(lit(bus) for bus in sim.buses.values()) and sim.clock.state == "paused"
    assert [(r["ev"], r["reason"]) for r in map(unframe, sim.serial_lines())] == [("ignored", "wake")]
    tap(sim, "A", 80 * 60 + 1)  # the next press plays
    assert sim.clock.state == "running"
    sim.close()


def test_frames_are_written_as_pngs(sim, tmp_path):
    sim("0 press B\n3 press A\n5 until\n", "--frames", str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    assert "t000000000-A.png" in names and "t000000000.png" in names
    assert "t000003000-B.png" in names  # the switch
    assert "t000004000-B.png" in names  # B's clock ticks to 24:59 after a second of its own
    assert Image.open(tmp_path / "t000003000-B.png").size == (128, 64)
