"""The score code screen: the hall's score link of this side (its own token) as a QR code, on a
128x64 panel.

segno makes the code (pure Python, no other dependency: the clock needs only its matrix). The link
is upper case, every character in QR's alphanumeric mode (wire/protocol.py checks it), so it fits
version 2 or 3 at the lowest error correction; each module is drawn 2x2 pixels, dark modules as
unlit pixels on a lit panel, as a phone's camera expects. The quiet zone: the panel is lit all
round the code, 4 modules at its left and right; at version 3 the panel's 64 rows leave 3 pixels
above and below it (tests/test_score_code.py decodes the frame, set in the dark glass round it).
"""

import segno
from PIL import Image

from ...wire.records import SIDES
from .text import SMALL, draw_text

#: pixels a module
MODULE = 2
#: the largest version drawn: 29 modules, 58 pixels, in 64 rows
MAX_VERSION = 3
#: the code's left edge: a quiet zone of 4 modules from the panel's edge
LEFT = 4 * MODULE


def score_link(view, side):
    """The link of `side`'s score form, as the panel shows it, or None without one."""
    if view.score_link is None:
        return None
    base, tokens = view.score_link
    return f"{base}/{side}/{tokens[SIDES.index(side)]}"  # this side's own token: its form alone


def code_matrix(link):
    """The QR code of `link`: rows of 0/1 modules, no border; ValueError past version 3."""
    try:
        code = segno.make_qr(link, error="L", boost_error=True)
    except segno.DataOverflowError:
        code = None
    if code is None or code.version > MAX_VERSION:
        raise ValueError(f"a link of {len(link)} characters needs a QR code above version {MAX_VERSION}")
    return [list(row) for row in code.matrix]


def draw_code(view, panel):
    """Panel `panel.faces`'s score code screen: the code at the left, what it is for at the right."""
    side = panel.faces
    image = Image.new("1", (panel.width, panel.height), 1)
    matrix = code_matrix(score_link(view, side))
    size = len(matrix) * MODULE
    top = (panel.height - size) // 2
    pixels = image.load()
    for row, modules in enumerate(matrix):
        for column, dark in enumerate(modules):
            if dark:
                for dy in range(MODULE):
                    for dx in range(MODULE):
                        pixels[LEFT + column * MODULE + dx, top + row * MODULE + dy] = 0
    words_left = LEFT + size + 4 * MODULE  # the quiet zone on the code's right too
    middle = (words_left + panel.width) // 2
    for line, text in enumerate(("SCORE", f"SIDE {side}", f"{side}: BACK")):
        draw_text(image, (middle, 8 + 20 * line), text, SMALL, fill=0, anchor="mm")
    return image
