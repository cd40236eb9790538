"""The same scripted game on two machines: the same records (but for the clock's id, boot id and
CRC, which name the machine) and the same screens, to the pixel or within FreeType's rounding. Run by systemd/pi-install-check.sh
inside the image, with the image's Pillow: `python pi-compare-sim.py RECORDS RECORDS FRAMES FRAMES`."""

import json
import os
import sys

from PIL import Image

MACHINE = ("clock", "boot_id", "crc")
#: Debian's Pillow (32-bit Pi OS) rasterises with its FreeType (2.12 in bookworm), the wheels with
#: theirs (2.14): the same layout and boxes, a few edge pixels of a glyph apart (at most 7 seen in
#: the 34-pixel digits); a moved or missing string is hundreds
PIXELS_APART = 32


def records(path):
    with open(path, encoding="utf-8") as file:
        lines = [json.loads(line) for line in file if line.startswith("{")]
    return [{key: value for key, value in record.items() if key not in MACHINE} for record in lines]


def main(host_records, pi_records, host_frames, pi_frames):
    """0 if both games match; else 1, naming the first difference."""
    host, pi = records(host_records), records(pi_records)
    if not host or host != pi:
        first = next(
            (i for i, (a, b) in enumerate(zip(host, pi, strict=False)) if a != b), min(len(host), len(pi))
        )
        print(f"records differ at {first}: {len(host)} here, {len(pi)} in the image")
        return 1
    names = sorted(os.listdir(host_frames))
    if not names or names != sorted(os.listdir(pi_frames)):
        print(f"frames differ: {len(names)} here, {len(os.listdir(pi_frames))} in the image")
        return 1
    worst, exact = 0, 0
    panels = [name for name in names if name.endswith(("-A.png", "-B.png"))]  # the rest: both, scaled up
    for name in panels:
        a = Image.open(os.path.join(host_frames, name)).convert("1")
        b = Image.open(os.path.join(pi_frames, name)).convert("1")
        if a.size != b.size:
            print(f"frame {name}: {a.size} here, {b.size} in the image")
            return 1
        off = sum(bin(x ^ y).count("1") for x, y in zip(a.tobytes(), b.tobytes(), strict=True))
        exact += off == 0
        worst = max(worst, off)
    print(
        f"{len(panels)} panel frames: {exact} the same to the pixel, the others at most {worst} pixels apart"
    )
    if worst > PIXELS_APART:
        print(f"more than {PIXELS_APART} pixels apart: not FreeType's rounding but a different picture")
        return 1
    end = host[-2] if host[-1].get("ev") == "status" else host[-1]
    print(f"{len(host)} records the same ({' '.join(r['ev'] for r in host)})")
    print(f"the game's end: A {end['A']['shown']}, B {end['B']['shown']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
