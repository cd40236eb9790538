"""Text on a panel: its size, the one font, and strings drawn from a cache of rasterised text.

Aileron, the font Pillow 10.1+ has built in, shipped in fonts/: every digit is the same width, and
times are right-aligned, so nothing jitters as the seconds change.
"""

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files
from io import BytesIO

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 128, 64
BIG, SMALL = 34, 12  # font sizes: 34 px gives 24 px tall digits


@dataclass(frozen=True)
class Panel:
    """One screen: which side it faces, and how it is mounted; `large`: the large-digits face, for
    a player with low vision (face.py)."""

    faces: str = "A"
    width: int = WIDTH
    height: int = HEIGHT
    large: bool = False


#: Aileron Regular (CC0), the subset Pillow 10.1+ embeds as its default scalable font, shipped here
#: so the screens look the same on Debian's Pillow 9.4 (32-bit Pi OS installs Debian's, having no wheel)
FONT = files(__package__).joinpath("fonts", "aileron-regular.ttf")


@cache
def font(size):
    """Aileron at `size` pixels, laid out as `ImageFont.load_default(size)` does (the same pixels)."""
    with FONT.open("rb") as data:
        return ImageFont.truetype(BytesIO(data.read()), size, layout_engine=ImageFont.Layout.BASIC)


@lru_cache(maxsize=128)
def _rasterised(text, size, anchor):
    """`text` drawn once at `size`: a 1-bit mask, and where its corner sits from the anchor point.

    A frame's strings mostly repeat the last frame's (a switch changes a band and a pointer, a
    tick a time or two); rasterising text is most of a frame's cost, so each is drawn once.
    """
    left, top, right, bottom = font(size).getbbox(text, mode="1", anchor=anchor)
    mask = Image.new("1", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font(size), fill=1, anchor=anchor)
    return mask, (left, top)


def draw_text(image, xy, text, size, fill=1, anchor="la"):
    """Draw `text` as `ImageDraw.text` would (same pixels), from the cache of rasterised strings."""
    mask, (left, top) = _rasterised(text, size, anchor)
    image.paste(fill, (xy[0] + left, xy[1] + top), mask)
