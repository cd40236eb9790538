"""The layers of docs/architecture.md, read off the source: no import points from a lower layer to a higher one.

Every import counts, also one inside a function (a command that loads a layer only when it needs it).
The house rules beside them: each layer a folder, the director's modules in rooms, no director
module importing the device, and no circle of imports (issue 36): a folder's modules import one
another one way only, so each can be read, tested and moved with what it stands on. A module's size
is a soft rule only (a warning past SOFT_LINES): splitting a module for size alone made a circle.
"""

import ast
import functools
import sys
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "firmware" / "tileclock"

#: Each part of the package, and the parts it must never import (docs/architecture.md#what-lives-where).
NEVER = {
    "wire": {"clock", "device", "director", "sim", "bench", "cli"},
    "clock": {"device", "director", "sim", "bench", "cli"},
    "device": {"director", "sim", "bench", "cli"},
    "director": {"device", "sim", "bench", "cli"},
    "sim": {"director", "bench", "cli"},
    "bench": {"cli"},
    "cli": set(),
}
#: The director's rooms (docs/architecture.md#what-lives-where): every director module lies in one.
DIRECTOR_ROOMS = {"records", "follow", "hall", "pages", "event"}
#: Past this many lines a module is worth a look (a warning, not a failure): split it by what it
#: owns, never by size alone.
SOFT_LINES = 400
#: Standard modules the pure core must not touch: real time, sleeping, threads, files, devices.
NOT_IN_THE_CORE = {"time", "threading", "asyncio", "os", "io", "socket", "select", "subprocess", "signal"}


def modules():
    """(dotted name, path) of every module in the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


@functools.cache
def parsed(path):
    """The syntax tree of the module at `path`, parsed once a run: every rule below walks it,
    several hundred times in all."""
    return ast.parse(path.read_text(), str(path))


def import_targets(name, path):
    """(module, names, bare) of each import in `path`, relative imports resolved against its
    package: `import a.b` is ("a.b", [], False), `from .x import y` ("PACKAGE.x", ["y"], False),
    `from . import y` ("PACKAGE", ["y"], True): bare, its names may be modules."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            yield from ((alias.name, [], False) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module
            yield target, [alias.name for alias in node.names], not node.module


def imports(name, path):
    """The absolute names `path` imports (relative imports resolved against its package)."""
    for target, names, bare in import_targets(name, path):
        yield target
        if bare:  # `from . import x` may name a module: count `base.x` too
            yield from (f"{target}.{alias}" for alias in names)


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
            if target != "tileclock" and not (within(target, "clock") or within(target, "wire")):
                outside.append(target)
        elif top not in sys.stdlib_module_names or top in NOT_IN_THE_CORE:
            outside.append(target)
    assert outside == [], f"{name} is the pure core: it may not import {outside}"


@pytest.mark.parametrize("name", sorted(name for name in MODULES if part_of(name) == "wire"))
def test_the_wire_imports_only_itself_and_standard_modules(name):
    outside = []
    for target in imports(name, MODULES[name]):
        top = target.split(".")[0]
        if (top == "tileclock" and not within(target, "wire")) or (
            top != "tileclock" and top not in sys.stdlib_module_names
        ):
            outside.append(target)
    assert outside == [], f"{name} is the ground floor: it may not import {outside}"


def test_every_layer_is_a_folder():
    loose = sorted(
        path.name for path in PACKAGE.glob("*.py") if path.name not in ("__init__.py", "__main__.py")
    )
    assert loose == [], f"modules {loose} at the package's top: each belongs in a layer's folder"
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert folders == set(NEVER), "each layer of NEVER is a folder of the package, and no other"


def test_every_director_module_lies_in_a_room():
    director = PACKAGE / "director"
    loose = sorted(path.name for path in director.glob("*.py") if path.name != "__init__.py")
    assert loose == [], f"director/{loose}: put each in the room it belongs to ({sorted(DIRECTOR_ROOMS)})"
    rooms = {path.name for path in director.iterdir() if (path / "__init__.py").exists()}
    assert rooms == DIRECTOR_ROOMS, "a new room of director/: name it here and in docs/architecture.md"


def test_a_long_module_is_only_a_warning():
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text().splitlines())) > SOFT_LINES
    }
    if long:
        warnings.warn(f"modules over {SOFT_LINES} lines, worth a look: {long}", stacklevel=1)


def module_edges(name, path):
    """The package's modules that `name` imports, each import resolved to the module it loads:
    `from .x import y` is `x` (or `x.y` when that is a module), `from . import y` is `y`; a
    function-local import counts as any other."""
    for target, names, _bare in import_targets(name, path):
        submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
        yield from submodules
        if target in MODULES and len(submodules) < len(names or [None]):
            yield target


def import_circles():
    """Each set of the package's modules that import one another round a circle (Tarjan's strongly
    connected components of the import graph, larger than one module)."""
    graph = {name: set(module_edges(name, path)) - {name} for name, path in MODULES.items()}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_modules_import_one_another_round_a_circle():
    assert import_circles() == [], (
        "modules that import one another (a function-local import counts): move what both need into "
        "a module below them both"
    )


def test_the_circle_rule_sees_a_circle_hidden_in_a_function(tmp_path, monkeypatch):
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("from .second import thing\n")
    second.write_text("def late():\n    from .first import other\n")
    monkeypatch.setattr(
        sys.modules[__name__], "MODULES", {"tileclock.x.first": first, "tileclock.x.second": second}
    )
    assert import_circles() == [["tileclock.x.first", "tileclock.x.second"]]


def reads_a_command_line(path):
    """Where module `path` handles a command's arguments as the argparse Namespace: `args.x`,
    `getattr(args, ...)`, `args.x = ...`, or a Namespace made up (`SimpleNamespace(...)`). A
    program with a parser of its own (`ArgumentParser`, firstboot's `main(argv)`) may."""
    tree = parsed(path)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    named = {getattr(call.func, "id", getattr(call.func, "attr", None)) for call in calls}
    if "ArgumentParser" in named:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args":
            found.append(f"line {node.lineno}: args.{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
            if node.args and getattr(node.args[0], "id", None) == "args":
                found.append(f"line {node.lineno}: getattr(args, ...)")
    made_up = ("Namespace", "SimpleNamespace")
    for call in calls:
        if getattr(call.func, "id", getattr(call.func, "attr", None)) in made_up:
            found.append(f"line {call.lineno}: a made-up Namespace")
    return found


@pytest.mark.parametrize("name", sorted(name for name in MODULES if part_of(name) != "cli"))
def test_the_command_line_s_arguments_stay_in_cli(name):
    """Below cli/, every function takes typed arguments: the Namespace is turned into them by the
    command (docs/architecture.md), never stored, probed, changed or forged by the domain."""
    found = reads_a_command_line(MODULES[name])
    assert found == [], (
        f"{name} reads the command line's Namespace ({', '.join(found)}): take typed arguments"
    )


def talks_to_hardware_libraries(name):
    """The hardware adapters, and the measurements, which compare them with the libraries' own drivers."""
    return within(name, "device.hardware") or within(name, "bench")


@pytest.mark.parametrize("name", sorted(name for name in MODULES if not talks_to_hardware_libraries(name)))
def test_pin_and_panel_libraries_are_imported_only_by_the_hardware_adapters(name):
    wrong = [
        target for target in imports(name, MODULES[name]) if target.split(".")[0] in ("gpiozero", "luma")
    ]
    assert wrong == [], f"{name} imports {wrong}: only device/hardware/ (and bench/) may"


def own_bases(name, path):
    """{class: [its bases that are the project's own]} for each class of module `name`: a base
    defined in the module, or imported from the package (a library's class, or Exception, is not)."""
    tree = parsed(path)
    own = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("tileclock")):
            own |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):  # `import tileclock.x as y`: its classes are ours
            own |= {
                (alias.asname or alias.name).split(".")[0]
                for alias in node.names
                if alias.name.startswith("tileclock")
            }
    bases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = [ast.unparse(base) for base in node.bases]
            bases[f"{name}.{node.name}"] = [base for base in names if base.split(".")[0] in own]
    return bases


@pytest.mark.parametrize(
    "name",
    sorted(
        name
        for name in MODULES
        if part_of(name) in ("clock", "device") and "class " in MODULES[name].read_text()
    ),
)
def test_no_class_in_the_core_or_the_device_is_built_from_several_bases_of_its_own(name):
    many = {cls: bases for cls, bases in own_bases(name, MODULES[name]).items() if len(bases) > 1}
    assert many == {}, (
        "a class owns its state: compose parts that each own theirs, no mixins over shared fields"
    )
