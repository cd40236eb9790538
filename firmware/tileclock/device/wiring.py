"""How the two panels are wired to the Pi, and what that costs on the bus (hw/README.md, "Wiring the panels").

`[screens] wiring` in the config picks one; each panel's `[[panel]]` keys
override its choices. The bus time a write takes is worked out from its bytes
and transactions at the bus's clock (there is no Pi here to time it): I2C
clocks 9 bits a byte (8 and the acknowledge), SPI 8, and each transaction
costs about 2 clocks more. Panels on one bus take turns; panels on two buses
are written at once (the loop writes them from two threads when a press wakes
it), so a wake costs the slower bus's time.
"""

#: each wiring's choices for the panel facing A and the one facing B
WIRINGS = {
    # both panels on the Pi's I2C bus (GPIO 2/3), one at 0x3C and one moved to 0x3D
    "i2c-one-bus": {
        "A": {"interface": "i2c", "port": 1, "address": 0x3C},
        "B": {"interface": "i2c", "port": 1, "address": 0x3D},
    },
    # one panel a bus: the second is the kernel's i2c-gpio bus 3 on GPIO 23/24 (any address)
    "i2c-two-buses": {
        "A": {"interface": "i2c", "port": 1, "address": 0x3C},
        "B": {"interface": "i2c", "port": 3, "address": 0x3C},
    },
    # SPI0 (GPIO 10 MOSI, 11 SCLK), one chip select a panel, D/C shared on GPIO 24, a reset line each
    "spi": {
        "A": {"interface": "spi", "port": 0, "spi_device": 0, "dc_pin": 24, "reset_pin": 25},
        "B": {"interface": "spi", "port": 0, "spi_device": 1, "dc_pin": 24, "reset_pin": 5},
    },
}
DEFAULT_WIRING = "i2c-one-bus"
#: clocks a byte takes on each kind of bus
CLOCKS_PER_BYTE = {"i2c": 9, "spi": 8}
#: clocks a transaction adds (start and stop)
CLOCKS_PER_TRANSACTION = 2


def bus_ns(nbytes, transactions, hz, clocks_per_byte=CLOCKS_PER_BYTE["i2c"]):
    """Nanoseconds a bus takes to clock out `nbytes` in `transactions` at `hz` (I2C: 9 clocks a
    byte; SPI: 8, `clocks_per_byte=8`)."""
    return (clocks_per_byte * nbytes + CLOCKS_PER_TRANSACTION * transactions) * 1_000_000_000 // hz


def bus_of(panel):
    """Which bus a panel (a `PanelConfig`) is on: panels on the same one take turns."""
    return panel.interface, panel.port


def bus_time_ns(counts, panels, i2c_hz, spi_hz, at_once=True):
    """The time the panels' buses take for `counts` (`[bytes, transactions]` a panel, in the
    order of `panels`): the panels on each bus add up; separate buses run at once (`at_once`:
    the slowest decides) or one after the other."""
    per_bus = {}
    for (nbytes, transactions), panel in zip(counts, panels, strict=True):
        total = per_bus.setdefault(bus_of(panel), [0, 0])
        total[0] += nbytes
        total[1] += transactions
    times = [
        bus_ns(nbytes, transactions, spi_hz if kind == "spi" else i2c_hz, CLOCKS_PER_BYTE[kind])
        for (kind, _port), (nbytes, transactions) in per_bus.items()
    ]
    if not times:
        return 0
    return max(times) if at_once else sum(times)
