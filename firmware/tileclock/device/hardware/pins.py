"""Choosing the pin backend: gpiozero's real factories, ours on `gpiod`, and the simulated one side by side."""

import glob
import os


def choose_backend(backend, environ=os.environ, chips=None, gpiod_version=None):
    """(backend, why) for a config's `buttons.backend`: what `pin_factory` will use and the reason.

    Under "auto": GPIOZERO_PIN_FACTORY if set; else `gpiod` where the machine has a GPIO
    character device and the gpiod 2.x bindings import (kernel edge events, no polling);
    else gpiozero's own order (lgpio first, then RPi.GPIO), shown as None.
    """
    if backend != "auto":
        return backend, "set in the config (buttons.backend)"
    if environ.get("GPIOZERO_PIN_FACTORY"):
        return None, f"GPIOZERO_PIN_FACTORY={environ['GPIOZERO_PIN_FACTORY']} in the environment"
    chips = sorted(glob.glob("/dev/gpiochip*")) if chips is None else chips
    if not chips:
        return None, "no /dev/gpiochip* here: gpiozero's own order (lgpio, then RPi.GPIO)"
    version = _gpiod_version() if gpiod_version is None else gpiod_version
    if not version:
        return None, f"{chips[0]} exists but the gpiod package does not import: gpiozero's own order"
    if not version.startswith("2."):
        return None, f"{chips[0]} exists but gpiod {version} is not 2.x: gpiozero's own order"
    return "gpiod", f"{chips[0]} exists and gpiod {version} imports (kernel edge events, no polling)"


def pin_factory(backend, environ=os.environ):
    """The gpiozero pin factory for a config's `buttons.backend` (None: gpiozero chooses)."""
    chosen, _ = choose_backend(backend, environ)
    if chosen is None:
        return None  # GPIOZERO_PIN_FACTORY if set, else gpiozero's own order (lgpio first)
    if chosen == "gpiod":
        from .gpiod_pins import GpiodFactory

        return GpiodFactory()
    if chosen == "lgpio":
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    if chosen == "rpigpio":
        from gpiozero.pins.rpigpio import RPiGPIOFactory

        return RPiGPIOFactory()
    from .virtual import MonotonicTime, VirtualFactory

    return VirtualFactory(MonotonicTime())


def _gpiod_version():
    try:
        import gpiod
    except ImportError:
        return ""
    return getattr(gpiod, "__version__", "") or ""
