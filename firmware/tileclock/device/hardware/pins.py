"""Choosing the pin backend: gpiozero's real factories and our simulated one side by side."""


def pin_factory(backend):
    """The gpiozero pin factory for a config's `buttons.backend` (None: gpiozero chooses)."""
    if backend == "auto":
        return None  # GPIOZERO_PIN_FACTORY if set, else gpiozero's own order (lgpio first)
    if backend == "lgpio":
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    if backend == "rpigpio":
        from gpiozero.pins.rpigpio import RPiGPIOFactory

        return RPiGPIOFactory()
    from .virtual import MonotonicTime, VirtualFactory

    return VirtualFactory(MonotonicTime())
