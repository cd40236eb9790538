"""What an SSD1306 or SH1106 holds after the bytes a `RecordingBus` carried, as their datasheets say.

A test drives luma's drivers (ours or luma's own) on a recording bus and reads back the
controller's display RAM from this model, so it checks what the panel shows, not which bytes
were chosen. It is strict: a command byte it does not know, a command cut short, or data with
no window set fails the test.
"""

#: arguments each multi-byte command takes (the rest the drivers send are one byte)
_ARGUMENTS = {
    0x20: 1,  # memory addressing mode
    0x21: 2,  # column range (SSD1306, horizontal or vertical mode)
    0x22: 2,  # page range (idem)
    0x81: 1,  # contrast
    0x8D: 1,  # charge pump (SSD1306)
    0xA8: 1,  # multiplex ratio
    0xAD: 1,  # DC-DC (SH1106)
    0xD3: 1,  # display offset
    0xD5: 1,  # clock divide
    0xD9: 1,  # precharge
    0xDA: 1,  # COM pins
    0xDB: 1,  # VCOM detect
}
_ONE_BYTE = {0xA0, 0xA1, 0xA4, 0xA5, 0xA6, 0xA7, 0xAE, 0xAF, 0xC0, 0xC8, 0x2E}
HORIZONTAL, PAGE = 0, 2


class ControllerRAM:
    """The display RAM of one controller at `address` on a bus: `pages` rows of `columns` bytes."""

    def __init__(self, kind, address=0x3C, pages=8):
        self.kind = kind
        self.address = address
        self.columns = 132 if kind == "sh1106" else 128
        self.ram = [bytearray(self.columns) for _ in range(pages)]
        self.mode = PAGE  # the SSD1306's mode after reset; the SH1106 has no other
        self.window = (0, self.columns - 1, 0, pages - 1)
        self.page = self.column = 0

    def feed(self, writes):
        """Apply `(address, control, payload)` writes, as `RecordingBus.writes` keeps them."""
        for address, control, payload in writes:
            if address != self.address:
                continue
            if control == 0x00:
                self._commands(bytes(payload))
            elif control == 0x40:
                for byte in payload:
                    self._data(byte)
            else:
                raise AssertionError(f"control byte {control:#x}")

    def pages(self, first_column=0, width=128):
        """The RAM's pages as the glass shows them (`first_column` is where its column 0 sits)."""
        return [bytes(page[first_column : first_column + width]) for page in self.ram]

    def _commands(self, stream):
        index = 0
        while index < len(stream):
            op = stream[index]
            count = _ARGUMENTS.get(op, 0)
            args = stream[index + 1 : index + 1 + count]
            assert len(args) == count, f"command {op:#x} cut short"
            index += 1 + count
            if op == 0x20 and self.kind == "ssd1306":
                assert args[0] in (HORIZONTAL, PAGE), f"mode {args[0]}"
                self.mode = args[0]
            elif op == 0x20:
                pass  # luma sends the SSD1306's mode command to the SH1106 too: it has no such mode
            elif op in (0x21, 0x22):
                assert self.kind == "ssd1306"
                if self.mode == HORIZONTAL:  # ignored in page mode
                    first, last, top, bottom = self.window
                    if op == 0x21:
                        first, last = args
                        self.column = first
                    else:
                        top, bottom = args
                        self.page = top
                    self.window = (first, last, top, bottom)
            elif 0xB0 <= op <= 0xB7:
                if self.mode == PAGE:
                    self.page = op & 0x07
            elif op <= 0x0F:
                if self.mode == PAGE:
                    self.column = (self.column & 0xF0) | op
            elif op <= 0x1F:
                if self.mode == PAGE:
                    self.column = (self.column & 0x0F) | (op & 0x0F) << 4
            elif 0x40 <= op <= 0x7F or op in _ONE_BYTE or op in _ARGUMENTS:
                pass  # start line, remaps, display on/off and other settings: not the RAM
            else:
                raise AssertionError(f"unknown command {op:#x}")

    def _data(self, byte):
        assert self.column < self.columns, "data past the last column"
        self.ram[self.page][self.column] = byte
        if self.mode == PAGE:
            self.column += 1
            return
        first, last, top, bottom = self.window
        if self.column < last:
            self.column += 1
        else:
            self.column = first
            self.page = top if self.page >= bottom else self.page + 1
