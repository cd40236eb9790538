"""Whether the clock can speak to a blind player: espeak-ng and aplay installed, a sound card there."""

import os

from ..speaker import engine_missing
from .checks import FAIL, OK, Check

INSTALL = "sudo apt-get install espeak-ng alsa-utils (docs/director-guide.md#speech)"
NO_CARD = (
    "plug an earphone into the Pi's jack (dtparam=audio=on in the boot config), or fit a USB sound"
    " stick or an I2S board (hw/README.md#audio)"
)


def sound_cards(root="/"):
    """The sound cards ALSA lists (/proc/asound/cards), one line each; [] when there are none."""
    try:
        with open(os.path.join(root, "proc/asound/cards"), encoding="utf-8") as listed:
            text = listed.read()
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line[:3].strip().isdigit()]


def check_speech(config, root="/", missing=None):
    """espeak-ng, aplay and a sound card, for the sides that hear the clock: each missing one a
    failure; with speech off, said but no problem (the clock keeps time as ever, and says nothing).
    `missing`: the commands not found (a test's)."""
    missing = engine_missing() if missing is None else missing
    cards = sound_cards(root)
    sides = "".join(sorted(config.speech.sides))
    on = bool(sides)
    if missing:
        seen = f"{', '.join(missing)} not installed" + ("" if on else " (speech is off: no matter)")
        return Check(FAIL if on else OK, "speech", seen, INSTALL)
    if not cards:
        seen = "no audio device (/proc/asound/cards lists none)" + ("" if on else "; speech is off")
        return Check(FAIL if on else OK, "speech", seen, NO_CARD)
    said = f"on for {sides}" if on else "off"
    return Check(OK, "speech", f"{said}; espeak-ng and aplay installed; sound card {cards[0]}")
