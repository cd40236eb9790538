"""Text on a panel: its size, the one font, and strings drawn from a cache of rasterised text.

Aileron, the font Pillow 10.1+ has built in, shipped in fonts/: every digit is the same width, and
times are right-aligned, so nothing jitters as the seconds change.
"""

import re
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


def _raster(text, size, anchor):
    """`text` drawn at `size`: a 1-bit mask, and where its corner sits from the anchor point."""
    left, top, right, bottom = font(size).getbbox(text, mode="1", anchor=anchor)
    mask = Image.new("1", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font(size), fill=1, anchor=anchor)
    return mask, (left, top)


#: each string drawn once: a frame's strings mostly repeat the last frame's (a switch changes a
#: band and a pointer, a tick a time or two), and rasterising text is most of a frame's cost
_rasterised = lru_cache(maxsize=128)(_raster)
#: each glyph of a time drawn once (a few characters at a few sizes: never many)
_glyph = cache(_raster)


@lru_cache(maxsize=512)
def text_length(text, size):
    """How wide `text` is at `size` (the font's `getlength`), measured once: a frame measures the
    same few strings its last frame did, and measuring is a third of laying a frame out."""
    return font(size).getlength(text)


#: a time or penalty as the panels show them ("24:31", "B -3:07 -10", "-20"), right-aligned at the
#: sizes they are shown at: drawn glyph by glyph (see `draw_text`)
TIME_TEXT = re.compile(r"(?:[AB] )?-?(?:1?[0-9]|2[0-5]):[0-5][0-9](?: -[0-9]{1,3})?|-[0-9]{1,3}")
TIME_DRAWN = {(SMALL, "ra"), (SMALL, "rs"), (BIG, "ra"), (BIG, "rs")}
#: drawn both ways when a size is first used: another Pillow (Debian's 9.4 on 32-bit Pi OS) that
#: put a glyph elsewhere draws every time whole, as before
_PROBES = ("25:00", "-10:59", "A 9:58", "B -0:01 -110", "-20")


def _time(text, size, anchor):
    """`text` (a `TIME_TEXT`) drawn glyph by glyph: each anchored at its own right edge."""
    right = -int(text_length(text, size))
    for character in text:
        right += int(text_length(character, size))
        yield _glyph(character, size, anchor), right


@cache
def _times_by_glyph(size, anchor):
    """Whether times are drawn glyph by glyph at `size` and `anchor`: the font's advances are whole
    pixels there and this Pillow draws the probes glyph by glyph as it draws them whole."""
    if (size, anchor) not in TIME_DRAWN or not all(
        text_length(c, size).is_integer() for c in "0123456789:- AB"
    ):
        return False
    for text in _PROBES:
        whole, by_glyph = (Image.new("1", (WIDTH, HEIGHT), 0) for _ in range(2))
        ImageDraw.Draw(whole).text((WIDTH - 1, HEIGHT - 8), text, font=font(size), fill=1, anchor=anchor)
        for (mask, (left, top)), right in _time(text, size, anchor):
            by_glyph.paste(1, (WIDTH - 1 + right + left, HEIGHT - 8 + top), mask)
        if whole.tobytes() != by_glyph.tobytes():
            return False
    return True


def draw_text(image, xy, text, size, fill=1, anchor="la"):
    """Draw `text` as `ImageDraw.text` would (same pixels), from the cache of rasterised strings.

    A time (right-aligned, as every time on the panels is) is drawn from its glyphs, each anchored
    at its own right edge: each tick shows a time never drawn before, which the cache of whole
    strings would miss. For these strings at these sizes (and only these: other strings of the
    same characters can fall a pixel apart) that is the same pixels: tests/test_screens.py checks
    every place of every digit in each form (a one-off run checked all 87,360 such strings)."""
    if TIME_TEXT.fullmatch(text) and _times_by_glyph(size, anchor):
        for (mask, (left, top)), right in _time(text, size, anchor):
            image.paste(fill, (xy[0] + right + left, xy[1] + top), mask)
        return
    mask, (left, top) = _rasterised(text, size, anchor)
    image.paste(fill, (xy[0] + left, xy[1] + top), mask)
