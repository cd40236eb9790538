"""The panels' frames: golden frames for every state, and what a player reads on them (the round's
time whole, the digits' size and place, the turn band), drawn as Pillow draws text.

Golden frames live in tests/golden/. To change the layout on purpose, run
`TILECLOCK_REGOLD=1 make test ARGS=tests/test_screens.py`, look at the new PNGs, and commit them.
The bytes those frames cost on the bus: test_panel_bus.py; the panels kept, dimmed and woken:
test_panel_output.py.
"""

import os
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from conftest import tap
from support.panel_frames import random_frame
from support.scenes import SCENES, S
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.device.screen.face import MARK_ROOM, TIME_RIGHT, band_text, render
from tileclock.device.screen.text import BIG, SMALL, TIME_DRAWN, TIME_TEXT, Panel, draw_text, font

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


@pytest.mark.parametrize("name", sorted(SCENES))
@pytest.mark.parametrize("side", ["A", "B"])
def test_frames_match_the_golden_pngs(name, side):
    frame = render(SCENES[name], Panel(faces=side))
    path = os.path.join(GOLDEN, f"{name}-{side}.png")
    if os.environ.get("TILECLOCK_REGOLD"):
        frame.save(path)
    golden = Image.open(path).convert("1")
    assert frame.tobytes() == golden.tobytes(), f"{path} differs; see the module docstring"


#: the scenes drawn on the large-digits face too (`Panel.large`), each a golden `large_NAME-SIDE.png`
LARGE_SCENES = ("ready", "running", "overtime", "paused", "called", "lost_on_time", "round_left", "hint")


@pytest.mark.parametrize("name", LARGE_SCENES)
@pytest.mark.parametrize("side", ["A", "B"])
def test_large_digit_frames_match_the_golden_pngs(name, side):
    frame = render(SCENES[name], Panel(faces=side, large=True))
    path = os.path.join(GOLDEN, f"large_{name}-{side}.png")
    if os.environ.get("TILECLOCK_REGOLD"):
        frame.save(path)
    golden = Image.open(path).convert("1")
    assert frame.tobytes() == golden.tobytes(), f"{path} differs; see the module docstring"


def lit_rows(frame, top, bottom):
    """The rows from `top` to `bottom` (inclusive) with a lit pixel."""
    return [y for y in range(top, bottom + 1) if any(frame.getpixel((x, y)) for x in range(frame.width))]


@pytest.mark.parametrize("name", LARGE_SCENES)
@pytest.mark.parametrize("side", ["A", "B"])
def test_the_large_face_shows_its_own_time_bigger_the_turn_and_overtime_unmistakable(name, side):
    view = SCENES[name]
    large, normal = (render(view, Panel(faces=side, large=large)) for large in (True, False))
    mine = view.side(side).shown
    over = mine.startswith("-")
    field = [[large.getpixel((x, y)) for x in range(large.width)] for y in range(13, 47)]
    if over:  # overtime: the time's field is lit, the digits cut out of it
        assert all(row[0] and row[-1] for row in field)
    else:  # the digits: taller than the normal face's 24 px, and wider than its time's
        tall = lit_rows(large, 12, 47)
        assert tall[-1] - tall[0] + 1 >= 30 > 24
        columns = [x for x in range(large.width) if any(large.getpixel((x, y)) for y in range(13, 47))]
        assert columns[-1] - columns[0] + 1 > font(BIG).getlength(mine)
    band = [large.getpixel((x, 60)) for x in (0, large.width - 1)]
    solid = band_text(view, side)[1]  # the normal face's band, word for word
    assert band == [solid, solid] and (view.state != "running" or solid == (view.run == side))
    corner = (0, 0, MARK_ROOM, 12)  # the turn mark at the top left (or the top line's start), as ever
    assert large.crop(corner).tobytes() == normal.crop(corner).tobytes()
    assert large.getpixel((0, 6)) == (view.run == side)  # the mark's left edge: text never starts on it


def test_a_clock_whose_config_names_a_side_large_draws_that_panel_large():
    from tileclock.clock.speech import SpeechSetting
    from tileclock.device.config_schema import Config
    from tileclock.sim.simulator import Simulator

    config = replace(Config(), speech=SpeechSetting(large=frozenset("B")))
    sim = Simulator(config)
    try:
        assert [output.panel.large for output in sim.panels] == [False, True]
    finally:
        sim.close()


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


def times_shown():
    """Times a panel shows, every digit in every place: each second of minutes 0, 9, 10, 19 and
    25:00 counting down, and of 0, 9 and 10 in overtime (-0:01 to -10:59)."""
    yield from (f"{m}:{s:02d}" for m in (0, 9, 10, 19) for s in range(60))
    yield "25:00"
    yield from (f"-{m}:{s:02d}" for m in (0, 9, 10) for s in range(60) if m or s)


def test_times_drawn_glyph_by_glyph_are_pixel_for_pixel_pillows():
    """Times are drawn from their glyphs (text.py): each as the panels draw it (the own time big,
    the opponent's small with its letter and penalty, the own penalty small) is Pillow's own, and
    so at the other sizes and anchors text.py allows."""
    cases = [(f"-{pen}", size, anchor) for pen in range(0, 1000, 7) for size, anchor in TIME_DRAWN]
    for shown in times_shown():
        cases += [(shown, BIG, "rs"), (shown, SMALL, "ra"), (f"A {shown}", SMALL, "ra")]
        cases += [
            (f"B {shown} -20", SMALL, "ra"),
            (f"B {shown}", BIG, "ra"),
            (f"A {shown} -110", SMALL, "rs"),
        ]
    assert all(TIME_TEXT.fullmatch(text) for text, _, _ in cases)  # each drawn glyph by glyph
    for text, size, anchor in cases:
        ours, pillows = (Image.new("1", (128, 64), 0) for _ in range(2))
        draw_text(ours, (127, 50), text, size, anchor=anchor)
        ImageDraw.Draw(pillows).text((127, 50), text, font=font(size), fill=1, anchor=anchor)
        assert ours.tobytes() == pillows.tobytes(), (text, size, anchor)


def test_a_pillow_that_draws_a_glyph_elsewhere_has_every_time_drawn_whole(monkeypatch):
    """Another Pillow (Debian's 9.4 on 32-bit Pi OS) might put a glyph a pixel apart: text.py tries
    its probes both ways first, and then draws times whole, as Pillow does."""
    from tileclock.device.screen import text

    def shifted(character, size, anchor):
        mask, (left, top) = text._raster(character, size, anchor)
        return mask, (left + 1, top)

    monkeypatch.setattr(text, "_glyph", shifted)
    text._times_by_glyph.cache_clear()
    try:
        assert not text._times_by_glyph(BIG, "rs")
        ours, pillows = (Image.new("1", (128, 64), 0) for _ in range(2))
        draw_text(ours, (127, 50), "-3:07", BIG, anchor="rs")
        ImageDraw.Draw(pillows).text((127, 50), "-3:07", font=font(BIG), fill=1, anchor="rs")
        assert ours.tobytes() == pillows.tobytes()
    finally:
        text._times_by_glyph.cache_clear()  # this Pillow's answer again for the tests after


def test_the_self_test_lights_every_pixel_of_both_panels_and_asks_in_words_that_fit():
    for side in "AB":
        assert set(render(SCENES["selftest_light"], Panel(faces=side)).getdata()) == {1}
    from tileclock.device.screen.selftest_screen import LARGE

    assert font(LARGE).getlength("PRESS STOP") <= Panel().width


def test_a_directors_set_large_draws_that_side_large_at_once_and_outlives_a_restart(tmp_path):
    """`set large=B` is recorded; B's panel shows the large face at once and A's does not; the
    service restarted keeps it; `large=off` clears it; a bad value is refused and changes nothing."""
    from tileclock.clock.timecode import NS_PER_S
    from tileclock.device.assembly import open_journal
    from tileclock.device.config_schema import Config
    from tileclock.device.hardware.virtual import VirtualTime
    from tileclock.sim.simulator import Simulator
    from tileclock.wire.protocol import unframe, with_crc

    state, time = str(tmp_path / "state"), VirtualTime()

    def start():
        return Simulator(Config(), journal=open_journal(state), time=time, boot_id="boot-1")

    def shown(sim):  # each panel's frame, and whether it is the large face of the clock's view
        return [
            output.last_frame.tobytes() == render(sim.view(), Panel(faces=side, large=True)).tobytes()
            for side, output in zip("AB", sim.panels, strict=True)
        ]

    first = start()
    first.send(with_crc("set large=B"), 1 * NS_PER_S)
    tap(first, "B", 2)  # A's clock runs
    assert shown(first) == [False, True]
    first.send(with_crc("set large=C"), 3 * NS_PER_S)
    first.run_to(5 * NS_PER_S)  # (its error record comes out at a later wake)
    first.run_to(5 * NS_PER_S)  # (its error record comes out at a later wake)
    records = [unframe(line) for line in first.serial_lines()]
    assert [r.get("large") for r in records if r["ev"] == "set"] == ["B"]
    assert "large=A|B|AB|off" in [r for r in records if r["ev"] == "error"][-1]["detail"]
    assert shown(first) == [False, True]
    first.close()

    again = start()  # the service restarted, mid-game
    again.run_to(5 * NS_PER_S)
    assert shown(again) == [False, True]
    again.send(with_crc("set large=off"), 6 * NS_PER_S)
    again.run_to(7 * NS_PER_S)
    assert shown(again) == [False, False]
    again.close()
