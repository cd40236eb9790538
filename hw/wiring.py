"""Draws hw/wiring.png, the clock's wiring diagram, from the pin table below.

Run `python hw/wiring.py` after changing the table; a test checks the picture is up to date.
"""

import os

from PIL import Image, ImageDraw, ImageFont

# (header pin, label, wire colour name, RGB, what it goes to): one wire a pin, but SDA and SCL,
# which both panels take (a 1-to-2 Dupont splitter on each, hw/README.md)
WIRES = [
    (1, "3V3", "red", (200, 30, 30), "panel A VCC"),
    (3, "GPIO2 SDA", "blue", (40, 80, 220), "both panels SDA (splitter)"),
    (5, "GPIO3 SCL", "yellow", (200, 170, 0), "both panels SCL (splitter)"),
    (6, "GND", "black", (0, 0, 0), "panel A GND"),
    (8, "GPIO14 TXD", "green", (20, 150, 60), "director's adapter RXD"),
    (9, "GND", "black", (0, 0, 0), "button A, other leg"),
    (10, "GPIO15 RXD", "white", (150, 150, 150), "director's adapter TXD"),
    (11, "GPIO17", "orange", (230, 120, 0), "button A"),
    (13, "GPIO27", "purple", (130, 50, 170), "STOP button"),
    (14, "GND", "black", (0, 0, 0), "STOP button, other leg"),
    (15, "GPIO22", "brown", (130, 80, 30), "button B"),
    (17, "3V3", "red", (200, 30, 30), "panel B VCC"),
    (20, "GND", "black", (0, 0, 0), "button B, other leg"),
    (25, "GND", "black", (0, 0, 0), "panel B GND"),
    (39, "GND", "black", (0, 0, 0), "director's adapter GND"),
]
#: each part's own pins, as the builder sees them, and the header pin each goes to: (part, how it is
#: seen, [(the part's pin, header pin or None for none)]). The panels' order is the commonest one;
#: VCC and GND swap between makers (hw/README.md, "What catches builders out").
PARTS = [
    ("panel A (0x3C)", "4-pin I2C module, front", [("GND", 6), ("VCC", 1), ("SCL", 5), ("SDA", 3)]),
    ("panel B (0x3D)", "4-pin I2C module, front", [("GND", 25), ("VCC", 17), ("SCL", 5), ("SDA", 3)]),
    ("button A", "30 mm arcade button, below", [("tab", 11), ("tab", 9)]),
    ("button B", "30 mm arcade button, below", [("tab", 15), ("tab", 20)]),
    ("STOP button", "dome button's microswitch", [("NO", 13), ("COM", 14), ("NC", None)]),
]
#: every header pin's name (the Pi's 40-pin header, the same on every model with one)
HEADER = {
    1: "3V3", 2: "5V", 3: "GPIO2", 4: "5V", 5: "GPIO3", 6: "GND", 7: "GPIO4", 8: "GPIO14",
    9: "GND", 10: "GPIO15", 11: "GPIO17", 12: "GPIO18", 13: "GPIO27", 14: "GND", 15: "GPIO22",
    16: "GPIO23", 17: "3V3", 18: "GPIO24", 19: "GPIO10", 20: "GND", 21: "GPIO9", 22: "GPIO25",
    23: "GPIO11", 24: "GPIO8", 25: "GND", 26: "GPIO7", 27: "ID_SD", 28: "ID_SC", 29: "GPIO5",
    30: "GND", 31: "GPIO6", 32: "GPIO12", 33: "GPIO13", 34: "GND", 35: "GPIO19", 36: "GPIO16",
    37: "GPIO26", 38: "GPIO20", 39: "GND", 40: "GPIO21",
}  # fmt: skip  # a table, one pin a line


def _pin_xy(x0, y0, pitch, pin):
    return x0 + (0 if pin % 2 else pitch), y0 + ((pin - 1) // 2) * pitch


def draw():
    font = ImageFont.load_default(size=14)
    small = ImageFont.load_default(size=11)
    image = Image.new("RGB", (980, 900), (255, 255, 255))
    d = ImageDraw.Draw(image)
    d.text(
        (20, 12),
        "tileclock wiring: the Raspberry Pi's 40-pin header from above, BCM numbering "
        "(pin 1: the square pad, at the SD card's end)",
        font=font,
        fill=(0, 0, 0),
    )
    # the header, all 40 pins: two columns, odd on the left, each pin's name beside it; a wired pin
    # filled with its wire's colour and named black, the others grey (the free grounds said so)
    x0, y0, pitch = 130, 60, 26
    colours = {pin: rgb for pin, _, _, rgb, _ in WIRES}
    d.rectangle((x0 - 14, y0 - 14, x0 + pitch + 14, y0 + 19 * pitch + 14), outline=(0, 0, 0), width=2)
    for pin, name in HEADER.items():
        x, y = _pin_xy(x0, y0, pitch, pin)
        used = pin in colours
        d.ellipse((x - 8, y - 8, x + 8, y + 8), outline=(0, 0, 0), width=2 if used else 1,
                  fill=colours.get(pin, (245, 245, 245)))  # fmt: skip  # the drawing call as the eye reads it
        free = name == "GND" and not used
        text = (f"{pin} {name}" + (" free" if free else "")) if pin % 2 == 0 else (
            ("free " if free else "") + f"{name} {pin}")  # fmt: skip  # the drawing call as the eye reads it
        width = d.textlength(text, font=small)
        place = (x - 14 - width, y - 7) if pin % 2 else (x + 14, y - 7)
        d.text(place, text, font=small, fill=(0, 0, 0) if used else (140, 140, 140))
    # the wires, one a row: the pin's colour, then pin, signal, colour and where it goes
    for row, (pin, label, colour, rgb, target) in enumerate(WIRES):
        ty = 60 + row * 34
        d.rectangle((330, ty - 6, 370, ty + 6), fill=rgb, outline=(0, 0, 0))
        d.text(
            (380, ty - 8), f"pin {pin:2d}  {label:11}  {colour:6}  ->  {target}", font=font, fill=(0, 0, 0)
        )
    _draw_parts(d, colours, font, small, 600)
    for row, text in enumerate(
        [
            "Buttons: one leg to the GPIO, the other to GND (internal pull-ups; no resistors). "
            "Panels: 0x3C faces A, 0x3D faces B.",
            "Check each module's own pin order: VCC and GND swap between makers. Pins 2 and 4 are 5 V: "
            "nothing here goes to them.",
            "Free grounds: 30 and 34. SDA and SCL go to both panels: a 1-to-2 Dupont splitter on each.",
        ]
    ):
        d.text((20, 830 + row * 20), text, font=small, fill=(0, 0, 0))
    return image


def _draw_parts(d, colours, font, small, top):
    """Each part's own pins (PARTS), each drawn in the colour of the wire from its header pin."""
    d.text((20, top), "Each part's own pins, and the header pin each goes to:", font=font, fill=(0, 0, 0))
    for column, (part, seen, pins) in enumerate(PARTS):
        x0, y0 = 20 + column * 192, top + 30
        d.text((x0, y0), part, font=font, fill=(0, 0, 0))
        d.text((x0, y0 + 18), seen, font=small, fill=(90, 90, 90))
        body = (x0, y0 + 100, x0 + 176, y0 + 160)
        d.rectangle(body, outline=(0, 0, 0), width=2, fill=(235, 235, 235))
        if part.startswith("panel"):  # the glass, below the pins' names
            d.rectangle((body[0] + 14, body[1] + 22, body[2] - 14, body[3] - 6), fill=(30, 30, 60))
        step = (body[2] - body[0]) // (len(pins) + 1)
        for index, (name, header) in enumerate(pins):
            x = body[0] + step * (index + 1)
            rgb = colours.get(header, (200, 200, 200))
            d.line((x, y0 + 64, x, body[1]), fill=rgb, width=5)
            d.rectangle((x - 4, body[1] - 5, x + 4, body[1] + 2), fill=(120, 120, 120))
            d.text((x - d.textlength(name, font=small) / 2, body[1] + 5), name, font=small, fill=(0, 0, 0))
            said = f"pin {header}" if header else "none"
            high = 0 if index % 2 else 14  # neighbours' labels at two heights: never touching
            d.text((x - d.textlength(said, font=small) / 2, y0 + 36 + high), said, font=small, fill=(0, 0, 0))
    notes = (
        "Panels: SCL and SDA of both on pins 5 and 3 (the splitters). Buttons: either tab to either wire. "
        "STOP: NO and COM, NC left free."
    )
    d.text((20, top + 200), notes, font=small, fill=(0, 0, 0))


if __name__ == "__main__":
    draw().save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wiring.png"))
