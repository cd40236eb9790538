"""SSD1306 and SH1106 panels that send only the 8-pixel pages (and columns) that changed.

luma.oled's drivers resend the whole 1024-byte frame on every `display()`.
A clock tick changes a few digits, so these subclasses keep what the panel
holds and send, for each page that differs, only the runs of columns that
changed, with the controller's own page-addressing commands, through luma's
serial interface objects. Two runs closer than the cost of opening a new one
go out as one.
"""

import re

from luma.oled.device import sh1106, ssd1306
from PIL import Image

PAGE_ROWS = 8
#: Bytes it costs to open a span on I2C: the addressing command's transaction (address, control
#: byte, three command bytes) and the data transaction's address and control byte. A gap of
#: unchanged columns shorter than this is cheaper to send again than to skip.
SPAN_OVERHEAD = 7
#: Clocks on the wire: 9 a byte (8 bits and the acknowledge), and about 2 a transaction for its
#: start and stop conditions and the bus-free time between transactions.
CLOCKS_PER_BYTE = 9
CLOCKS_PER_TRANSACTION = 2


def pack_pages(image):
    """A 1-bit image as controller pages: one bytes object a page, a byte a column, bit 0 on top."""
    pages = image.height // PAGE_ROWS
    # flipped upside down and transposed, each row of the result is one column, bottom pixel first:
    # its bytes (packed MSB first) are the column's pages from the last, each with its top row in bit 0
    columns = image.transpose(Image.Transpose.FLIP_TOP_BOTTOM).transpose(Image.Transpose.TRANSPOSE).tobytes()
    return [columns[pages - 1 - page :: pages] for page in range(pages)]


#: a run of columns that changed: non-zero bytes of the XOR of a page's old and new bytes
_CHANGED_RUN = re.compile(rb"[^\x00]+")


def changed_spans(old, new, overhead=SPAN_OVERHEAD):
    """(page, first column, last column) of every run of changed columns in `new` against `old`
    (None: every page whole); runs less than `overhead` unchanged columns apart are one span."""
    spans = []
    for page, data in enumerate(new):
        before = old[page] if old else None
        if before == data:
            continue
        if before is None:
            spans.append((page, 0, len(data) - 1))
            continue
        # XOR as big integers, back to bytes: a zero byte is a column unchanged (C speed: this runs
        # on every wake, a switch's among them, on the Pi's slow core)
        changed = (int.from_bytes(before, "big") ^ int.from_bytes(data, "big")).to_bytes(len(data), "big")
        first = last = None
        for run in _CHANGED_RUN.finditer(changed):
            if last is not None and run.start() - last - 1 >= overhead:
                spans.append((page, first, last))
                first = None
            first = run.start() if first is None else first
            last = run.end() - 1
        spans.append((page, first, last))
    return spans


def bus_ns(nbytes, transactions, hz):
    """Nanoseconds the I2C bus takes to clock out `nbytes` in `transactions` at `hz`."""
    return (CLOCKS_PER_BYTE * nbytes + CLOCKS_PER_TRANSACTION * transactions) * 1_000_000_000 // hz


class _PageDiff:
    """Mixin: `display()` sends only changed spans, in page addressing mode; `forget()` makes the
    next frame go out whole."""

    #: where the glass's column 0 sits in the controller's RAM
    _column_offset = 0

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

    def _send_span(self, page, first, last, data):
        column = first + self._column_offset
        self.command(0xB0 | page, column & 0x0F, 0x10 | (column >> 4))  # page, column low and high nibble
        self.data(list(data))


class PagedSSD1306(_PageDiff, ssd1306):
    """luma's SSD1306 driver, switched to page addressing (three command bytes a span, against six
    for a horizontal-mode window)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._column_offset = self._colstart
        self.command(0x20, 0x02)  # memory addressing mode: page
        self.forget()  # luma cleared it in horizontal mode: the first frame goes out whole, in page mode


class PagedSH1106(_PageDiff, sh1106):
    """luma's SH1106 driver (page addressing is its only mode)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._column_offset = self._page_address_offset  # its RAM is 132 wide, the glass centred


DRIVERS = {"ssd1306": PagedSSD1306, "sh1106": PagedSH1106}


class RecordingBus:
    """An smbus2 `SMBus` stand-in that counts (and, with `keep`, keeps) every write, for tests and
    for counting bytes on the wire.

    A byte on the wire is counted for the address and the control byte of every transaction.
    """

    def __init__(self, keep=True):
        self.writes = []  # (address, control byte, payload bytes), if kept
        self.keep = keep
        self.fail = None  # set to an OSError to make every write fail
        self.transactions = 0
        self.wire_bytes = 0

    def write_i2c_block_data(self, address, register, data):
        if self.fail:
            raise self.fail
        self._note(address, register, bytes(data))

    def i2c_rdwr(self, *messages):
        """smbus2's combined transfer, which luma uses for data on a bus it opened itself."""
        if self.fail:
            raise self.fail
        for message in messages:
            data = bytes(message)
            self._note(message.addr, data[0], data[1:])

    def _note(self, address, control, payload):
        self.transactions += 1
        self.wire_bytes += 2 + len(payload)
        if self.keep:
            self.writes.append((address, control, payload))

    def bytes_on_wire(self):
        """Bytes clocked out: per transaction the address, the control byte and the payload."""
        return self.wire_bytes

    def close(self):
        """Nothing to let go of."""


def pi_i2c(bus, address):
    """luma's I2C interface on `bus`, sending as it does on a Pi, where it opens the bus itself with
    smbus2: commands as SMBus block writes, each `data()` as one `i2c_rdwr` message (luma splits
    data into 32-byte blocks only on a bus it was handed, which would overcount the wire)."""
    from luma.core.interface.serial import i2c
    from smbus2 import i2c_msg

    interface = i2c(bus=bus, address=address)
    interface._managed = True  # luma sets these two only for a bus it opened itself
    interface._i2c_msg_write = i2c_msg.write
    return interface
