"""Draws hw/wiring.png, the clock's wiring diagram, from the pin table below.

Run `python hw/wiring.py` after changing the table; a test checks the picture is up to date.
"""

import os

from PIL import Image, ImageDraw, ImageFont

# (header pin, label, wire colour name, RGB, what it goes to)
WIRES = [
    (1, "3V3", "red", (200, 30, 30), "both panels VCC"),
    (3, "GPIO2 SDA", "blue", (40, 80, 220), "both panels SDA"),
    (5, "GPIO3 SCL", "yellow", (200, 170, 0), "both panels SCL"),
    (6, "GND", "black", (0, 0, 0), "both panels GND"),
    (8, "GPIO14 TXD", "green", (20, 150, 60), "director's adapter RXD"),
    (10, "GPIO15 RXD", "white", (150, 150, 150), "director's adapter TXD"),
    (9, "GND", "black", (0, 0, 0), "button A, other leg"),
    (11, "GPIO17", "orange", (230, 120, 0), "button A"),
    (13, "GPIO27", "purple", (130, 50, 170), "STOP button"),
    (14, "GND", "black", (0, 0, 0), "STOP button, other leg; adapter GND"),
    (15, "GPIO22", "brown", (130, 80, 30), "button B"),
    (20, "GND", "black", (0, 0, 0), "button B, other leg"),
]


def draw():
    font = ImageFont.load_default(size=14)
    small = ImageFont.load_default(size=12)
    image = Image.new("RGB", (900, 560), (255, 255, 255))
    d = ImageDraw.Draw(image)
    d.text(
        (20, 12), "tileclock wiring (Raspberry Pi 40-pin header, BCM numbering)", font=font, fill=(0, 0, 0)
    )
    # the header: two columns of pins, odd on the left
    x0, y0, pitch = 60, 60, 22
    d.rectangle((x0 - 14, y0 - 14, x0 + pitch + 14, y0 + 10 * pitch + 4), outline=(0, 0, 0), width=2)
    for pin in range(1, 21):
        x = x0 + (0 if pin % 2 else pitch)
        y = y0 + ((pin - 1) // 2) * pitch
        d.ellipse((x - 6, y - 6, x + 6, y + 6), outline=(0, 0, 0), fill=(230, 230, 230))
        d.text((x - (40 if pin % 2 else -14), y - 7), str(pin), font=small, fill=(0, 0, 0))
    for row, (pin, label, colour, rgb, target) in enumerate(WIRES):
        x = x0 + (0 if pin % 2 else pitch)
        y = y0 + ((pin - 1) // 2) * pitch
        ty = 60 + row * 38
        d.line((x, y, 260, y, 300, ty, 330, ty), fill=rgb, width=3)
        d.text(
            (340, ty - 8), f"pin {pin:2d}  {label:11}  {colour:6}  ->  {target}", font=font, fill=(0, 0, 0)
        )
    d.text(
        (20, 530),
        "Buttons: one leg to the GPIO, the other to GND (internal pull-ups; no resistors). "
        "Panels: 0x3C faces A, 0x3D faces B.",
        font=small,
        fill=(0, 0, 0),
    )
    return image


if __name__ == "__main__":
    draw().save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wiring.png"))
