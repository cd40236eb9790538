"""Draws hw/panel-drivers.png: one screen as each panel shows it with the right driver and the wrong one.

Run `python hw/panel_drivers.py`; a test checks the picture is up to date. The panels are models of
the two controllers, read from their datasheets, fed the very bytes tileclock's drivers put on the
bus (device/hardware/oled.py on a RecordingBus, from luma's start-up to the first frame). Each model
fed its own driver's bytes shows the frame exactly (a test checks it), which is all the models are
checked against: no wrong choice has been seen on a real panel. What the models assume:
- SSD1306: 128 columns of memory; `0x20` sets horizontal (0) or page (2) addressing, `0x21`/`0x22`
  a window's columns and pages, through which data runs column by column, then page by page; in
  page addressing `0xB0 | page` and two column nibbles place the data, and a page's column wraps.
  The datasheet gives those three for page addressing only; in horizontal addressing (which luma's
  SH1106 start-up selects on an SSD1306, its `0x20` followed by `0x10`) they are assumed to act the
  same.
- SH1106: 132 columns, the glass showing columns 2 to 129; page addressing only (`0xB0 | page`,
  column nibbles), the column stopping at 131. It has no `0x20`, `0x21`, `0x22`: each of their
  bytes is taken for whatever command it is on the SH1106 (`0x00`-`0x1F` column nibbles,
  `0x40`-`0x7F` the display's start line, `0xB0`-`0xB7` a page).
- Memory nobody wrote holds what it powered up with: random dots.
"""

import os
import random

from PIL import Image, ImageDraw, ImageFont

from tileclock.clock.view import SideView, View
from tileclock.device.config_schema import PanelConfig
from tileclock.device.hardware.oled import RecordingBus
from tileclock.device.hardware.screens import open_device
from tileclock.device.screen.face import render
from tileclock.device.screen.text import Panel

SCALE = 3
HERE = os.path.dirname(os.path.abspath(__file__))
#: commands that take one argument byte, on either controller
ONE_ARGUMENT = {0x81, 0x8D, 0xA8, 0xAD, 0xD3, 0xD5, 0xD9, 0xDA, 0xDB}


class Controller:
    """A panel's controller: its memory, pointers and start line, fed command and data bytes."""

    def __init__(self, kind, seed=1306):
        self.kind = kind
        self.width = 128 if kind == "ssd1306" else 132
        noise = random.Random(seed)
        self.ram = [[noise.randrange(256) for _ in range(self.width)] for _ in range(8)]
        self.page = self.column = self.start_line = 0
        self.mode = 2  # page addressing, as after reset
        self.columns, self.pages = (0, 127), (0, 7)

    def feed(self, control, payload):
        """One I2C transaction: control byte 0x00 for commands, 0x40 for data."""
        if control == 0x40:
            for byte in payload:
                self._write(byte)
            return
        data = list(payload)
        while data:
            self._command(data.pop(0), data)

    def _command(self, byte, rest):
        if self.kind == "ssd1306" and byte in (0x20, 0x21, 0x22):
            if byte == 0x20 and rest:
                self.mode = rest.pop(0) & 0x03
            elif byte == 0x21 and len(rest) >= 2:
                self.columns = (rest.pop(0) & 0x7F, rest.pop(0) & 0x7F)
                self.column = self.columns[0]
            elif byte == 0x22 and len(rest) >= 2:
                self.pages = (rest.pop(0) & 0x07, rest.pop(0) & 0x07)
                self.page = self.pages[0]
        elif byte in ONE_ARGUMENT:
            if rest:
                rest.pop(0)
        elif byte <= 0x0F:
            self.column = (self.column & 0xF0) | byte
        elif byte <= 0x1F:
            self.column = ((byte & 0x0F) << 4) | (self.column & 0x0F)
        elif 0x40 <= byte <= 0x7F:
            self.start_line = byte & 0x3F
        elif 0xB0 <= byte <= 0xB7:
            self.page = byte & 0x07
        # anything else (display on, scan direction, ...): the same for both drivers, or unknown

    def _write(self, byte):
        if self.column < self.width:
            self.ram[self.page][self.column] = byte
        if self.kind == "sh1106":
            self.column = min(self.column + 1, self.width - 1)
        elif self.mode == 0:  # horizontal: through the window, column by column, then page by page
            self.column += 1
            if self.column > self.columns[1]:
                self.column = self.columns[0]
                self.page = self.pages[0] if self.page >= self.pages[1] else self.page + 1
        else:
            self.column = (self.column + 1) % self.width

    def glass(self):
        """What the panel shows: 128x64, from its memory and start line."""
        first = 0 if self.kind == "ssd1306" else 2
        image = Image.new("1", (128, 64), 0)
        pixels = image.load()
        for y in range(64):
            row = (y + self.start_line) % 64
            for x in range(128):
                pixels[x, y] = (self.ram[row // 8][first + x] >> (row % 8)) & 1
        return image


def shown(frame, driver, panel):
    """`frame` as a `panel` controller shows it, sent by tileclock's `driver` from its start-up."""
    bus = RecordingBus()
    device = open_device(PanelConfig(faces="A", driver=driver), bus=bus)
    device.display(frame)
    controller = Controller(panel)
    for _, control, payload in bus.writes:
        controller.feed(control, payload)
    return controller.glass()


def frame():
    """Side A's screen in a running game, A to move."""
    a = SideView(used_ms=0, shown="24:55", pen=0, overtime=False, late=False, lost=False)
    b = SideView(used_ms=0, shown="23:41", pen=0, overtime=False, late=False, lost=False)
    return render(View(state="running", run="A", A=a, B=b), Panel(faces="A"))


def draw():
    picture = frame()
    panels = [
        ("the right driver", picture),
        ('driver = "ssd1306" on an SH1106', shown(picture, "ssd1306", "sh1106")),
        ('driver = "sh1106" on an SSD1306', shown(picture, "sh1106", "ssd1306")),
    ]
    font = ImageFont.load_default(size=13)
    width, height = 128 * SCALE, 64 * SCALE
    image = Image.new("RGB", (3 * width + 4 * 20, height + 60), (255, 255, 255))
    d = ImageDraw.Draw(image)
    for i, (title, glass) in enumerate(panels):
        x = 20 + i * (width + 20)
        d.text((x, 10), title, font=font, fill=(0, 0, 0))
        lit = glass.convert("L").resize((width, height), Image.Resampling.NEAREST)
        blue = Image.merge(
            "RGB", (lit.point(lambda v: 120 if v else 10),) * 2 + (lit.point(lambda v: 255 if v else 20),)
        )
        image.paste(blue, (x, 36))
    note = "models of the two controllers fed tileclock's own bytes (hw/panel_drivers.py), not photographs"
    d.text((20, height + 40), note, font=font, fill=(90, 90, 90))
    return image


if __name__ == "__main__":
    draw().save(os.path.join(HERE, "panel-drivers.png"))
