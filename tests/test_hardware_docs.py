"""hw/: the wiring picture is drawn from its source, and the config's defaults match it."""

import importlib.util
import os
import re

from PIL import Image

from tileclock.device.config_schema import Config

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


def test_the_picture_s_pins_are_the_pin_table_s():
    """hw/README.md's pin table (what a builder wires from) and the picture's source name the same
    header pins for the same signals, both ways; the GND pins the table sends a leg to are GND."""
    with open(os.path.join(HW, "README.md"), encoding="utf-8") as file:
        text = file.read()
    table = text.split("## Pinout", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    rows = [row for row in rows if len(row) == 4 and row[2].isdigit()]
    wired = {pin: label.split()[0] for pin, label, _, _, _ in load_wiring().WIRES}
    in_table = {int(pin): gpio.split()[0] for _, gpio, pin, _ in rows}
    assert len(rows) >= 10 and in_table.items() <= wired.items()
    legs = {int(pin) for pin in re.findall(r"GND, pin (\d+)", table)}
    assert legs and all(wired[pin] == "GND" for pin in legs)
    assert set(wired) == set(in_table) | legs  # nothing drawn that the table does not name


def test_each_part_s_pins_are_drawn_to_the_header_pins_the_table_wires_them_to():
    """The drawing of each part's own pins (a panel's GND VCC SCL SDA, a button's tabs) sends each
    to the header pin whose wire the picture's table names for that part, and names it as that
    pin's signal; every wire to a panel or a button is in a part's drawing."""
    wiring = load_wiring()
    wires = {pin: (label, target) for pin, label, _, _, target in wiring.WIRES}
    drawn = set()
    for part, _, pins in wiring.PARTS:
        name = part.split(" (")[0]
        for own, header in pins:
            if header is None:
                continue
            label, target = wires[header]
            shared = name.startswith("panel") and target.startswith("both panels")
            assert name in target or shared, (part, own, target)
            if own in ("GND", "VCC", "SCL", "SDA"):
                assert {"VCC": "3V3"}.get(own, own) in label, (part, own, label)
            drawn.add(header)
    to_parts = {pin for pin, (_, target) in wires.items() if "adapter" not in target}
    assert to_parts == drawn
