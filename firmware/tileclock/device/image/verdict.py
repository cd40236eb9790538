"""doctor's verdict in a few words on the panels: what a director sees of a card's first boot.

The image runs this once after the first boot (and after a settings change or a refused
settings file), before the service takes the panels: READY with the clock id and the hall, or
NOT READY and what is wrong, a refused settings file first. The full report goes to the
console and the system journal.
"""

import re
import time

from PIL import Image

from ..config import load_config
from ..config_schema import Config
from ..doctor import FAIL, report, run_checks
from ..identity import hardware_clock_id
from ..screen.text import HEIGHT, WIDTH, draw_text
from .settings import rejection_reason

LINE_PX = 16
CHARS = 21  # what fits across the panel at the small size


def short_verdict(checks, clock_id, hall):
    """Three short lines: READY, the clock id and the hall; or NOT READY and the first failure."""
    failed = [check for check in checks if check.status == FAIL]
    if failed:
        first = failed[0]
        return ["NOT READY", f"{first.what}:"[:CHARS], first.seen[:CHARS]]
    return ["READY", f"id {clock_id}"[:CHARS], (f"hall {hall}" if hall else "no hall: serial")[:CHARS]]


def refused_verdict(reason):
    """Three short lines for a settings file the card refused: where in it, and what."""
    where = re.match(r"line (\d+): (.*)", reason)
    if where:
        return ["NOT READY", f"settings line {where[1]}:"[:CHARS], where[2][:CHARS]]
    return ["NOT READY", "settings refused:", reason[:CHARS]]


def draw(lines):
    """The lines as a panel's 1-bit picture, the first one large."""
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    draw_text(image, (0, 0), lines[0], 16)
    for row, line in enumerate(lines[1:], 1):
        draw_text(image, (0, 8 + row * LINE_PX), line, 12)
    return image


def silent_panels(checks):
    """The sides whose panel doctor asked and nothing answered: not opened again to show the
    verdict (each try at an absent I2C panel waits out the bus's timeout, seconds of a boot)."""
    return {
        check.what.removeprefix("panel ")
        for check in checks
        if check.status == FAIL and check.what in ("panel A", "panel B")
    }


def show(config, lines, opener=None, silent=()):
    """Draw the lines on every configured panel but the silent ones; those not shown, as text."""
    if opener is None:
        from ..hardware.screens import open_device as opener
    picture = draw(lines)
    missing = []
    for spec in config.panels:
        if spec.faces in silent:
            missing.append(f"{spec.faces}: doctor found it silent")
            continue
        try:
            device = opener(spec)
            device.display(picture)  # luma turns it for a panel mounted upside down
        except Exception as error:  # no bus, no panel at that address: the report already says so
            missing.append(f"{spec.faces}: {type(error).__name__}")
    return missing


def show_verdict(config_path, state_dir, boot, seconds):
    """Run doctor's checks, print its report and the verdict, and show the verdict on the panels for
    `seconds` (a refused settings file noted on `boot` comes first: the director mends it first)."""
    checks = run_checks(config_path, state_dir)
    print(report(checks))
    try:
        config = load_config(config_path)
    except Exception:  # the report has said what is wrong with it
        config = Config()
    clock_id = config.clock_id or hardware_clock_id()
    lines = short_verdict(checks, clock_id, config.hall.broker if config.hall else None)
    refused = rejection_reason(boot)
    if refused:
        print(f"settings file refused: {refused}")
        lines = refused_verdict(refused)  # what the director must mend first
    print("verdict: " + " | ".join(lines))
    missing = show(config, lines, silent=silent_panels(checks))
    if missing:
        print("verdict not shown on panel " + ", ".join(missing))
    if len(missing) < len(config.panels):
        time.sleep(max(0, seconds))  # a director reads it before the clock's screens come
