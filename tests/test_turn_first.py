"""A switch shows whose turn it is first: the turn marks' bytes lead the bus, on both panels.

The panels are luma's drivers on recording buses; what they hold is read back from a model of
the controllers' RAM (support/panel_ram.py), so these tests check what a player sees, in the order the
bus carries it, not which bytes were chosen.
"""

from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from conftest import tap
from support.panel_ram import ControllerRAM
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.oled import PagedSH1106, PagedSSD1306, RecordingBus, pack_pages, pi_i2c
from tileclock.device.screen.face import turn_marks
from tileclock.device.screen.text import Panel
from tileclock.sim.simulator import Simulator

S = NS_PER_S
DRIVERS = {"ssd1306": PagedSSD1306, "sh1106": PagedSH1106}
OFFSET = {"ssd1306": 0, "sh1106": 2}  # where the glass's column 0 sits in the controller's RAM

boxes = st.lists(
    st.tuples(st.integers(0, 127), st.integers(0, 63), st.integers(0, 127), st.integers(0, 63)).map(
        lambda b: (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
    ),
    max_size=3,
)


def scribble(seed, base=None):
    """A frame: `base` (or blank) with a few random rectangles flipped."""
    frame = base.copy() if base else Image.new("1", (128, 64))
    draw = ImageDraw.Draw(frame)
    for n in range(seed % 5 + 1):
        x, y = (seed * 37 + n * 53) % 120, (seed * 11 + n * 29) % 60
        draw.rectangle((x, y, x + seed % 17, y + n * 5 % 13), fill=(seed + n) % 2)
    return frame


@given(
    kind=st.sampled_from(sorted(DRIVERS)),
    rotate=st.sampled_from([0, 2]),
    seeds=st.lists(st.integers(0, 10_000), min_size=1, max_size=5),
    parts=st.lists(boxes, min_size=5, max_size=5),
)
def test_the_panel_holds_each_frame_and_a_part_changes_only_inside_its_boxes(kind, rotate, seeds, parts):
    bus = RecordingBus()
    device = DRIVERS[kind](pi_i2c(bus, 0x3C), rotate=rotate)
    ram = ControllerRAM(kind)
    frame = Image.new("1", (128, 64))
    device.display(frame)  # (a part of a frame goes first only onto a panel whose content is known)

    def shown(image):
        return pack_pages(image.rotate(180) if rotate else image)

    def held():
        ram.feed(bus.writes)
        bus.writes.clear()
        return ram.pages(OFFSET[kind])

    for seed, part in zip(seeds, parts, strict=False):
        new = scribble(seed, frame)
        device.display_part(new, part)
        mixed = frame.copy()
        for box in part:  # the columns of each box's pages, as the new frame has them
            top, bottom = box[1] // 8 * 8, box[3] // 8 * 8 + 7
            mixed.paste(new.crop((box[0], top, box[2] + 1, bottom + 1)), (box[0], top))
        assert held() == shown(mixed)
        device.display(new)
        assert held() == shown(new)
        frame = new


def the_bus_in_order(sim):
    """Every write on both panels' buses from now on, in order: (side, address, control, payload)."""
    order = []
    for side, bus in sim.buses.items():
        bus.tap = lambda _bus, address, control, payload, side=side: order.append(
            (side, address, control, payload)
        )
    return order


def region(boxes):
    """(page, column) of every byte the boxes touch."""
    return {
        (page, x)
        for x0, y0, x1, y1 in boxes
        for page in range(max(0, y0) // 8, min(63, y1) // 8 + 1)
        for x in range(max(0, x0), min(127, x1) + 1)
    }


def pick(pages, cells, inside=True):
    """The bytes of `pages` at `cells` (or everywhere else)."""
    return [pages[p][x] for p in range(8) for x in range(128) if ((p, x) in cells) == inside]


def test_after_a_switch_the_first_bytes_show_whose_turn_it_is_on_both_panels():
    sim = Simulator(Config())
    tap(sim, "B", 1)  # A runs
    sim.run_to(2 * S + S // 2)
    was = sim.view()
    before = {side: pack_pages(frame) for side, frame in sim.daemon.frames.items()}
    rams = {spec.faces: ControllerRAM(spec.driver, spec.address) for spec in Config().panels}
    for side, ram in rams.items():
        ram.feed(sim.buses[side].writes)  # everything since power-on: the panel shows A running
        assert ram.pages() == before[side]
    order = the_bus_in_order(sim)
    tap(sim, "A", 2.5)  # A's turn ends: B runs (between two of the seconds the panels show)
    assert sim.clock.run == "B"
    now = sim.view()
    after = {side: pack_pages(frame) for side, frame in sim.daemon.frames.items()}
    cells = {side: region(turn_marks(was, Panel(side)) + turn_marks(now, Panel(side))) for side in rams}
    assert all(pick(before[side], cells[side]) != pick(after[side], cells[side]) for side in rams)

    shown_at, wire_bytes = None, 0
    for index, (side, address, control, payload) in enumerate(order):
        rams[side].feed([(address, control, payload)])
        wire_bytes += 2 + len(payload)
        if all(pick(rams[s].pages(), cells[s]) == pick(after[s], cells[s]) for s in rams):
            shown_at = index
            break
    assert shown_at is not None, "the turn marks never showed"
    assert wire_bytes < 200  # both panels say whose turn it is within 5 ms of a 400 kHz bus
    for side, ram in rams.items():  # ...and nothing else has changed yet: the band and digits follow
        assert pick(ram.pages(), cells[side], inside=False) == pick(before[side], cells[side], inside=False)
    for side, address, control, payload in order[shown_at + 1 :]:
        rams[side].feed([(address, control, payload)])
    assert all(rams[side].pages() == after[side] for side in rams)  # then the whole new frame
    assert before["B"][7] != after["B"][7]  # (the band moved, after the marks)
    sim.close()
