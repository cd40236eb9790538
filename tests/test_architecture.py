"""The layers of docs/architecture.md, read off the source: no import points from a lower layer to a higher one.

Every import counts, also one inside a function (a command that loads a layer only when it needs it).
"""

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "firmware" / "tileclock"

#: Each part of the package, and the parts it must never import (docs/architecture.md#what-lives-where).
NEVER = {
    "clock": {"device", "director", "sim", "bench", "cli"},
    "device": {"director", "sim", "bench", "cli"},
    "director": {"device.hardware", "sim", "bench", "cli"},
    "sim": {"director", "bench", "cli"},
    "bench": {"cli"},
    "cli": set(),
}
#: Standard modules the pure core must not touch: real time, sleeping, threads, files, devices.
NOT_IN_THE_CORE = {"time", "threading", "asyncio", "os", "io", "socket", "select", "subprocess", "signal"}


def modules():
    """(dotted name, path) of every module in the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imports(name, path):
    """The absolute names `path` imports (relative imports resolved against its package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module
            yield target
            # `from . import x` may name a module: count `base.x` too
            yield from (f"{target}.{alias.name}" for alias in node.names if not node.module)


def part_of(name):
    """The part of the package a dotted name lies in (`device`, `sim`...), or None for the root."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def within(name, part):
    """Whether `name` lies in `part` (`device.hardware` counts as within `device.hardware` only)."""
    return (name + ".").startswith(f"tileclock.{part}.")


MODULES = dict(modules())


def test_every_part_of_the_package_has_a_place_in_the_layers():
    parts = {part_of(name) for name in MODULES} - {None, "__main__"}
    assert parts <= set(NEVER), (
        f"new part(s) {parts - set(NEVER)}: give them a layer here and in docs/architecture.md"
    )


@pytest.mark.parametrize("name", sorted(name for name in MODULES if part_of(name) in NEVER))
def test_no_import_points_up_the_layers(name):
    part = part_of(name)
    wrong = [
        target
        for target in imports(name, MODULES[name])
        if any(within(target, never) for never in NEVER[part])
    ]
    assert wrong == [], f"{name} ({part}/) imports {wrong}: see docs/architecture.md"


@pytest.mark.parametrize("name", sorted(name for name in MODULES if part_of(name) == "clock"))
def test_the_core_imports_nothing_but_itself_and_plain_standard_modules(name):
    outside = []
    for target in imports(name, MODULES[name]):
        top = target.split(".")[0]
        if top == "tileclock":
            if target != "tileclock" and not within(target, "clock"):
                outside.append(target)
        elif top not in sys.stdlib_module_names or top in NOT_IN_THE_CORE:
            outside.append(target)
    assert outside == [], f"{name} is the pure core: it may not import {outside}"


def talks_to_hardware_libraries(name):
    """The hardware adapters, and the measurements, which compare them with the libraries' own drivers."""
    return within(name, "device.hardware") or within(name, "bench")


@pytest.mark.parametrize("name", sorted(name for name in MODULES if not talks_to_hardware_libraries(name)))
def test_pin_and_panel_libraries_are_imported_only_by_the_hardware_adapters(name):
    wrong = [
        target for target in imports(name, MODULES[name]) if target.split(".")[0] in ("gpiozero", "luma")
    ]
    assert wrong == [], f"{name} imports {wrong}: only device/hardware/ (and bench/) may"
