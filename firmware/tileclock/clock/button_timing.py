"""How the buttons' presses are told apart: the clock's settings for holds, chords, taps and
stuck buttons (`ButtonTiming`), which the gestures (gestures.py) and the contacts (contacts.py) read.
They are settings of the clock, not of a rulebook; the gestures are tabled in docs/rules.md.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ButtonTiming:
    """How presses are told apart: settings of the clock, not of a rulebook."""

    #: Accepted so that older configs load; no longer used: since CLOCK_RULES §10 one window,
    #: `min_press_ms`, tells a change from bounce and chatter in both directions.
    bounce_ms: int = 20
    #: The glitch window: a contact must stay closed this long to be a press, and open this long to
    #: be a release (each still counts from its first edge); shorter pulses are chatter.
    min_press_ms: int = 5
    #: A side's press ends its turn only once its clock has run this long (collisions).
    min_turn_ms: int = 250
    #: Hold STOP this long on a stopped clock, then release, to end (or start) a game.
    end_hold_ms: int = 2000
    #: After that, a STOP press within this long confirms the end.
    confirm_end_ms: int = 5000
    #: Tap STOP this many times within `call_window_ms`, on a clock already stopped (fresh,
    #: stopped or ended), to call the director; a tap is let go before `end_hold_ms`.
    call_taps: int = 3
    call_window_ms: int = 2000
    #: STOP must have been held this long before a side's press for the two to be a chord.
    chord_after_ms: int = 500
    #: In a correction, a side held at least this long takes time off instead of adding it.
    correction_hold_ms: int = 1000
    #: The size of one correction.
    correction_ms: int = 60_000
    #: A button held down longer than this is stuck: a fault, and its release does nothing.
    stuck_ms: int = 10_000
    #: On a fresh game, hold STOP, then both sides together this long, and let all go: a self-test
    #: (selftest.py); shorter, the same chord is both players late.
    selftest_hold_ms: int = 3000
    #: In a self-test, each button asked must be pressed, and let go, within this long.
    selftest_wait_ms: int = 10_000
    #: In a self-test, every pixel of both panels is lit this long.
    selftest_light_ms: int = 2000

    def conflict(self):
        """(key, why) for the first setting the others make useless or unsafe, or None."""
        if self.end_hold_ms >= self.stuck_ms:
            return "end_hold_ms", f"must be shorter than stuck_ms ({self.stuck_ms}): no game could end"
        if self.selftest_hold_ms >= self.stuck_ms:
            return (
                "selftest_hold_ms",
                f"must be shorter than stuck_ms ({self.stuck_ms}): no self-test could start",
            )
        if not 2 <= self.call_taps <= 5:
            return (
                "call_taps",
                "expected 2 to 5 (one tap would make any STOP press on a stopped clock a call)",
            )
        least = 2 * self.call_taps * self.min_press_ms  # each press and release lasts the glitch window
        if not least <= self.call_window_ms <= self.confirm_end_ms:
            return "call_window_ms", (
                f"expected {least} (room for {self.call_taps} taps) to confirm_end_ms ({self.confirm_end_ms}):"
                " taps further apart are no one deliberate gesture"
            )
        return None
