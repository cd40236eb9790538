"""The three buttons, as gpiozero input devices that pass on every raw edge with its timestamp.

Debouncing is the clock core's job, so the pins are set up with no bounce time
(each gpiozero backend means something different by it) and every edge goes
on, stamped with the time the pin backend gives it: the kernel's edge time
under gpiod and lgpio, the simulator's virtual time under the mock factory.
"""

from gpiozero import DigitalInputDevice

from ...clock.timecode import NS_PER_S


def ticks_to_ns(factory, ticks):
    """A pin factory's edge ticks as integer nanoseconds of the monotonic clock.

    Real gpiozero factories tick in float seconds (lgpio: the kernel's
    CLOCK_MONOTONIC nanoseconds divided by 1e9, which rounds back exactly for
    the first 104 days of uptime); the simulator's factory ticks in integers.
    """
    convert = getattr(factory, "ticks_to_ns", None)
    return convert(ticks) if convert else round(ticks * NS_PER_S)


class StampedButton(DigitalInputDevice):
    """A button wired from a GPIO to ground, using the internal pull-up.

    `when_edge(down, t_ns)` is called for every change of the contact, from
    the pin backend's thread.
    """

    def __init__(self, pin, *, when_edge, pin_factory=None):
        self.when_edge = when_edge
        try:
            super().__init__(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
        except Exception:
            # gpiozero reserves the pin before the backend opens it and keeps the reservation when
            # that fails (a line taken by another program): let go of it, or the pin stays "in use"
            factory = getattr(self, "pin_factory", None)
            if factory is not None:
                factory.release_all(self)
            raise

    # gpiozero's private hooks, read in its source for 2.0, 2.0.1 and 2.0.1.post3 (identical there;
    # pyproject.toml keeps gpiozero below 2.1): DigitalInputDevice.__init__ sets
    # `pin.when_changed = self._pin_changed`, so this override gets every edge with the pin's
    # `(ticks, state)`; GPIODevice._state_to_value(state) maps the pin's level to active (pressed).
    def _pin_changed(self, ticks, state):
        self.when_edge(bool(self._state_to_value(state)), ticks_to_ns(self.pin_factory, ticks))
        super()._pin_changed(ticks, state)


class ButtonBoard:
    """The A, STOP and B buttons on their pins, reporting `(button, down, t_ns)` to `post`."""

    def __init__(self, pins, post, pin_factory=None):
        self.pin_factory = pin_factory  # closed with the board (None: gpiozero's shared default, left open)
        #: () -> None that posts every edge the pins have stamped so far (see `Daemon.flush_edges`),
        #: or None behind gpiozero's own factories (lgpio, RPi.GPIO), which cannot
        self.flush_edges = getattr(pin_factory, "flush_edges", None)
        self.buttons = {}
        try:
            for name, pin in pins.items():
                self.buttons[name] = StampedButton(
                    pin,
                    when_edge=lambda down, t_ns, name=name: post(name, down, t_ns),
                    pin_factory=pin_factory,
                )
        except (
            Exception
        ):  # a pin refused (taken, say): let go of those built, or gpiozero keeps them reserved
            for button in self.buttons.values():
                button.close()
            raise

    def close(self):
        """Let go of the pins, and of the pin factory given (its edge thread with it)."""
        for button in self.buttons.values():
            button.close()
        if self.pin_factory is not None:
            self.pin_factory.close()
