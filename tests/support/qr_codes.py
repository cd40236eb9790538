"""A panel's QR code read back as a phone would: zbarimg on the frame, magnified behind glass."""

import os
import shutil
import subprocess

import pytest
from PIL import Image, ImageOps


def zbarimg():
    """Debian's zbarimg, which reads the codes back (CI installs it: there a missing one fails)."""
    found = shutil.which("zbarimg")
    if found is None:
        hint = "the score code is read back with Debian's zbarimg: sudo apt-get install zbar-tools"
        if os.environ.get("CI"):
            pytest.fail(hint)
        pytest.skip(hint)
    return found


def in_glass(path):
    """A panel's frame set in dark glass as the panel is, at 4x (a phone sees the panel larger
    than its pixels), written beside it: the file zbarimg reads."""
    frame = Image.open(path).convert("L")
    glass = ImageOps.expand(frame, 12, fill=0)
    big = glass.resize((glass.width * 4, glass.height * 4), Image.NEAREST)
    shown = f"{path}.scan.png"
    big.save(shown)
    return shown


def scanned(path):
    """What zbarimg reads off a panel's frame; None when it finds no code."""
    shown = in_glass(path)
    result = subprocess.run(
        [zbarimg(), "--quiet", "--raw", shown], capture_output=True, text=True, timeout=60
    )
    os.remove(shown)
    return result.stdout.strip() or None
