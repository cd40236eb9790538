"""The same scripted game on two machines: the same records (but for the clock's id, boot id and
CRC, which name the machine) and the same pixels on every screen. Run by systemd/pi-install-check.sh
inside the image, with the image's Pillow: `python pi-compare-sim.py RECORDS RECORDS FRAMES FRAMES`."""

import json
import os
import sys

from PIL import Image

MACHINE = ("clock", "boot_id", "crc")


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
    for name in names:
        a = Image.open(os.path.join(host_frames, name))
        b = Image.open(os.path.join(pi_frames, name))
        if a.size != b.size or a.convert("1").tobytes() != b.convert("1").tobytes():
            print(f"frame {name} differs")
            return 1
    end = host[-2] if host[-1].get("ev") == "status" else host[-1]
    print(f"{len(host)} records the same ({' '.join(r['ev'] for r in host)}); {len(names)} frames the same")
    print(f"the game's end: A {end['A']['shown']}, B {end['B']['shown']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
