"""SSD1306 and SH1106 panels that send only the 8-pixel pages (and columns) that changed.

luma.oled's drivers resend the whole 1024-byte frame on every `display()`.
A clock tick changes a few digits, so these subclasses keep what the panel
holds and send, for each page that differs, only the span of columns from the
first to the last changed byte, with the controller's own addressing commands,
through luma's serial interface objects.
"""

from luma.oled.device import sh1106, ssd1306
from PIL import Image

PAGE_ROWS = 8


def pack_pages(image):
    """A 1-bit image as controller pages: one bytes object a page, a byte a column, bit 0 on top."""
    pages = []
    for top in range(0, image.height, PAGE_ROWS):
        strip = image.crop((0, top, image.width, top + PAGE_ROWS))
        # each column becomes a row of 8 pixels; packing is MSB first, the panel wants the top row in bit 0
        columns = strip.transpose(Image.Transpose.TRANSPOSE).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        pages.append(columns.tobytes())
    return pages


def changed_spans(old, new):
    """(page, first column, last column) of every page of `new` that differs from `old` (None: all)."""
    spans = []
    for page, data in enumerate(new):
        before = old[page] if old else None
        if before == data:
            continue
        if before is None:
            spans.append((page, 0, len(data) - 1))
            continue
        changed = [x for x in range(len(data)) if data[x] != before[x]]
        spans.append((page, changed[0], changed[-1]))
    return spans


class _PageDiff:
    """Mixin: `display()` sends only changed spans; `forget()` makes the next frame go out whole."""

    def forget(self):
        """The panel's content is unknown (after a bus error): send everything next time."""
        self._held = None

    def display(self, image):
        assert image.mode == self.mode and image.size == self.size
        pages = pack_pages(self.preprocess(image))
        held = getattr(self, "_held", None)
        try:
            for page, first, last in changed_spans(held, pages):
                self._send_span(page, first, last, pages[page][first : last + 1])
        except Exception:
            self._held = None
            raise
        self._held = pages


class PagedSSD1306(_PageDiff, ssd1306):
    """luma's SSD1306 driver, sending changed spans with horizontal addressing windows."""

    def _send_span(self, page, first, last, data):
        self.command(
            self._const.COLUMNADDR, self._colstart + first, self._colstart + last,
            self._const.PAGEADDR, page, page,
        )  # fmt: skip
        self.data(list(data))


class PagedSH1106(_PageDiff, sh1106):
    """luma's SH1106 driver, sending changed spans with page addressing."""

    def _send_span(self, page, first, last, data):
        column = first + self._page_address_offset  # the SH1106's RAM is 132 wide, the glass centred
        self.command(0xB0 | page, column & 0x0F, 0x10 | (column >> 4))
        self.data(list(data))


DRIVERS = {"ssd1306": PagedSSD1306, "sh1106": PagedSH1106}


class RecordingBus:
    """An SMBus stand-in that keeps every write, for tests and for counting bytes on the wire."""

    def __init__(self):
        self.writes = []  # (address, control byte, payload bytes)
        self.fail = None  # set to an OSError to make every write fail

    def write_i2c_block_data(self, address, register, data):
        if self.fail:
            raise self.fail
        self.writes.append((address, register, bytes(data)))

    def bytes_on_wire(self):
        """Bytes clocked out: per transaction the address, the control byte and the payload."""
        return sum(2 + len(payload) for _, _, payload in self.writes)
