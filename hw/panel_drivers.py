"""Draws hw/panel-drivers.png: one screen as each panel shows it with the right and the wrong driver.

Run `python hw/panel_drivers.py`; a test checks the picture is up to date. It is a model from the two
controllers' datasheets, not a photograph: both drivers write page by page with the page-addressing
commands (device/hardware/oled.py), and the only difference is the column the frame starts at.
- The SH1106 has 132 columns of memory; the glass shows columns 2 to 129, so the sh1106 driver starts
  at column 2. Driven as an SSD1306 (from column 0) the picture sits 2 columns left, its first two
  columns off the glass, and the last 2 columns of glass show memory nobody wrote: power-on noise.
- The SSD1306 has 128 columns; driven as an SH1106 (from column 2) each page's last 2 columns wrap
  round to columns 0 and 1 (page addressing wraps within the page): the picture sits 2 columns
  right, with its right edge at the left.
"""

import os
import random

from PIL import Image, ImageDraw, ImageFont

from tileclock.clock.view import SideView, View
from tileclock.device.render import Panel, render

SCALE = 3
HERE = os.path.dirname(os.path.abspath(__file__))


def frame():
    """Side A's screen in a running game, A to move."""
    a = SideView(used_ms=0, shown="24:55", pen=0, overtime=False, late=False, lost=False)
    b = SideView(used_ms=0, shown="23:41", pen=0, overtime=False, late=False, lost=False)
    return render(View(state="running", run="A", A=a, B=b), Panel(faces="A"))


def ssd1306_driver_on_sh1106(image):
    """The glass of an SH1106 written from column 0: memory columns 2-129 shown."""
    ram = Image.new("1", (132, 64), 0)
    noise = random.Random(1106)  # memory nobody wrote holds what it powered up with
    ram.putdata([noise.random() < 0.5 for _ in range(132 * 64)])
    ram.paste(image, (0, 0))
    return ram.crop((2, 0, 130, 64))


def sh1106_driver_on_ssd1306(image):
    """The glass of an SSD1306 written from column 2: each page's last columns wrap to column 0."""
    glass = Image.new("1", image.size, 0)
    glass.paste(image.crop((0, 0, 126, 64)), (2, 0))
    glass.paste(image.crop((126, 0, 128, 64)), (0, 0))
    return glass


def draw():
    right = frame()
    panels = [
        ("the right driver", right),
        ('driver = "ssd1306" on an SH1106', ssd1306_driver_on_sh1106(right)),
        ('driver = "sh1106" on an SSD1306', sh1106_driver_on_ssd1306(right)),
    ]
    font = ImageFont.load_default(size=13)
    width, height = 128 * SCALE, 64 * SCALE
    image = Image.new("RGB", (3 * width + 4 * 20, height + 60), (255, 255, 255))
    d = ImageDraw.Draw(image)
    for i, (title, glass) in enumerate(panels):
        x = 20 + i * (width + 20)
        d.text((x, 10), title, font=font, fill=(0, 0, 0))
        lit = glass.convert("L").resize((width, height), Image.Resampling.NEAREST)
        shown = Image.merge(
            "RGB", (lit.point(lambda v: 120 if v else 10),) * 2 + (lit.point(lambda v: 255 if v else 20),)
        )
        image.paste(shown, (x, 36))
    d.text(
        (20, height + 40),
        "a model from the controllers' datasheets (hw/panel_drivers.py), not a photograph",
        font=font,
        fill=(90, 90, 90),
    )
    return image


if __name__ == "__main__":
    draw().save(os.path.join(HERE, "panel-drivers.png"))
