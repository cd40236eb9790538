"""The three buttons, on gpiozero pins, passing on every raw edge with its timestamp.

Debouncing is the clock core's job, so the pins are set up with no bounce time
(each gpiozero backend means something different by it) and every edge goes
on, stamped with the time the pin backend gives it: the kernel's edge time
under gpiod and lgpio, the simulator's virtual time under the mock factory.

Only gpiozero's public API is used: a `Device` (the base of its device classes,
which takes the default pin factory), the factory's `reserve_pins`, `pin` and
`release_pins`, and the pin's `function`, `pull`, `bounce`, `edges`, `state` and
`when_changed` (called with each edge's `(ticks, state)`), as gpiozero's own
devices do.
"""

from gpiozero import Device

from ...clock.timecode import NS_PER_S


def edge_ns(factory, ticks):
    """An edge's time as integer nanoseconds of the monotonic clock, from its pin factory's ticks.

    A factory of ours says how (`edge_ns`: the gpiod factory's ticks are the kernel's nanoseconds,
    the simulated one stamps its virtual time). gpiozero's own factories tick in float seconds
    (lgpio: the kernel's CLOCK_MONOTONIC nanoseconds divided by 1e9, which rounds back exactly for
    the first 104 days of uptime).
    """
    convert = getattr(factory, "edge_ns", None)
    return convert(ticks) if convert else round(ticks * NS_PER_S)


class StampedButton(Device):
    """A button wired from a GPIO to ground, using the internal pull-up: a gpiozero `Device` of its own.

    `when_edge(down, t_ns)` is called for every change of the contact, from
    the pin backend's thread. `pin_factory` None: gpiozero's default factory
    (GPIOZERO_PIN_FACTORY, else its own order).
    """

    def __init__(self, pin, *, when_edge, pin_factory=None):
        self.when_edge = when_edge
        self.pin = None
        self._name = pin
        super().__init__(pin_factory=pin_factory)
        self.pin_factory.reserve_pins(self, pin)
        try:
            self.pin = self.pin_factory.pin(pin)
            self.pin.function = "input"
            self.pin.pull = "up"
            self.pin.bounce = None
            self.pin.edges = "both"
            self.pin.when_changed = self._changed
        except Exception:
            # the reservation outlives a pin the backend failed to open (a line taken by another
            # program): let go of it, or the pin stays "in use"
            self.close()
            raise

    def _changed(self, ticks, state):
        self.when_edge(not state, edge_ns(self.pin_factory, ticks))  # pulled up: pressed reads low

    @property
    def value(self):
        """1 while the button is pressed (the pin reads low), else 0."""
        self._check_open()
        return int(not self.pin.state)

    @property
    def closed(self):
        return self.pin is None

    def close(self):
        """Let go of the pin, its reservation first, as gpiozero's own devices do (again: nothing)."""
        if self.pin_factory is None:
            return  # no pin factory could be had (gpiozero found no backend): nothing was taken
        self.pin_factory.release_pins(self, self._name)
        pin, self.pin = self.pin, None
        if pin is not None:
            pin.when_changed = None
            pin.close()


class ButtonBoard:
    """The A, STOP and B buttons on their pins, reporting `(button, down, t_ns)` to `post`."""

    def __init__(self, pins, post, pin_factory=None):
        self.pin_factory = pin_factory  # closed with the board (None: gpiozero's shared default, left open)
        #: () -> None that posts every edge the pins have stamped so far (see `Reactor.flush_edges`),
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
