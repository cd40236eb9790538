"""The panel controllers: what each driver's bytes do to each controller (hw/panel_drivers.py models
them from the datasheets), the wrong-driver picture up to date, and the SH1106's start-up clear."""

import importlib.util
import os

import pytest
from PIL import Image

from tileclock.device.config_schema import PanelConfig
from tileclock.device.hardware.oled import RecordingBus
from tileclock.device.hardware.screens import open_device

HW = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hw")


@pytest.fixture(scope="module")
def panels():
    spec = importlib.util.spec_from_file_location("panel_drivers", os.path.join(HW, "panel_drivers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106"])
def test_each_controller_model_shows_its_own_driver_s_frame_exactly(panels, driver):
    """What the models are checked against: the right driver on the right panel draws the frame,
    every pixel of it, from start-up (memory full of power-on noise) to the first frame."""
    frame = panels.frame()
    assert panels.shown(frame, driver, driver).tobytes() == frame.tobytes()


def test_the_sh1106_start_up_clear_reaches_the_whole_glass():
    """luma clears the panel inside its own __init__: the SH1106's column offset (2: 132 columns of
    memory, the glass centred) must already apply, or the glass's last 2 columns keep noise."""
    bus = RecordingBus()
    open_device(PanelConfig(faces="A", driver="sh1106"), bus=bus)
    placed = [payload for _, control, payload in bus.writes if control == 0x00 and 0xB0 <= payload[0] <= 0xB7]
    columns = {payload[1] | (payload[2] & 0x0F) << 4 for payload in placed if len(payload) == 3}
    assert len(placed) == 8 and columns == {2}  # every page of the clear starts at column 2


def test_a_wrong_driver_draws_a_wrong_picture(panels):
    frame = panels.frame()
    lit = sum(bin(byte).count("1") for byte in frame.tobytes())
    for driver, panel in (("ssd1306", "sh1106"), ("sh1106", "ssd1306")):
        glass = panels.shown(frame, driver, panel)
        off = sum(bin(x ^ y).count("1") for x, y in zip(frame.tobytes(), glass.tobytes(), strict=True))
        assert off > lit // 10, (driver, panel)  # not a pixel here and there: a different picture


def test_the_wrong_driver_picture_is_up_to_date_with_its_source(panels):
    committed = Image.open(os.path.join(HW, "panel-drivers.png")).convert("RGB")
    assert panels.draw().tobytes() == committed.tobytes(), "run: python hw/panel_drivers.py"
