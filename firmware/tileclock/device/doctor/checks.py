"""What a doctor's check finds, and the one way its checks ask the system."""

import shutil
import subprocess
from dataclasses import dataclass

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Check:
    """One finding: its status, what was checked, what was seen, and how to fix it."""

    status: str
    what: str
    seen: str
    fix: str = ""


def ask(command):
    """What `command` prints, stripped; None when the command is not installed."""
    if not shutil.which(command[0]):
        return None
    result = subprocess.run(command, capture_output=True, text=True, timeout=10)
    return result.stdout.strip()
