"""The self-test's screens (clock/selftest.py; docs/player-guide.md): the button asked, the
buttons that answered, every pixel lit, then PASS or FAIL and what failed.

Both panels show the same words, each the right way up for its player:

    row  0-11   SELF-TEST (left), the step (right: 1/3, 2/3, 3/3)
    row 14-38   PRESS A (the button asked), large
    row 48-63   the buttons that answered so far, a solid band under each: A  B  STOP

then the whole panel lit (every pixel on: a dead pixel or a dead panel shows), then PASS, large,
or FAIL with up to three lines of what failed (`A not pressed`, `STOP chatter`).
"""

from PIL import Image, ImageDraw

from ...wire.records import BUTTONS
from .text import SMALL, draw_text

#: the large words (PRESS A, PASS, FAIL): 20 px, PRESS STOP fits the panel's width
LARGE = 20
#: where each button's answer mark sits in the bottom band: its centre
_MARK_X = {"A": 20, "B": 58, "STOP": 104}


def render_selftest(test, panel, shift=(0, 0)):
    """Draw `test` (a `selftest.SelfTestView`) for `panel`: a mode-"1" image the panel's size."""
    if test.phase == "light":
        return Image.new("1", (panel.width, panel.height), 1)
    image = Image.new("1", (panel.width, panel.height), 0)
    dx, dy = shift
    draw_text(image, (dx, dy), "SELF-TEST", SMALL)
    if test.phase == "ask":
        step = f"{BUTTONS.index(test.asked) + 1}/{len(BUTTONS)}"
        draw_text(image, (panel.width - 1 + dx, dy), step, SMALL, anchor="ra")
        draw_text(image, (panel.width // 2 + dx, 27 + dy), f"PRESS {test.asked}", LARGE, anchor="mm")
        _answers(image, test, panel, shift)
        return image
    if test.result == "pass":
        draw_text(image, (panel.width // 2 + dx, 36 + dy), "PASS", LARGE * 3 // 2, anchor="mm")
        return image
    draw_text(image, (panel.width - 1 + dx, dy), "FAIL", SMALL, anchor="ra")
    for row, failure in enumerate(test.failed[:3]):
        draw_text(image, (dx, 16 + 16 * row + dy), failure.upper(), SMALL)
    return image


def _answers(image, test, panel, shift):
    dx, dy = shift
    draw = ImageDraw.Draw(image)
    for button, x in _MARK_X.items():
        answered = button in test.answered
        if answered:  # a solid band under the name: seen from across the table
            draw.rectangle((x - 17 + dx, 49 + dy, x + 17 + dx, panel.height - 1 + dy), fill=1)
        draw_text(image, (x + dx, 56 + dy), button, SMALL, fill=0 if answered else 1, anchor="mm")
