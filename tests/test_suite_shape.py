"""The suite's own shape: no test module imports another. What several share (a fixture, a helper,
a stand-in) lives in tests/support/, named for what it holds, so a test module can be read, run,
moved or deleted alone, and each module-scoped fixture is made once per module that imports it."""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: the modules that could import a test module: the test modules, conftest, and support's
SUITE = sorted([*TESTS.glob("*.py"), *(TESTS / "support").glob("*.py")])
#: the calls that import a module named in a string
IMPORTERS = {"import_module", "importorskip", "__import__"}


def is_test_module(name):
    """Whether dotted `name` is a test module of the suite (`test_hall`, `tests.test_hall`)."""
    return name.split(".")[-1].startswith("test_")


def imported_test_modules(path):
    """(line, module) of each test module `path` imports: at the top or inside a function, by an
    import statement or by a call that imports a module named in a string."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom) and not node.level and is_test_module(node.module or ""):
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in IMPORTERS
        ):
            named = node.args[0] if node.args else None
            if (
                isinstance(named, ast.Constant)
                and isinstance(named.value, str)
                and is_test_module(named.value)
            ):
                found.append((node.lineno, named.value))
    return found


def test_no_test_module_imports_another():
    imported = [
        f"{path.relative_to(TESTS)}:{line}: {module}"
        for path in SUITE
        for line, module in imported_test_modules(path)
    ]
    assert imported == [], (
        "a test module imports another: move what it takes into tests/support/ (a module named for "
        "what it holds) and import it from there"
    )


def test_the_rule_sees_an_import_of_a_test_module_however_it_is_made(tmp_path):
    path = tmp_path / "test_one.py"
    path.write_text(
        "import json\n"
        "from support.halls import Clocks\n"
        "from test_two import hall  # the fixture\n"
        "def test_x():\n"
        "    import tests.test_three\n"
        "    pytest.importorskip('test_four')\n"
    )
    assert imported_test_modules(path) == [(3, "test_two"), (5, "tests.test_three"), (6, "test_four")]


def test_support_holds_no_tests():
    """pytest collects any test_*.py under tests/: a support module so named would be run as tests."""
    assert sorted(path.name for path in (TESTS / "support").glob("test_*.py")) == []
