"""The OLED panels: ship a rendered frame to a luma device, and only when it changed.

A panel that stops answering (an OSError from its bus) never stops the clock:
the failure is counted and the next frame is tried again.
"""

import logging

from ..render import render

log = logging.getLogger(__name__)


class PanelOutput:
    """One panel: a `Panel` layout and the luma device it is shown on."""

    def __init__(self, panel, device):
        self.panel = panel
        self.device = device
        self.last_frame = None
        self.frames_sent = 0
        self.faults = 0

    def show(self, view):
        """Render `view`; send it unless the panel already shows exactly that. Returns the frame."""
        frame = render(view, self.panel)
        if self.last_frame is not None and frame.tobytes() == self.last_frame.tobytes():
            return frame
        try:
            self.device.display(frame)
        except OSError as error:
            self.faults += 1
            self.last_frame = None  # unknown what the panel shows now: resend next time
            log.warning("panel facing %s did not answer: %s", self.panel.faces, error)
            return frame
        self.last_frame = frame
        self.frames_sent += 1
        return frame
