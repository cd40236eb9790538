"""The panels' bytes on the bus: what luma would send, only the windows that changed, the SH1106's
page commands, a mounting turned half a turn, and what a frame costs in bus time."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from luma.core.interface.serial import i2c
from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageDraw

from support.panel_frames import random_frame
from tileclock.device.hardware.oled import (
    SPAN_OVERHEAD,
    PagedSH1106,
    PagedSSD1306,
    RecordingBus,
    changed_spans,
    pack_pages,
    pi_i2c,
)
from tileclock.device.wiring import bus_ns


@pytest.mark.parametrize("ours, luma", [(PagedSSD1306, ssd1306), (PagedSH1106, sh1106)])
def test_a_whole_frame_is_byte_for_byte_what_luma_sends(ours, luma):
    image = random_frame(1)
    reference_bus, our_bus = RecordingBus(), RecordingBus()
    reference, device = luma(i2c(bus=reference_bus)), ours(i2c(bus=our_bus))
    reference_bus.writes.clear()
    our_bus.writes.clear()
    reference.display(image)
    device.forget()
    device.display(image)
    if luma is sh1106:
        assert our_bus.writes == reference_bus.writes
    else:  # luma sends one window for the whole frame; we send one a page, with the same pixels

        def data(bus):
            return b"".join(p for _, control, p in bus.writes if control == 0x40)

        assert data(our_bus) == data(reference_bus) == b"".join(pack_pages(image))


def test_an_unchanged_frame_sends_nothing_and_a_changed_digit_sends_only_its_window():
    bus = RecordingBus()
    device = PagedSSD1306(i2c(bus=bus))
    first = random_frame(2)
    device.display(first)
    bus.writes.clear()
    device.display(first.copy())
    assert bus.writes == []
    second = first.copy()
    for x in range(40, 44):
        second.putpixel((x, 20), 1 - second.getpixel((x, 20)))  # page 2, columns 40-43
    device.display(second)
    assert (
        bus.writes
        == [
            (0x3C, 0x00, bytes([0x21, 40, 43, 0x22, 2, 2])),  # columns 40-43 of page 2: a window
            (0x3C, 0x40, bytes(pack_pages(second)[2][40:44])),
        ]
    )


def test_changed_runs_far_apart_go_as_two_windows_and_close_ones_as_one():
    bus = RecordingBus()
    device = PagedSSD1306(pi_i2c(bus, 0x3C))
    blank = Image.new("1", (128, 64))
    device.display(blank)
    frame = blank.copy()
    for x in (10, 12, 60):  # 10 and 12 are one unchanged column apart; 60 is far off
        frame.putpixel((x, 0), 1)
    bus.writes.clear()
    device.display(frame)
    assert [(control, payload) for _, control, payload in bus.writes] == [
        (0x00, bytes([0x21, 10, 12, 0x22, 0, 0])),
        (0x40, bytes([1, 0, 1])),
        (0x00, bytes([0x21, 60, 60, 0x22, 0, 0])),
        (0x40, bytes([1])),
    ]
    # every page changed: one window, as luma does on the Pi's own bus (its data one transaction)
    bus.writes.clear()
    transactions, wire_bytes = bus.transactions, bus.bytes_on_wire()
    device.display(Image.new("1", (128, 64), 1))
    assert [len(payload) for _, control, payload in bus.writes if control == 0x40] == [1024]
    assert bus.transactions - transactions == len(bus.writes) == 2
    assert bus.bytes_on_wire() - wire_bytes == (2 + 6) + (2 + 1024)


def test_a_digit_over_four_pages_goes_as_one_window_on_the_ssd1306_and_four_spans_on_the_sh1106():
    blank = Image.new("1", (128, 64))
    frame = blank.copy()
    ImageDraw.Draw(frame).rectangle((70, 20, 83, 45), fill=1)  # pages 2-5, columns 70-83
    sent = {}
    for driver in (PagedSSD1306, PagedSH1106):
        bus = RecordingBus()
        device = driver(pi_i2c(bus, 0x3C))
        device.display(blank)
        bus.writes.clear()
        device.display(frame)
        sent[driver] = [(control, len(payload)) for _, control, payload in bus.writes]
    assert sent[PagedSSD1306] == [(0x00, 6), (0x40, 4 * 14)]
    assert sent[PagedSH1106] == [(0x00, 3), (0x40, 14)] * 4


def test_bus_time_comes_from_the_bytes_and_transactions_at_the_bus_speed():
    # 100 bytes in 4 transactions: 908 clocks, 2.27 ms at 400 kHz, four times that at 100 kHz
    assert bus_ns(100, 4, 400_000) == 2_270_000 and bus_ns(100, 4, 100_000) == 9_080_000


def test_sh1106_spans_use_page_and_column_commands_with_its_offset():
    bus = RecordingBus()
    device = PagedSH1106(i2c(bus=bus))
    frame = Image.new("1", (128, 64))
    frame.putpixel((100, 63), 1)  # page 7, column 100
    bus.writes.clear()
    device.display(frame)
    column = 100 + 2
    assert bus.writes == [
        (0x3C, 0x00, bytes([0xB7, column & 0x0F, 0x10 | column >> 4])),
        (0x3C, 0x40, b"\x80"),
    ]


def test_a_mounting_rotated_half_a_turn_sends_the_frame_upside_down():
    bus = RecordingBus()
    device = PagedSSD1306(i2c(bus=bus), rotate=2)
    frame = Image.new("1", (128, 64))
    frame.putpixel((0, 0), 1)
    device.display(Image.new("1", (128, 64)))  # the panel holds a blank frame
    bus.writes.clear()
    device.display(frame)
    assert (
        bus.writes[0][2] == bytes([0x21, 127, 127, 0x22, 7, 7]) and bus.writes[1][2] == b"\x80"
    )  # page 7, column 127


@given(
    st.lists(st.binary(min_size=16, max_size=16), min_size=2, max_size=2),
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 15), st.integers(0, 255)), max_size=12),
)
def test_spans_send_every_changed_column_and_skip_only_gaps_worth_a_new_span(old, changes):
    """docs/screens.md: only the runs of changed columns go out, and two runs closer than a new
    span's cost go as one. Whatever changed, the panel ends up holding the new frame."""
    new = [bytearray(page) for page in old]
    for page, column, value in changes:
        new[page][column] = value
    new = [bytes(page) for page in new]
    spans = changed_spans(old, new)
    for page in range(2):
        changed = [x for x in range(16) if old[page][x] != new[page][x]]
        mine = sorted((first, last) for p, first, last in spans if p == page)
        covered = [x for first, last in mine for x in range(first, last + 1)]
        assert set(changed) <= set(covered) and len(covered) == len(set(covered))
        for first, last in mine:  # each span starts and ends on a change...
            assert first in changed and last in changed
            inside = [x for x in changed if first <= x <= last]
            assert all(b - a - 1 < SPAN_OVERHEAD for a, b in zip(inside, inside[1:], strict=False))
        for (_, last), (first, _) in zip(mine, mine[1:], strict=False):  # ...and a gap is worth a span
            assert first - last - 1 >= SPAN_OVERHEAD
