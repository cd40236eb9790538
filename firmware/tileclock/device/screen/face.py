"""What a panel shows, drawn as a 1-bit image: a pure function of the clock's view.

Each panel faces one player. Layout of the 128x64 panel:

    row  0-11   alert or state (left); the opponent's time and penalty (right),
                with a pointer when the opponent's clock runs; when this side's
                clock runs, the same pointer at the far left (the turn mark)
    row 13-21   the open call to the director (right), when the top line shows
                a fault, the round's time or a correction (else the call is there)
    row 12-47   this side's time, 24 px digits, and its penalty beside it
    row 48-63   whose turn it is: a solid white band reading YOUR TURN when
                this side's clock runs, so it shows across the board

The large-digits face (`Panel.large`, for a player with low vision: `[speech] large` in the
config, or a director's `set large=`, which wins: clock/scene.py) shows this side's own time only, as big as the panel's width allows (35 px digits, 31 px
from -10:00 on), the opponent's time left out:

    row  0-11   alert or state (left), the turn mark beside it as above; this side's penalty
                and the open call (right)
    row 12-47   this side's time; in overtime a solid white field with the digits cut out of it
    row 48-63   the same band: solid, reading YOUR TURN, when this side's clock runs

After a game, a panel may show the hall's score link as a QR code instead (`score_screen.py`);
before one, a self-test's screens (`selftest_screen.py`).

The pointer at the top left is the turn mark: small, so that after a switch
it is the first bytes on the bus (gone from one panel, drawn on the other) and
both panels say whose turn it is before the rest of the frame follows
(`turn_marks` gives its box).

The text, its font and the panel's size are `text.py`'s.
"""

from PIL import Image, ImageDraw

from ...clock.state import State
from ...clock.timecode import format_clock
from ...clock.view import Hint
from .selftest_screen import render_selftest
from .text import BIG, SMALL, draw_text, text_length

TIME_RIGHT = 100  # the big time's right edge; the penalty sits to its right
BAND_TOP = 48
#: a pointer's corners from its left edge and the top: 6 columns by 9 rows, within pages 0 and 1
POINTER = ((0, 2), (5, 6), (0, 10))
#: the top of the open call's own line, when the top line says something that comes first
CALL_LINE = 10
#: how far the top left text moves right when this side's turn mark is beside it
MARK_ROOM = 8
#: the large-digits face's font sizes, largest first: the first whose time fits the panel's width
LARGE_SIZES = (50, 44, 40, BIG)
#: the rows of the large face's time field (filled in overtime)
LARGE_FIELD = (12, 47)


STATE_WORDS = {State.READY: "READY", State.PAUSED: "STOPPED", State.RUNNING: "", State.ENDED: "FINAL"}
HINT_WORDS = {
    Hint.END_GAME: "RELEASE: END GAME",
    Hint.CONFIRM_END: "PRESS STOP TO END",
    Hint.NEW_GAME: "RELEASE: NEW GAME",
}
#: the board's open call to the director, on both panels until it is done
CALL_WORDS = {"called": "CALLED TD", "taken": "TD COMING"}
_PART_WORDS = {"serial": "LINK DOWN", "journal": "DISK FAULT", "hall": "NO HALL", "power": "LOW POWER"}


def fault_text(part):
    """How the panels name a part at fault: `LINK DOWN`, `BUTTON A STUCK`, `PANEL B FAULT`,
    `LOW POWER` (the Pi's supply, `power.py`)."""
    if part.startswith("button "):
        return f"{part.upper()} STUCK"
    return _PART_WORDS.get(part, f"{part.upper()} FAULT")


def notice_text(notice):
    """A notice in words: `A +1:00` after a correction, `RECOVERED +-10s` after a restart,
    `CALL DONE` once the director has closed a call."""
    if notice.kind == "call_done":
        return "CALL DONE"
    if notice.kind == "takeover":  # a spare took a dead clock's game over, stopped
        return "TAKEN OVER"
    if notice.kind == "moved":  # the hall said this game moved to a spare: it ended here
        return "GAME MOVED"
    if notice.kind == "correction":
        sign = "-" if notice.delta_s < 0 else "+"
        return f"{notice.side} {sign}{format_clock(abs(notice.delta_s))}"
    return "RECOVERED" + (f" +-{notice.uncertain_s}s" if notice.uncertain_s else "")


def top_left_text(view):
    """The alert, round time left, notice, the open call or state for the top line.

    A correction and the round's time come before the call (CLOCK_RULES §6: every correction
    shows): the call then has its own line (`call_mark_text`)."""
    if view.faults:
        return fault_text(view.faults[0])
    if view.round_left_s is not None:
        return f"ROUND {format_clock(view.round_left_s)}"  # the round's last minutes
    if view.notice and view.notice.kind != "call_done":
        return notice_text(view.notice)
    if view.call:
        return CALL_WORDS[view.call]
    if view.notice:
        return notice_text(view.notice)
    return STATE_WORDS[view.state]


def call_mark_text(view):
    """The open call's words on their own line (right, under the opponent's time) when the top
    line says something that comes first (a fault, the round's time, a correction), else None."""
    if not view.call or top_left_text(view) == CALL_WORDS[view.call]:
        return None
    return CALL_WORDS[view.call]


def _lost_text(view, side, opponent):
    """The band of an ended game, if a side lost by forfeit."""
    mine, theirs = view.side(side), view.side(opponent)
    if mine.lost and theirs.lost:
        return "DOUBLE FORFEIT", True
    if mine.lost:
        return ("LOST: ABSENT" if view.lost_reason == "absent" else "LOST ON TIME"), True
    if theirs.lost:
        return (f"{opponent} FORFEITS" if view.lost_reason == "absent" else f"{opponent} LOST ON TIME"), False
    return None


def band_text(view, side):
    """What the bottom band says, and whether it is drawn solid (this side's clock runs)."""
    opponent = "B" if side == "A" else "A"
    mine, theirs = view.side(side), view.side(opponent)
    if view.hint:
        return HINT_WORDS[view.hint], False
    if view.state == State.ENDED:
        over = "ROUND OVER" if view.end_reason == "round_over" else "GAME OVER"
        if view.score_link is not None:  # the hall sent the score link: the gesture that shows it
            over = f"PRESS {side}: QR CODE"
        return _lost_text(view, side, opponent) or (over, False)
    if mine.absent_s is not None:
        return f"ABSENT {format_clock(mine.absent_s)}", False
    if theirs.absent_s is not None:
        return f"{opponent} ABSENT {format_clock(theirs.absent_s)}", False
    if mine.late and theirs.late:
        return "BOTH LATE", False
    if mine.late:
        return "LATE START", view.run == side
    if theirs.late:
        return f"{opponent} IS LATE", False
    if view.run == side:
        return "YOUR TURN", True
    if view.run == opponent:
        return f"{opponent} TO PLAY", False
    return ("STOPPED" if view.state == State.PAUSED else f"PANEL {side}"), False


def _fit(text, width, size):
    """`text`, cut short so that it fits in `width` pixels at font `size` (the opponent's time
    keeps its place)."""
    while text and text_length(text, size) > width:
        text = text[:-1]
    return text.rstrip()


def _theirs_forms(view, opponent):
    """The opponent's time and penalty, whole first, then shorter: without the penalty (their own
    panel shows it), then without the side's letter too (the top right is always the opponent's).
    The letter goes last: a time with its minus sign straight after `ROUND 5:00` reads as one."""
    theirs = view.side(opponent)
    whole = f"{opponent} {theirs.shown}" + (f" -{theirs.pen}" if theirs.pen else "")
    return [whole, f"{opponent} {theirs.shown}", theirs.shown]


def top_line(view, panel):
    """The top line's two texts: (left, the opponent's, right-aligned). The left one is cut short
    where the opponent's leaves it no room, except the round's time, which a player must read
    whole (`ROUND 5:00`, never `ROUND 5:0`): beside it the opponent's text gives way instead."""
    side = panel.faces
    opponent = "B" if side == "A" else "A"
    left = top_left_text(view)
    room = (MARK_ROOM if view.run == side else 0) + 6  # the turn mark, and the gap between the two
    pointer = 8 if view.run == opponent else 0
    forms = _theirs_forms(view, opponent)
    theirs = forms[0]
    if not view.faults and view.round_left_s is not None:  # the left text is the round's time
        need = text_length(left, SMALL) + room + pointer
        theirs = next((form for form in forms if need + text_length(form, SMALL) <= panel.width), forms[-1])
    return _fit(left, panel.width - text_length(theirs, SMALL) - pointer - room, SMALL), theirs


def _pointers(view, panel, dx, theirs=None):
    """The left edges of the pointers this panel shows: at the far left when this side's clock
    runs, before the opponent's time (`theirs`, as the top line shows it) when theirs does."""
    opponent = "B" if panel.faces == "A" else "A"
    if view.run == panel.faces:
        return [dx]
    if view.run == opponent:
        theirs = top_line(view, panel)[1] if theirs is None else theirs
        return [panel.width - 1 + dx - text_length(theirs, SMALL) - 8]
    return []


def turn_marks(view, panel, shift=(0, 0)):
    """Boxes `(x0, y0, x1, y1)` (inclusive) of what says whose turn it is on this panel: the pointer
    at the top left while this side's clock runs (none on the other panel). A switch sends what
    changed inside them (old and new) on both panels before anything else."""
    dx, dy = shift
    if view.run != panel.faces:
        return []
    xs = [x for x, _ in POINTER]
    ys = [y for _, y in POINTER]
    return [(dx + min(xs), dy + min(ys), dx + max(xs), dy + max(ys))]


def draw_marks(view, panel, shift=(0, 0)):
    """The turn marks alone, as `render` draws them (what a switch sends first, before the frame)."""
    image = Image.new("1", (panel.width, panel.height), 0)
    _draw_pointers(ImageDraw.Draw(image), view, panel, shift)
    return image


def _draw_pointers(draw, view, panel, shift, theirs=None):
    dx, dy = shift
    for left in _pointers(view, panel, dx, theirs):
        draw.polygon([(left + x, dy + y) for x, y in POINTER], fill=1)


def render(view, panel, shift=(0, 0)):
    """Draw `view` for `panel`: a mode-"1" image the size of the panel, moved by `shift` pixels."""
    side = panel.faces
    if view.selftest is not None:
        return render_selftest(view.selftest, panel, shift)
    if side in view.code and view.score_link is not None and view.hint is None:
        from .score_screen import draw_code  # segno is loaded only once a code is shown

        return draw_code(view, panel)
    if panel.large:
        return _render_large(view, panel, shift)
    mine = view.side(side)
    image = Image.new("1", (panel.width, panel.height), 0)
    draw = ImageDraw.Draw(image)
    dx, dy = shift
    left_text, theirs_text = top_line(view, panel)
    draw_text(image, (dx + (MARK_ROOM if view.run == side else 0), dy), left_text, SMALL)
    draw_text(image, (panel.width - 1 + dx, dy), theirs_text, SMALL, anchor="ra")
    _draw_pointers(draw, view, panel, shift, theirs_text)  # the top line laid out once a frame
    call_mark = call_mark_text(view)
    if call_mark:  # rows 13-21: between the top line and the big time's digits (rows 23-46)
        draw_text(image, (panel.width - 1 + dx, CALL_LINE + dy), call_mark, SMALL, anchor="ra")

    draw_text(image, (TIME_RIGHT + dx, 47 + dy), mine.shown, BIG, anchor="rs")
    if mine.pen:
        draw_text(image, (panel.width - 1 + dx, 46 + dy), f"-{mine.pen}", SMALL, anchor="rs")

    _draw_band(image, draw, view, panel, shift)
    return image


def _draw_band(image, draw, view, panel, shift):
    dx, dy = shift
    text, solid = band_text(view, panel.faces)
    if solid:
        draw.rectangle((0, BAND_TOP + 1 + dy, panel.width - 1, panel.height - 1), fill=1)
    draw_text(
        image, (panel.width // 2 + dx, BAND_TOP + 8 + dy), text, SMALL, fill=0 if solid else 1, anchor="mm"
    )


def large_size(shown, width):
    """The font size of the large face's time `shown`: the largest of `LARGE_SIZES` it fits
    `width` pixels in (less a pixel each side)."""
    return next((size for size in LARGE_SIZES if text_length(shown, size) <= width - 2), LARGE_SIZES[-1])


def _render_large(view, panel, shift):
    """The large-digits face (see the module's docstring): own time only, the turn as ever (the
    pointer at the top left, the band), overtime a solid field behind the digits."""
    side = panel.faces
    mine = view.side(side)
    image = Image.new("1", (panel.width, panel.height), 0)
    draw = ImageDraw.Draw(image)
    dx, dy = shift
    right = " ".join(word for word in (call_mark_text(view), f"-{mine.pen}" if mine.pen else None) if word)
    room = (MARK_ROOM if view.run == side else 0) + (6 + text_length(right, SMALL) if right else 0)
    left = _fit(top_left_text(view), panel.width - room, SMALL)
    draw_text(image, (dx + (MARK_ROOM if view.run == side else 0), dy), left, SMALL)
    if right:
        draw_text(image, (panel.width - 1 + dx, dy), right, SMALL, anchor="ra")
    if view.run == side:  # the turn mark alone: no opponent's time here to point at
        draw.polygon([(dx + x, dy + y) for x, y in POINTER], fill=1)
    over = mine.shown.startswith("-")  # overtime: the field lit, the digits dark in it
    if over:
        draw.rectangle((0, LARGE_FIELD[0] + dy, panel.width - 1, LARGE_FIELD[1] + dy), fill=1)
    size = large_size(mine.shown, panel.width)
    draw_text(
        image,
        (panel.width // 2 + dx, LARGE_FIELD[1] + dy),
        mine.shown,
        size,
        fill=0 if over else 1,
        anchor="ms",
    )
    _draw_band(image, draw, view, panel, shift)
    return image
