"""The clock's commands: `sim`, `run`, `doctor`, and the benchmarks `bench` and `hall-bench`."""

import os
import sys
from dataclasses import replace

from ..device.config import ConfigError, load_config, with_times
from ..device.config_schema import Config
from ..sim.script import ScriptError, parse_script
from .paths import file_to_write, folder_to_make, folder_to_write


def _config(args):
    config = load_config(args.config) if args.config else Config()
    if args.rules:
        config = replace(config, rules=args.rules)
    return with_times(config, args.time or [])


def read_script(path):
    """The script in `path` (`-`: standard input), parsed; errors name the file and the line."""
    name = "standard input" if path == "-" else path
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)  # bytes, where stdin has them
        data = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8")
    else:
        data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ScriptError(f"{name}, line {line}: not UTF-8 text") from None
    try:
        script = parse_script(text)
    except ScriptError as error:
        raise ScriptError(f"{name}, {error}") from None
    for note in script.notes:
        print(f"tileclock: {name}, {note}", file=sys.stderr)
    return script


def cmd_sim(args):
    """Run the simulator: a script in virtual time, or live in the terminal."""
    if args.speed is not None and args.script is not None:
        raise ConfigError(
            "--speed is for the live clock: a --script runs in virtual time already, as fast as it can"
        )
    config = _config(args)
    if args.script is None:
        from ..sim.terminal import run_interactive

        return run_interactive(config, speed=args.speed or 1.0)
    from ..sim.simulator import Simulator

    script = read_script(args.script)
    on_frames = None
    if args.frames:
        from ..sim.frames import FrameWriter

        on_frames = FrameWriter(args.frames)
    speech = None
    if args.speech:
        from dataclasses import replace

        from ..clock.speech import parse_sides
        from ..device.speaker import WavWriter

        if not config.speech.sides:  # asked for speech, so someone hears it
            config = replace(config, speech=replace(config.speech, sides=parse_sides("AB")))
        speech = WavWriter(args.speech, config.speech.rate, config.speech.volume)
    from ..device.assembly import StartError

    try:
        sim = Simulator(config, refresh_on_ticks=bool(args.frames), on_frames=on_frames, speech=speech)
    except StartError as error:  # a config the clock cannot start with: one line, not a traceback
        print(f"tileclock: {error}", file=sys.stderr)
        return 2
    out = sys.stdout
    for t_ns, button, down in script.steps():
        if button == "send":
            sim.send(down, t_ns)  # a director's command line
        elif button == "power":
            sim.set_power(down, t_ns)  # the Pi's power flags
        else:
            sim.set_button(button, down, t_ns)
        out.writelines(line + "\n" for line in sim.serial_lines())
    sim.finish(script.end_ns)
    out.writelines(line + "\n" for line in sim.serial_lines())
    sim.close()
    return 0


def cmd_bench(args):
    """Run the benchmark and print its figures."""
    if args.state_dir:
        folder_to_write(args.state_dir, "--state-dir")
    from ..bench.run import main as bench_main

    return bench_main(args.quick, args.json, args.state_dir, args.wiring, args.speech)


def cmd_hall_bench(args):
    """Run the hall's benchmark: clocks through one broker to the director, and print its figures."""
    folder_to_make(args.out, "--out")
    if args.netns:  # before minutes of setting up: namespaces need root and ip
        from ..bench.netns import unavailable

        if not args.chaos:
            raise ConfigError("--netns: the namespaces are --chaos's (hall-bench --chaos --netns)")
        if unavailable():
            raise ConfigError(f"--netns: {unavailable()}")
    if args.no_health and (args.chaos or args.spectators is not None):
        raise ConfigError("--no-health: for the plain run, to set beside one with it")
    if args.spectators is not None:  # what spectators cost the hall: a run of its own
        from ..bench.spectators import main as spectators_main

        return spectators_main(
            args.spectators,
            args.quick,
            args.json,
            args.clocks,
            args.processes,
            args.speed,
            args.out,
            args.direct,
        )
    if args.chaos:  # the hall's faults, each a case: groups of clocks behind fault proxies
        from ..bench.hall_chaos import main as chaos_main

        return chaos_main(
            args.quick, args.json, args.clocks, args.processes, args.speed, args.out, args.netns
        )
    from ..bench.hall import main as hall_bench_main

    plan = (args.quick, args.json, args.clocks, args.processes, args.viewers, args.speed, args.out)
    return hall_bench_main(*plan, health=not args.no_health)


def cmd_run(args):
    """Run the clock as a service."""
    import logging

    from ..device.assembly import StartError
    from ..device.service import DEFAULT_STATE_DIR, Service

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = load_config(args.config) if args.config else Config()
    state_dir = args.state_dir or os.environ.get("STATE_DIRECTORY") or DEFAULT_STATE_DIR
    folder_to_make(args.state_dir, "--state-dir")  # a mistake; a card that fails is run on (DISK FAULT)
    script = None
    if args.timings:
        file_to_write(args.timings, "--timings")
    if args.stay and not args.script:
        raise ConfigError("--stay keeps the clock running after its --script ends: it needs --script")
    if args.script:
        if not args.simulate:
            raise ConfigError("--script presses simulated buttons: it needs --simulate")
        script = read_script(args.script)
    cable = None
    if args.line:
        if not args.simulate:
            raise ConfigError("--line is a simulated cable, for a simulated clock: it needs --simulate")
        from ..sim.cable import Cable

        try:
            cable = Cable(args.line)
        except OSError as error:
            raise ConfigError(f"--line {args.line}: {error.strerror or error}") from error
        config = replace(config, serial_port=cable.clock_end)
        print(f"the clock's record line is at {cable.path}: tileclock collect {cable.path}", flush=True)
    try:
        service = Service(config, state_dir, simulate=args.simulate, timings=args.timings)
        return service.run(script, stay=args.stay)
    except StartError as error:
        print(f"tileclock: {error}", file=sys.stderr)
        return 1
    finally:
        if cable is not None:
            cable.close()


def cmd_doctor(args):
    """Check the machine the clock runs on."""
    from ..device.doctor import FAIL, report, run_checks
    from ..device.service import DEFAULT_STATE_DIR

    checks = run_checks(args.config, args.state_dir or os.environ.get("STATE_DIRECTORY") or DEFAULT_STATE_DIR)
    print(report(checks))
    return 1 if any(check.status == FAIL for check in checks) else 0
