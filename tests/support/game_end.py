"""The director's two steps that end a game at the clock, as a test makes them."""

from conftest import tap
from tileclock.clock.timecode import NS_PER_S

S = NS_PER_S


def end_game(sim, t_s):
    """Stop, hold STOP 2.5 s and let go, confirm with a STOP press: the game ends at `t_s` + 4."""
    tap(sim, "STOP", t_s)
    sim.set_button("STOP", True, int((t_s + 1) * S))
    sim.set_button("STOP", False, int((t_s + 3.5) * S))
    tap(sim, "STOP", t_s + 4)
