"""Panel frames as PNG files: what the simulator's panels showed, each time it changed."""

import os

from PIL import Image

from ..clock.timecode import NS_PER_MS

SCALE = 3
GAP = 8


def side_by_side(frames, scale=SCALE):
    """Both panels' frames, enlarged, on one light-grey sheet (A left, B right)."""
    first = next(iter(frames.values()))
    width, height = first.size
    sheet = Image.new("L", (GAP + len(frames) * (width * scale + GAP), height * scale + 2 * GAP), 160)
    for index, side in enumerate(sorted(frames)):
        big = frames[side].convert("L").resize((width * scale, height * scale), Image.Resampling.NEAREST)
        sheet.paste(big, (GAP + index * (width * scale + GAP), GAP))
    return sheet


class FrameWriter:
    """Writes `tMMMMMMMMM-A.png`, `-B.png` (exact pixels) and `tMMMMMMMMM.png` (both, enlarged) on change."""

    def __init__(self, directory):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self._last = None

    def __call__(self, t_ns, frames):
        key = tuple(frames[side].tobytes() for side in sorted(frames))
        if key == self._last:
            return
        self._last = key
        stem = os.path.join(self.directory, f"t{t_ns // NS_PER_MS:09d}")
        for side, frame in frames.items():
            frame.save(f"{stem}-{side}.png")
        side_by_side(frames).save(f"{stem}.png")
