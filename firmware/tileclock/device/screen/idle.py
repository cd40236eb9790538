"""When idle panels dim, move and go dark: a pure policy, so the config can name it without loading luma.

Burn-in: a static clock left between rounds burns its digits into the OLED.
"""

from dataclasses import dataclass

from ...clock.timecode import NS_PER_S

#: The small orbit an idle picture moves along, one step each `shift_every_s`.
SHIFTS = ((0, 0), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))


@dataclass(frozen=True)
class IdlePolicy:
    """When idle panels dim, move and go dark."""

    dim_after_s: int = 300
    shift_every_s: int = 60
    blank_after_s: int = 1800
    dim_contrast: int = 0x08

    def phase(self, idle_ns):
        """(dimmed, shift, blank) for a clock idle `idle_ns` (None: not idle)."""
        if idle_ns is None or idle_ns < self.dim_after_s * NS_PER_S:
            return False, (0, 0), False
        if idle_ns >= self.blank_after_s * NS_PER_S:
            return True, (0, 0), True
        steps = (idle_ns - self.dim_after_s * NS_PER_S) // (self.shift_every_s * NS_PER_S)
        return True, SHIFTS[1 + steps % (len(SHIFTS) - 1)], False

    def next_change(self, idle_ns):
        """How long after `idle_ns` of idleness the phase next changes, or None."""
        if idle_ns is None or idle_ns >= self.blank_after_s * NS_PER_S:
            return None
        dim = self.dim_after_s * NS_PER_S
        if idle_ns < dim:
            return dim - idle_ns
        step = self.shift_every_s * NS_PER_S
        next_step = dim + ((idle_ns - dim) // step + 1) * step
        return min(next_step, self.blank_after_s * NS_PER_S) - idle_ns
