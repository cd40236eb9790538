"""The `tileclock` command."""

import argparse
import sys
from dataclasses import replace

from . import __version__
from .config import Config, ConfigError, load_config, with_times
from .rules import PROFILES
from .script import ScriptError, parse_script


def _config(args):
    config = load_config(args.config) if args.config else Config()
    if args.rules:
        config = replace(config, rules=args.rules)
    return with_times(config, args.time or [])


def cmd_sim(args):
    """Run the simulator: a script in virtual time, or live in the terminal."""
    config = _config(args)
    if args.script is None:
        from .terminal import run_interactive

        return run_interactive(config)
    from .simulator import Simulator

    text = sys.stdin.read() if args.script == "-" else open(args.script, encoding="utf-8").read()
    script = parse_script(text)
    on_frames = None
    if args.frames:
        from .frames import FrameWriter

        on_frames = FrameWriter(args.frames)
    sim = Simulator(config, refresh_on_ticks=bool(args.frames), on_frames=on_frames)
    out = sys.stdout
    for t_ns, button, down in script.edges:
        sim.set_button(button, down, t_ns)
        out.writelines(line + "\n" for line in sim.serial_lines())
    sim.finish(script.end_ns)
    out.writelines(line + "\n" for line in sim.serial_lines())
    sim.close()
    return 0


def cmd_bench(args):
    """Run the benchmark and print its figures."""
    from .bench import main as bench_main

    return bench_main(args)


def build_parser():
    parser = argparse.ArgumentParser(prog="tileclock", description=__doc__)
    parser.add_argument("--version", action="version", version=f"tileclock {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    sim = commands.add_parser("sim", help="run the clock on simulated hardware")
    sim.add_argument("--script", metavar="FILE", help="run a script of button edges in virtual time ('-': stdin)")
    sim.add_argument("--rules", choices=sorted(PROFILES), help="rules profile (default: the config's, naspa)")
    sim.add_argument("--config", metavar="FILE", help="a config.toml")
    sim.add_argument("--frames", metavar="DIR", help="with --script: write every new panel frame as PNG into DIR")
    sim.add_argument("--time", action="append", metavar="SIDE=m:ss", help="a side's starting time (repeatable)")
    sim.set_defaults(run=cmd_sim)

    bench = commands.add_parser("bench", help="measure exactness, wake-ups, CPU, latency, bus bytes, start-up, memory")
    bench.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    bench.add_argument("--quick", action="store_true", help="shorter runs (under a minute)")
    bench.set_defaults(run=cmd_bench)
    return parser


def main(argv=None):
    """Entry point of the `tileclock` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ConfigError, ScriptError) as error:
        print(f"tileclock: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"tileclock: {error.filename or ''}: {error.strerror}", file=sys.stderr)
        return 2
