"""The two commands of the quick start survive a wrong Python: a clear word, and a stale .venv made again."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make(*args):
    # a fresh make, as a newcomer types it: not one nested in `make test` (which prints its directory)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, env=env)


def test_an_old_python_is_named_with_the_fix_before_anything_is_built(tmp_path):
    old = tmp_path / "python3.10"
    old.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "Python 3.10.12" || echo 0\n')
    old.chmod(0o755)
    result = make("test", f"PYTHON={old}", f"VENV={tmp_path / 'venv'}")
    assert result.returncode == 2 and result.stdout == ""
    assert "needs Python 3.11 or later" in result.stderr and "is Python 3.10.12" in result.stderr
    assert "make PYTHON=python3.11" in result.stderr
    assert "not found" in make("sim", "PYTHON=no-such-python", f"VENV={tmp_path / 'venv'}").stderr


def test_a_venv_made_by_an_interpreter_since_removed_is_made_again(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to("/nonexistent/python3.10")
    (venv / ".installed").touch()  # it once installed fine
    result = make("test", f"VENV={venv}")
    assert result.returncode == 0 and not venv.exists()
    assert result.stdout.splitlines()[0] == f"python3 -m venv {venv}"


def test_sim_installs_the_clock_alone_and_test_installs_everything(tmp_path):
    venv = tmp_path / "venv"
    sim = make("sim", f"VENV={venv}").stdout
    assert "pip install --quiet -e .;" in sim and "[test" not in sim and "director" not in sim
    assert f"touch {venv}/.installed-sim" in sim
    assert "pip install --quiet -e '.[test,director]'" in make("test", f"VENV={venv}").stdout


def test_sim_uses_a_venv_that_make_test_filled_as_it_is(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(Path(os.path.realpath(ROOT / ".venv" / "bin" / "python")))
    (venv / ".installed").touch()  # `make test` installed everything, after pyproject.toml last changed
    os.utime(venv / ".installed", (os.path.getmtime(ROOT / "pyproject.toml") + 1,) * 2)
    result = make("sim", f"VENV={venv}")
    assert result.returncode == 0 and f"[ {venv}/.installed -nt pyproject.toml ] ||" in result.stdout
    check = subprocess.run(["sh", "-c", result.stdout.splitlines()[0].split(" || ")[0]], cwd=ROOT)
    assert check.returncode == 0  # so the install after `||` is skipped


def test_make_tools_names_every_command_of_the_director():
    """`make tools` says which commands it installed: it named six of the director's nine (no
    `scores`, `hall-demo` nor `hall-setup`), so a director never learnt of them there."""
    import argparse

    from tileclock.cli.director_arguments import add_director_commands

    commands = argparse.ArgumentParser().add_subparsers()
    add_director_commands(commands)
    said = make("tools", "VENV=.venv").stdout
    line = next(line for line in said.splitlines() if "the director's tools" in line)
    named = line.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(named) == sorted(commands.choices)


def test_hall_bench_runs_the_hall_with_the_health_and_again_without_it(tmp_path):
    """`make hall-bench`: the 200 clocks' run, then the same without the health column (issue 40's
    figures before and after), one after the other on the same machine."""
    venv = tmp_path / "venv"
    said = make("hall-bench", f"VENV={venv}").stdout.splitlines()
    runs = [line.split() for line in said if "tileclock hall-bench" in line]
    tileclock = f"{venv}/bin/tileclock"
    assert runs == [
        ["nice", "-n", "10", tileclock, "hall-bench", "--clocks", "200"],
        ["nice", "-n", "10", tileclock, "hall-bench", "--clocks", "200", "--no-health"],
    ]
