"""A stand-in for the hall's feed behind the page: it notes the commands it is asked to send, and
keeps its audit trail in a folder of its own."""

import tempfile
import time


class Feed:
    """Stands in for the hall's feed: it notes the commands it is asked to send, and has boards."""

    def __init__(self, folder=None):
        self.sent = []
        self.version = 1
        folder = folder or tempfile.mkdtemp(prefix="tileclock-guard-")
        self.store = type("Store", (), {"outdir": str(folder)})()  # the audit trail goes here

    def command(self, line, clock_id="all"):
        self.sent.append(line if clock_id == "all" else f"{line} to {clock_id}")

    def clear_state(self, clock_id):
        self.sent.append(f"clear {clock_id}")

    def snapshot(self):
        return {"version": self.version, "connected": True, "down": None, "boards": []}

    def wait_for_change(self, version, timeout_s):
        time.sleep(min(timeout_s, 0.05))
        return self.version
