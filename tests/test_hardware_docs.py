"""hw/: the wiring picture is drawn from its source, and the config's defaults match it."""

import importlib.util
import os

from PIL import Image

from tileclock.device.config import Config

HW = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hw")


def load_wiring():
    spec = importlib.util.spec_from_file_location("wiring", os.path.join(HW, "wiring.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_wiring_picture_is_up_to_date_with_its_source():
    drawn = load_wiring().draw()
    committed = Image.open(os.path.join(HW, "wiring.png")).convert("RGB")
    assert drawn.tobytes() == committed.tobytes(), "run: python hw/wiring.py"


def test_the_default_pins_are_the_wired_ones():
    wires = {label: target for _, label, _, _, target in load_wiring().WIRES}
    by_button = {"A": "button A", "STOP": "STOP button", "B": "button B"}
    for button, gpio in Config().pins.items():
        assert wires[f"GPIO{gpio}"] == by_button[button]
