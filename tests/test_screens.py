"""The panels: golden frames, the bytes on the bus, burn-in care, frames on disk.

Golden frames live in tests/golden/. To change the layout on purpose, run
`TILECLOCK_REGOLD=1 make test ARGS=tests/test_screens.py`, look at the new PNGs, and commit them.
"""

import os
import random
from copy import deepcopy
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from luma.core.interface.serial import i2c
from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageDraw

from conftest import tap
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config import Config
from tileclock.device.hardware.oled import (
    SPAN_OVERHEAD,
    PagedSH1106,
    PagedSSD1306,
    RecordingBus,
    bus_ns,
    changed_spans,
    pack_pages,
    pi_i2c,
)
from tileclock.device.hardware.screens import PanelOutput
from tileclock.device.idle import IdlePolicy
from tileclock.device.render import BIG, MARK_ROOM, SMALL, TIME_RIGHT, Panel, draw_text, font, render
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
S = NS_PER_S


def scenes():
    """Named views covering every state a player or director meets."""
    clock = GameClock(PROFILES["naspa"], times_s={"B": 30})
    clock.new_game(0)
    yield "ready", clock.view(0)
    tap(clock, "A", 0)  # B runs
    yield "running", clock.view(12 * S)
    clock.advance(42 * S)
    tap(clock, "B", 42)  # B is 12 s over; A runs
    clock.advance(1625 * S)
    yield "overtime", clock.view(1625 * S)
    # the round's last minutes beside an opponent in overtime with a penalty: on B's panel with A's
    # pointer, on A's with its turn mark
    yield "round_overtime", replace(clock.view(1625 * S), round_left_s=300)
    tap(clock, "STOP", 1626)
    yield "paused", clock.view(1627 * S)
    clock.edge("STOP", True, 1630 * S)
    tap(clock, "B", 1631)
    clock.advance(1632 * S)  # B's release is taken once it has held open 5 ms
    yield "correction", clock.view(1632 * S)
    clock.edge("STOP", False, 1634 * S)
    clock.edge("STOP", True, 16345 * S // 10)
    clock.advance(1637 * S)
    yield "hint", clock.view(1637 * S)  # STOP held 2.5 s on a stopped clock: release asks to confirm
    clock.edge("STOP", False, 1638 * S)
    clock.advance(1639 * S)
    yield "confirm_end", clock.view(1639 * S)  # a STOP press within 5 s would end the game
    clock.advance(1644 * S)  # not confirmed: nothing changes
    yield "link_down", replace(clock.view(1644 * S), faults=("serial",))
    tap(clock, "A", 1645)
    clock.advance(3000 * S)
    yield "lost_on_time", clock.view(3000 * S)
    late = GameClock(PROFILES["naspa"])
    late.new_game(0)
    late.edge("STOP", True, 0)
    tap(late, "B", 0.9)  # STOP held, B tapped: A is late from B's press, 0.9 s
    late.edge("STOP", False, int(1.5 * S))
    late.advance(91 * S)
    yield "late_start", late.view(91 * S)
    school = GameClock(PROFILES["school"])
    school.new_game(0)
    school.edge("STOP", True, 0)
    tap(school, "A", 0.9)  # B is late from 0.9 s: its absence counts up, its 25:00 is untouched
    school.edge("STOP", False, int(1.5 * S))
    school.advance(391 * S)
    yield "absent", school.view(391 * S)
    round_ = GameClock(PROFILES["school"])
    round_.new_game(0)
    tap(round_, "A", 0)  # the round starts: B runs
    tap(round_, "B", 20 * 60)
    round_.advance(45 * 60 * S)
    yield "round_left", round_.view(45 * 60 * S)  # the round's last minutes show on the panels
    round_.advance(50 * 60 * S + S)
    yield "round_over", round_.view(50 * 60 * S + S)
    call = GameClock(PROFILES["naspa"])  # a call to the director (docs/player-guide.md)
    call.new_game(0)
    tap(call, "B", 0)
    tap(call, "STOP", 70)
    for t_s in (80, 80.5, 81):  # STOP tapped three times on the stopped clock
        tap(call, "STOP", t_s)
    call.advance(88 * S)
    yield "called", call.view(88 * S)
    call.answer_call(90 * S, call.play.calls.open.seq, "taken")
    yield "call_taken", call.view(90 * S)
    corrected = deepcopy(call)  # the same board, the director corrects B before closing the call
    call.answer_call(200 * S, call.play.calls.open.seq, "done")
    yield "call_done", call.view(200 * S)
    corrected.adjust(100 * S, "B", 60_000)
    yield "call_corrected", corrected.view(100 * S)  # the correction on top, the call on its line
    corrected.answer_call(200 * S, corrected.play.calls.open.seq, "done")
    yield "call_done_corrected", corrected.view(200 * S)  # CALL DONE never hides B +1:00
    school_call = GameClock(PROFILES["school"])  # the round's last minutes and an open call
    school_call.new_game(0)
    tap(school_call, "A", 0)
    tap(school_call, "STOP", 30 * 60)
    for t_s in (30 * 60 + 5, 30 * 60 + 5.5, 30 * 60 + 6):
        tap(school_call, "STOP", t_s)
    school_call.advance(45 * 60 * S)
    yield "call_round", school_call.view(45 * 60 * S)
    # the hall's score link held (the final screen says how to show it), then shown as a QR code
    link = ("HTTP://192.168.1.20:8080/S/12", "7Q4K2M9X")
    yield "score_link", replace(round_.view(50 * 60 * S + S), score_link=link)
    yield "score_code", replace(round_.view(50 * 60 * S + S), score_link=link, code=("A", "B"))


SCENES = dict(scenes())


@pytest.mark.parametrize("name", sorted(SCENES))
@pytest.mark.parametrize("side", ["A", "B"])
def test_frames_match_the_golden_pngs(name, side):
    frame = render(SCENES[name], Panel(faces=side))
    path = os.path.join(GOLDEN, f"{name}-{side}.png")
    if os.environ.get("TILECLOCK_REGOLD"):
        frame.save(path)
    golden = Image.open(path).convert("1")
    assert frame.tobytes() == golden.tobytes(), f"{path} differs; see the module docstring"


@pytest.mark.parametrize("name", ["call_round", "round_overtime"])
@pytest.mark.parametrize("side", ["A", "B"])
def test_the_round_s_time_is_drawn_whole_beside_a_wide_opponent_text(name, side):
    view = SCENES[name]  # the opponent's time with a penalty, and its pointer on one of them
    alone = Image.new("1", (128, 64))
    draw_text(alone, (MARK_ROOM if view.run == side else 0, 0), "ROUND 5:00", SMALL)
    box = alone.getbbox()
    box = (box[0], box[1], box[2] + 2, box[3])  # and clear of the opponent's text after it
    assert render(view, Panel(faces=side)).crop(box).tobytes() == alone.crop(box).tobytes()


def test_own_time_is_in_digits_at_least_24_pixels_tall():
    frame = render(SCENES["running"], Panel(faces="B"))
    # the big time sits between rows 12 and 47; its ink must span at least 24 rows
    band = frame.crop((0, 12, 101, 48))
    top, bottom = band.getbbox()[1], band.getbbox()[3]
    assert bottom - top >= 24


def test_the_running_side_is_a_solid_band_and_the_other_is_not():
    view = SCENES["running"]  # B runs
    running, waiting = render(view, Panel(faces="B")), render(view, Panel(faces="A"))

    def lit(image):
        return sum(bin(byte).count("1") for byte in image.crop((0, 50, 128, 64)).tobytes())

    assert lit(running) > 0.6 * 128 * 14 > 0.2 * 128 * 14 > lit(waiting)


def test_digits_do_not_move_as_the_seconds_change():
    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    tap(clock, "B", 0)
    # the big time is right-aligned in equal-width digits, so its colon stays put
    colon = (TIME_RIGHT - 2 * font(BIG).getlength("0") - font(BIG).getlength(":"), 12, TIME_RIGHT - 40, 48)
    crops = {render(clock.view(t * S), Panel(faces="A")).crop(colon).tobytes() for t in range(0, 1600, 7)}
    assert len(crops) == 1 and any(next(iter(crops)))
    assert len({font(BIG).getlength(digit) for digit in "0123456789"}) == 1


@given(
    text=st.text(alphabet="0123456789:- ABLOSTPYURNE+", max_size=12),
    size=st.sampled_from([SMALL, BIG]),
    anchor=st.sampled_from(["la", "ra", "rs", "mm"]),
    x=st.integers(-20, 140),
    y=st.integers(-20, 70),
    fill=st.sampled_from([0, 1]),
    seed=st.integers(0, 3),
)
def test_text_drawn_from_the_cache_is_pixel_for_pixel_pillows(text, size, anchor, x, y, fill, seed):
    background = random_frame(seed)
    ours, pillows = background.copy(), background.copy()
    draw_text(ours, (x, y), text, size, fill=fill, anchor=anchor)
    ImageDraw.Draw(pillows).text((x, y), text, font=font(size), fill=fill, anchor=anchor)
    assert ours.tobytes() == pillows.tobytes()


def random_frame(seed):
    rng = random.Random(seed)
    image = Image.new("1", (128, 64))
    for _ in range(1500):
        image.putpixel((rng.randrange(128), rng.randrange(64)), 1)
    return image


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


def test_after_a_bus_error_the_next_frame_goes_out_whole():
    bus = RecordingBus()
    output = PanelOutput(Panel("A"), PagedSSD1306(i2c(bus=bus)))
    view = SCENES["running"]
    output.show(view)
    bus.fail = OSError(121, "Remote I/O error")
    output.show(SCENES["overtime"])
    assert output.failing and output.faults == 1
    bus.fail = None
    bus.writes.clear()
    output.show(SCENES["overtime"])
    assert output.failing is None
    assert sum(len(p) for _, control, p in bus.writes if control == 0x40) == 1024


class FakePanel:
    def __init__(self):
        self.calls = []

    def contrast(self, level):
        self.calls.append(("contrast", level))

    def show(self):
        self.calls.append(("show",))

    def hide(self):
        self.calls.append(("hide",))

    def display(self, image):
        self.calls.append(("display", image))


def test_an_idle_panel_dims_moves_goes_dark_and_wakes():
    policy = IdlePolicy(dim_after_s=300, shift_every_s=60, blank_after_s=1800, dim_contrast=8)
    device = FakePanel()
    output = PanelOutput(Panel("A"), device, contrast=0xCF, idle=policy)
    view = SCENES["paused"]
    awake = output.show(view, idle_ns=10 * S)
    assert ("contrast", 0xCF) in device.calls
    dimmed = output.show(view, idle_ns=300 * S)
    assert device.calls[-3:-1] == [("contrast", 8), ("show",)]
    moved = output.show(view, idle_ns=360 * S)
    assert awake.getbbox() != dimmed.getbbox() != moved.getbbox()
    output.show(view, idle_ns=1800 * S)
    assert ("hide",) in device.calls
    output.show(view, idle_ns=None)
    assert device.calls[-3:-1] == [("contrast", 0xCF), ("show",)]


def lit(bus):
    """Whether the panel on `bus` was last told to light (DISPLAYON) rather than go dark (DISPLAYOFF)."""
    switches = [
        payload for _, control, payload in bus.writes if control == 0x00 and payload in (b"\xae", b"\xaf")
    ]
    return switches[-1] == b"\xaf"


def test_a_press_wakes_a_dark_panel():
    sim = Simulator(Config())
    tap(sim, "B", 0)
    tap(sim, "STOP", 10)
    sim.run_to(40 * 60 * S)
    assert not any(lit(bus) for bus in sim.buses.values())  # 30 idle minutes after the stop: dark
    tap(sim, "STOP", 40 * 60)  # a short STOP on a stopped clock changes nothing in the game...
    assert all(lit(bus) for bus in sim.buses.values()) and sim.clock.state == "paused"  # ...but wakes both
    sim.run_to(80 * 60 * S)
    assert not any(lit(bus) for bus in sim.buses.values())
    sim.serial_lines()
    tap(sim, "A", 80 * 60)  # the press that wakes dark panels only wakes them (docs/rules.md)
    assert all(lit(bus) for bus in sim.buses.values()) and sim.clock.state == "paused"
    assert [(r["ev"], r["reason"]) for r in map(unframe, sim.serial_lines())] == [("ignored", "wake")]
    tap(sim, "A", 80 * 60 + 1)  # the next press plays
    assert sim.clock.state == "running"
    sim.close()


def test_frames_are_written_as_pngs(sim, tmp_path):
    sim("0 press B\n3 press A\n5 until\n", "--frames", str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    assert "t000000000-A.png" in names and "t000000000.png" in names
    assert "t000003000-B.png" in names  # the switch
    assert "t000004000-B.png" in names  # B's clock ticks to 24:59 after a second of its own
    assert Image.open(tmp_path / "t000003000-B.png").size == (128, 64)


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
