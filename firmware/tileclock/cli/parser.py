"""The `tileclock` command's parser: every command, in the order --help lists them, with the
clock's commands' arguments (`sim`, `run`, `doctor`, `bench`, `hall-bench`) and the handler each runs.

The director's commands' arguments: director_arguments.py. The handlers live beside this file, by
whom they serve (`clock_commands`, `director_commands`); each loads the layer it needs only when it
runs. The pieces several commands share (the checked values `number` and `web_address`, the
pairings' options): options.py.
"""

import argparse

from .. import __version__
from ..clock.rules import PROFILES
from ..device.wiring import WIRINGS
from .clock_commands import cmd_bench, cmd_doctor, cmd_hall_bench, cmd_run, cmd_sim
from .director_arguments import add_director_commands
from .options import number


def build_parser():
    """The `tileclock` command's parser: each command's arguments, and its handler as `run`."""
    parser = argparse.ArgumentParser(
        prog="tileclock", description="A tournament game clock for Scrabble-style word games, and its tools."
    )
    parser.add_argument("--version", action="version", version=f"tileclock {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    sim = commands.add_parser("sim", help="run the clock on simulated hardware")
    sim.add_argument(
        "--script", metavar="FILE", help="run a script of button edges in virtual time ('-': stdin)"
    )
    sim.add_argument("--rules", choices=sorted(PROFILES), help="rules profile (default: the config's, naspa)")
    sim.add_argument("--config", metavar="FILE", help="a config.toml")
    sim.add_argument(
        "--frames", metavar="DIR", help="with --script: write every new panel frame as PNG into DIR"
    )
    sim.add_argument(
        "--time",
        action="append",
        metavar="SIDE=m:ss",
        help="a side's starting time, live or with --script (repeatable): --time A=1:00 reaches overtime"
        " in a minute",
    )
    sim.add_argument(
        "--speed",
        metavar="N",
        type=number(float, 0.1, 1000),
        help="live only (refused with --script, which runs in virtual time already): the clock runs N times"
        " real time, the buttons' timings too (at 10, a 2 s hold is 0.2 s)",
    )
    sim.add_argument(
        "--speech",
        metavar="DIR",
        help="with --script: write everything the clock says as a 16 kHz WAV file (and its words) into"
        " DIR, for the config's [speech] sides, or both if it names none (needs espeak-ng)",
    )
    sim.set_defaults(run=cmd_sim)

    run = commands.add_parser("run", help="run the clock (the service; --simulate off a Pi)")
    run.add_argument("--config", metavar="FILE", help="config.toml (default: built-in defaults)")
    run.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where the journal lives (default: $STATE_DIRECTORY or /var/lib/tileclock)",
    )
    run.add_argument(
        "--simulate", action="store_true", help="simulated buttons and panels (serial as configured)"
    )
    run.add_argument(
        "--script",
        metavar="FILE",
        help="with --simulate: press the buttons as FILE says, in real time, then stop",
    )
    run.add_argument(
        "--timings", metavar="FILE", help="on stopping, write where each wake's time went (tileclock bench)"
    )
    run.add_argument("--stay", action="store_true", help="with --script: keep running after the script ends")
    run.add_argument(
        "--line",
        metavar="PATH",
        help="with --simulate: the record line on a simulated cable whose other end is PATH "
        "(for tileclock collect PATH)",
    )
    run.set_defaults(run=cmd_run)

    doctor = commands.add_parser("doctor", help="check the Pi: pins, buttons, panels, serial, state, service")
    doctor.add_argument("--config", default="/etc/tileclock/config.toml", help="the config to check")
    doctor.add_argument("--state-dir", metavar="DIR", help="where the journal lives")
    doctor.set_defaults(run=cmd_doctor)

    add_director_commands(commands)

    bench = commands.add_parser(
        "bench", help="measure exactness, wake-ups, CPU, latency, bus bytes, start-up, memory"
    )
    bench.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    bench.add_argument("--quick", action="store_true", help="shorter runs (under a minute)")
    bench.add_argument(
        "--state-dir", metavar="DIR", help="where the measured service keeps its journal (default: on a disk)"
    )
    bench.add_argument(
        "--wiring",
        action="append",
        choices=[*WIRINGS, "all"],
        help="instead, price the panels' wiring: the same presses for each one named (repeat it, or all)",
    )
    bench.add_argument(
        "--speech",
        choices=["A", "B", "AB"],
        help="the measured service speaks to these sides (espeak-ng and aplay beside the loop), to compare",
    )
    bench.set_defaults(run=cmd_bench)

    hall_bench = commands.add_parser(
        "hall-bench",
        help="200 simulated clocks through one mosquitto to the director: loss, page latency, CPU, memory",
    )
    hall_bench.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    hall_bench.add_argument(
        "--chaos",
        action="store_true",
        help="the hall on bad Wi-Fi: stalls, loss, an access point's reboot, a one-way fault, the laptop asleep",
    )
    hall_bench.add_argument(
        "--netns",
        action="store_true",
        help="with --chaos: each group in a network namespace, outages on its link (root)",
    )
    hall_bench.add_argument(
        "--quick", action="store_true", help="20 clocks at 60 times real time, shorter phases (2 minutes)"
    )
    hall_bench.add_argument("--clocks", type=number(int, 1), help="how many clocks (default 200)")
    hall_bench.add_argument("--processes", type=number(int, 1), help="in how many processes (default 4)")
    hall_bench.add_argument(
        "--viewers",
        type=number(int, 0),
        help="pages open on the live stream besides the bench's own (default 50; --quick 5)",
    )
    hall_bench.add_argument(
        "--speed", type=number(float, 0.01), help="game time runs this many times real time (default 30)"
    )
    hall_bench.add_argument(
        "--no-health",
        action="store_true",
        help="the clocks' states without their health: beside a run with it, what the health column costs",
    )
    hall_bench.add_argument(
        "--spectators",
        type=number(int, 1),
        metavar="N",
        help="instead: what N spectators on the spectators' broker cost tileclock hall (50 clocks at 10x)",
    )
    hall_bench.add_argument(
        "--direct",
        action="store_true",
        help="with --spectators: the spectators on the spectators' mosquitto itself, past its door (to compare)",
    )
    hall_bench.add_argument(
        "--out",
        metavar="DIR",
        help="where the broker, journals and records live (default: a new folder on a disk)",
    )
    hall_bench.set_defaults(run=cmd_hall_bench)
    return parser
