"""What a panel shows, drawn as a 1-bit image: a pure function of the clock's view.

Each panel faces one player: that side's time is drawn large, the opponent's
small. Pillow's built-in scalable font is used (equal-width digits, no files).
"""

from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 128, 64


@dataclass(frozen=True)
class Panel:
    """One screen: which side it faces, and how it is mounted."""

    faces: str = "A"
    width: int = WIDTH
    height: int = HEIGHT


@lru_cache(maxsize=None)
def font(size):
    """Pillow's built-in scalable font at `size` pixels."""
    return ImageFont.load_default(size=size)


def _status_line(view, side):
    mine = view.side(side)
    if view.hint:
        return view.hint
    if view.state == "ended":
        return "LOST ON TIME" if mine.lost else "GAME OVER"
    if mine.late:
        return "LATE START"
    if view.state == "running":
        return "YOUR CLOCK" if view.run == side else "OPPONENT"
    return {"ready": "READY", "paused": "STOPPED"}[view.state]


def render(view, panel):
    """Draw `view` for `panel`: a mode-"1" image the size of the panel."""
    side = panel.faces
    opponent = "B" if side == "A" else "A"
    mine, theirs = view.side(side), view.side(opponent)
    image = Image.new("1", (panel.width, panel.height), 0)
    draw = ImageDraw.Draw(image)

    draw.text((0, 0), _status_line(view, side), font=font(11), fill=1)
    theirs_text = f"{opponent} {theirs.shown}" + (f" {-theirs.pen}" if theirs.pen else "")
    draw.text((panel.width, 0), theirs_text, font=font(11), fill=1, anchor="ra")

    big = font(30)
    draw.text((panel.width // 2, 36), mine.shown, font=big, fill=1, anchor="mm")
    if view.run == side:
        # a solid bar under the running side's time, visible across the board
        draw.rectangle((0, 54, panel.width - 1, 57), fill=1)
    if mine.pen:
        draw.text((panel.width, panel.height), f"{-mine.pen}", font=font(11), fill=1, anchor="rd")
    return image
