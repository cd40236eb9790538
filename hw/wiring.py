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
    image = Image.new("RGB", (980, 680), (255, 255, 255))
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
    for row, text in enumerate(
        [
            "Buttons: one leg to the GPIO, the other to GND (internal pull-ups; no resistors). "
            "Panels: 0x3C faces A, 0x3D faces B.",
            "Check each module's own pin order: VCC and GND swap between makers. Pins 2 and 4 are 5 V: "
            "nothing here goes to them.",
            "Free grounds: 30 and 34. SDA and SCL go to both panels: a 1-to-2 Dupont splitter on each.",
        ]
    ):
        d.text((20, 610 + row * 20), text, font=small, fill=(0, 0, 0))
    return image


if __name__ == "__main__":
    draw().save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wiring.png"))
