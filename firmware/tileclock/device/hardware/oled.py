"""SSD1306 and SH1106 panels that send only what changed, a given part of it first.

luma.oled's drivers resend the whole 1024-byte frame on every `display()`.
A clock tick changes a few digits, so these subclasses keep what the panel
holds and send only the columns that changed, with the controller's own
addressing commands, through luma's serial interface objects:

- the SSD1306 stays in luma's horizontal addressing mode and gets windows (a
  column range over a range of pages: one command and one data transaction
  for a whole rectangle, the digits of a tick or the band of a switch);
- the SH1106 has page addressing only: one span of columns a page.

Runs of changed columns closer than the cost of opening another window go out
as one, and so do spans on pages one under the other. `display_part` sends the
changes inside some boxes of the frame first (what says whose turn it is, on a
switch); the next `display` sends the rest.
"""

import errno
import re

from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageDraw

from ..wiring import CLOCKS_PER_BYTE as BUS_CLOCKS_PER_BYTE
from ..wiring import CLOCKS_PER_TRANSACTION

PAGE_ROWS = 8
#: Bytes it costs to open a span on I2C in page addressing: the addressing command's transaction
#: (address, control byte, three command bytes) and the data transaction's address and control
#: byte. A gap of unchanged columns shorter than this is cheaper to send again than to skip.
SPAN_OVERHEAD = 7
#: The same for a window (SSD1306): six command bytes (column range, page range) instead of three.
WINDOW_OVERHEAD = 10
#: Clocks on the I2C wire: 9 a byte (8 bits and the acknowledge), and about 2 a transaction for its
#: start and stop conditions and the bus-free time between transactions (`wiring.py`'s figures).
CLOCKS_PER_BYTE = BUS_CLOCKS_PER_BYTE["i2c"]


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


def _window_cost(top, bottom, first, last):
    """Bus clocks of one window: its overhead bytes, its data, and its two transactions."""
    data = (bottom - top + 1) * (last - first + 1)
    return CLOCKS_PER_BYTE * (WINDOW_OVERHEAD + data) + 2 * CLOCKS_PER_TRANSACTION


def windows(spans):
    """Page spans grouped into windows `(top page, bottom page, first column, last column)`: a span
    joins the window that ends on the page above it when one window costs the bus no more clocks
    than two (the columns it adds to the other pages count), so a digit's four pages go as one."""
    done, open_ = [], []  # open: windows ending on the page before the span's
    page_now = None
    for page, first, last in sorted(spans):
        if page != page_now:
            done += [w for w in open_ if w[1] < page - 1]
            open_ = [w for w in open_ if w[1] >= page - 1]
            page_now = page
        best, saving = None, 0
        for index, (top, bottom, left, right) in enumerate(open_):
            if bottom != page - 1:
                continue
            merged = (top, page, min(left, first), max(right, last))
            gain = _window_cost(top, bottom, left, right) + _window_cost(page, page, first, last)
            gain -= _window_cost(*merged)
            if gain >= saving:
                best, saving = index, gain
        if best is None:
            open_.append((page, page, first, last))
        else:
            top, _, left, right = open_[best]
            open_[best] = (top, page, min(left, first), max(right, last))
    return sorted(done + open_)


#: a byte of a mask page to a whole column: any bit set takes the column's byte
_WHOLE_COLUMN = bytes([0] + [0xFF] * 255)


def _blend(old, new, mask):
    """`old` pages with the columns `mask` marks (any bit set) taken from `new`."""
    blended = []
    for before, after, marked in zip(old, new, mask, strict=True):
        if not any(marked):
            blended.append(before)
            continue
        take = int.from_bytes(marked.translate(_WHOLE_COLUMN), "big")
        keep = ~take & ((1 << 8 * len(before)) - 1)
        mixed = (int.from_bytes(after, "big") & take) | (int.from_bytes(before, "big") & keep)
        blended.append(mixed.to_bytes(len(before), "big"))
    return blended


class _PageDiff:
    """Mixin: `display()` sends only what changed; `display_part()` a part of it first; `forget()`
    makes the next frame go out whole."""

    #: where the glass's column 0 sits in the controller's RAM
    _column_offset = 0
    #: what opening a span costs (bytes), below which a gap of unchanged columns is sent again
    _overhead = SPAN_OVERHEAD

    def forget(self):
        """The panel's content is unknown (after a bus error): send everything next time."""
        self._held = None

    def display(self, image):
        """Send what changed since the last frame (the whole frame if the panel's content is unknown)."""
        assert image.mode == self.mode and image.size == self.size
        self._send(pack_pages(self.preprocess(image)))

    def display_part(self, image, boxes):
        """Send now only the changes inside `boxes` (`(x0, y0, x1, y1)`, inclusive, in the frame's
        own coordinates); the next `display()` sends the rest. Nothing if the content is unknown."""
        assert image.mode == self.mode and image.size == self.size
        held = getattr(self, "_held", None)
        if held is None or not boxes:
            return
        mask = Image.new("1", image.size, 0)
        draw = ImageDraw.Draw(mask)
        for box in boxes:
            draw.rectangle(box, fill=1)
        pages = pack_pages(self.preprocess(image))
        self._send(_blend(held, pages, pack_pages(self.preprocess(mask))))

    def _send(self, pages):
        held = getattr(self, "_held", None)
        try:
            self._send_changes(held, pages)
        except Exception:
            self._held = None
            raise
        self._held = pages

    def _send_changes(self, held, pages):
        for page, first, last in changed_spans(held, pages, self._overhead):
            column = first + self._column_offset
            self.command(0xB0 | page, column & 0x0F, 0x10 | (column >> 4))  # page, column low and high nibble
            self.data(list(pages[page][first : last + 1]))


class PagedSSD1306(_PageDiff, ssd1306):
    """luma's SSD1306 driver in its own horizontal addressing mode, sending windows: a rectangle of
    changed columns over several pages is one command and one data transaction."""

    _overhead = WINDOW_OVERHEAD

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)  # luma's init clears the panel through our `display`
        self._column_offset = self._colstart

    def _send_changes(self, held, pages):
        for top, bottom, first, last in windows(changed_spans(held, pages, self._overhead)):
            offset = self._column_offset
            self.command(0x21, first + offset, last + offset, 0x22, top, bottom)  # column and page ranges
            self.data([byte for page in pages[top : bottom + 1] for byte in page[first : last + 1]])


class PagedSH1106(_PageDiff, sh1106):
    """luma's SH1106 driver (page addressing is its only mode: one span of columns a page)."""

    @property
    def _column_offset(self):
        # its RAM is 132 wide, the glass centred. A property, so luma's start-up clear (inside its
        # __init__) is sent at the offset too: sent at 0, it left the glass's last 2 columns with
        # whatever the RAM powered up with until something was drawn there
        return self._page_address_offset


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
        #: called with (bus, address, control, payload) for every transaction, or None: a test
        #: that follows several buses sees the order of their writes
        self.tap = None
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
        if self.tap is not None:
            self.tap(self, address, control, payload)
        self.transactions += 1
        self.wire_bytes += 2 + len(payload)
        if self.keep:
            self.writes.append((address, control, payload))

    def bytes_on_wire(self):
        """Bytes clocked out: per transaction the address, the control byte and the payload."""
        return self.wire_bytes

    def close(self):
        """Nothing to let go of."""


class RecordingSPI:
    """A `spidev.SpiDev` stand-in for luma's own SPI interface: counts every transfer (a transaction)
    and its bytes (SPI sends no address or control byte: data/command is a GPIO line)."""

    def __init__(self, keep=True):
        self.writes = []  # (port, device, payload bytes), if kept
        self.keep = keep
        self.fail = None
        self.tap = None
        self.transactions = 0
        self.wire_bytes = 0
        self.max_speed_hz = 0
        self.mode = 0
        self.opened = None

    def open(self, port, device):
        self.opened = (port, device)

    def writebytes(self, data):
        if self.fail:
            raise self.fail
        payload = bytes(data)
        if self.tap is not None:
            self.tap(self, self.opened, None, payload)
        self.transactions += 1
        self.wire_bytes += len(payload)
        if self.keep:
            self.writes.append((*self.opened, payload))

    def bytes_on_wire(self):
        return self.wire_bytes

    def close(self):
        """Nothing to let go of."""


class RecordingGPIO:
    """An `RPi.GPIO` stand-in for luma's SPI interface's data/command and reset lines."""

    BCM, OUT, LOW, HIGH = 11, 0, 0, 1

    def __init__(self):
        self.levels = {}

    def setmode(self, mode):
        """(Always BCM numbers.)"""

    def setwarnings(self, on):
        """(Nothing to warn about.)"""

    def setup(self, pin, direction, **kwargs):
        self.levels.setdefault(pin, self.LOW)

    def output(self, pin, level):
        self.levels[pin] = level

    def cleanup(self, pins=None):
        """Nothing to let go of."""


def pi_spi(bus, spec, hz):
    """luma's own SPI interface on a recording `bus`, as it drives the Pi's SPI with spidev."""
    from luma.core.interface.serial import spi

    return spi(
        spi=bus,
        gpio=RecordingGPIO(),
        port=spec.port,
        device=spec.spi_device,
        bus_speed_hz=hz,
        gpio_DC=spec.dc_pin,
        gpio_RST=spec.reset_pin,
    )


class PiI2C:
    """luma's serial interface (`command`, `data`, `cleanup`) for an I2C panel on `bus`, an smbus2 `SMBus`
    or a `RecordingBus`, sending what luma's own `i2c` sends on a Pi, where it opens the bus itself
    with smbus2: each `command()` one SMBus block write (control byte 0x00, 32 bytes at most), each
    `data()` one `i2c_rdwr` message per 4096 bytes (control byte 0x40). Handed a bus, luma's `i2c`
    would split data into 32-byte block writes instead, which would overcount the wire; this object
    stands in for it at luma's public interface, the one its drivers call."""

    CMD, DATA = 0x00, 0x40
    BLOCK = 4096  # luma's block for an i2c_rdwr message

    def __init__(self, bus, address):
        self.bus = bus
        self.address = address

    def command(self, *cmd):
        """Commands, in one block write (as luma: at most 32 bytes, a missing panel a `DeviceNotFoundError`)."""
        from luma.core.error import DeviceNotFoundError

        assert len(cmd) <= 32
        try:
            self.bus.write_i2c_block_data(self.address, self.CMD, list(cmd))
        except OSError as error:
            if error.errno in (errno.EREMOTEIO, errno.EIO):
                raise DeviceNotFoundError(f"I2C device not found on address: 0x{self.address:02X}") from error
            raise

    def data(self, data):
        """Display data, one combined transfer per 4096 bytes."""
        from smbus2 import i2c_msg

        for i in range(0, len(data), self.BLOCK):
            self.bus.i2c_rdwr(i2c_msg.write(self.address, [self.DATA, *data[i : i + self.BLOCK]]))

    def cleanup(self):
        """Let go of the bus."""
        self.bus.close()


def pi_i2c(bus, address):
    """The serial interface of an I2C panel at `address` on `bus`, sending as luma does on a Pi (`PiI2C`)."""
    return PiI2C(bus, address)
