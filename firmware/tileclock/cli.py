"""The `tileclock` command."""

import argparse
import math
import os
import sys
from dataclasses import replace

from . import __version__
from .clock.rules import PROFILES
from .clock.timecode import NS_PER_MS, format_clock, parse_seconds
from .device.config import Config, ConfigError, load_config, with_times
from .director.plot import DirectorExtraMissing
from .sim.script import ScriptError, parse_script


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
    config = _config(args)
    if args.script is None:
        from .sim.terminal import run_interactive

        return run_interactive(config)
    from .sim.simulator import Simulator

    script = read_script(args.script)
    on_frames = None
    if args.frames:
        from .sim.frames import FrameWriter

        on_frames = FrameWriter(args.frames)
    from .device.assembly import StartError

    try:
        sim = Simulator(config, refresh_on_ticks=bool(args.frames), on_frames=on_frames)
    except StartError as error:  # a config the clock cannot start with: one line, not a traceback
        print(f"tileclock: {error}", file=sys.stderr)
        return 2
    out = sys.stdout
    for t_ns, button, down in script.steps():
        if button == "send":
            sim.send(down, t_ns)  # a director's command line
        else:
            sim.set_button(button, down, t_ns)
        out.writelines(line + "\n" for line in sim.serial_lines())
    sim.finish(script.end_ns)
    out.writelines(line + "\n" for line in sim.serial_lines())
    sim.close()
    return 0


def _file_to_write(path, option):
    """Refuse, before a long run, a file that could not be written at its end (ConfigError naming `option`)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path}: a folder; give a file name in it")
    if not os.path.isdir(folder):
        raise ConfigError(f"{option} {path}: there is no folder {folder}")


def _folder_to_make(path, option):
    """Refuse a file where a command makes (or fills) a folder (ConfigError naming `option`)."""
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(f"{option} {path}: a file, not a folder")


def _folder_to_write(path, option):
    """Refuse, before a long run, a folder that is not there or cannot be written (ConfigError naming `option`)."""
    if not os.path.exists(path):
        raise ConfigError(f"{option} {path}: no such folder")
    if not os.path.isdir(path):
        raise ConfigError(f"{option} {path}: a file, not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: cannot write there")


def cmd_bench(args):
    """Run the benchmark and print its figures."""
    if args.state_dir:
        _folder_to_write(args.state_dir, "--state-dir")
    from .bench.run import main as bench_main

    return bench_main(args)


def cmd_hall_bench(args):
    """Run the hall's benchmark: clocks through one broker to the director, and print its figures."""
    _folder_to_make(args.out, "--out")
    from .bench.hall import main as hall_bench_main

    return hall_bench_main(args)


def cmd_run(args):
    """Run the clock as a service."""
    import logging

    from .device.assembly import StartError
    from .device.service import DEFAULT_STATE_DIR, Service

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = load_config(args.config) if args.config else Config()
    state_dir = args.state_dir or os.environ.get("STATE_DIRECTORY") or DEFAULT_STATE_DIR
    _folder_to_make(args.state_dir, "--state-dir")  # a mistake; a card that fails is run on (DISK FAULT)
    script = None
    if args.timings:
        _file_to_write(args.timings, "--timings")
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
        from .sim.cable import Cable

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
    from .device.doctor import FAIL, report, run_checks
    from .device.service import DEFAULT_STATE_DIR

    checks = run_checks(args.config, args.state_dir or os.environ.get("STATE_DIRECTORY") or DEFAULT_STATE_DIR)
    print(report(checks))
    return 1 if any(check.status == FAIL for check in checks) else 0


def cmd_collect(args):
    """Collect records from clocks on serial ports (the director's computer)."""
    from .director.collect import collect, read_tables, scene_hello
    from .director.port import check_port
    from .director.start_times import read_start_times

    _folder_to_make(args.out, "--out")
    tables = {}
    if args.tables:
        with open(args.tables, encoding="utf-8") as file:
            tables.update(read_tables(file, args.tables))
    tables.update(read_tables(args.table or [], "--table"))
    start_times = read_start_times(args.time or [], args.ports)
    for port in args.ports:  # last: a mistake in the options is said first, wherever the clocks are
        check_port(port)
    hello = scene_hello(args.round, tables)
    collect(args.ports, args.out, stop_after_idle_s=args.idle_exit, hello=hello, start_times=start_times)
    return 0


def cmd_hall(args):
    """The hall: every clock's records through the broker, and the director's web page."""
    from .director.hall import run_hall

    _folder_to_make(args.out, "--out")
    return run_hall(args, sys.stdout)


def cmd_hall_demo(args):
    """The hall in one command: a private mosquitto, simulated clocks playing, the director's page."""
    import secrets
    import tempfile
    import threading

    from .director.broker import BrokerError, LocalBroker
    from .director.hall import HallFeed
    from .director.web import HallPage
    from .sim.fleet import Fleet

    host, _, port = args.web.rpartition(":")
    _folder_to_make(args.out, "--out")
    folder = args.out or tempfile.mkdtemp(prefix="tileclock-hall-")
    ids = [f"clock-{n}" for n in range(1, args.clocks + 1)]
    users = {name: secrets.token_urlsafe(9) for name in ["director", *ids]}
    try:
        broker = LocalBroker(f"{folder}/broker", users).start()
    except BrokerError as error:
        print(f"tileclock: {error}", file=sys.stderr)
        return 1
    started = [broker.stop]  # what to stop, however far the start got
    try:
        feed = HallFeed("127.0.0.1", broker.port, users["director"], f"{folder}/records").start()
        started.append(feed.close)
        try:
            page = HallPage(feed, host or "127.0.0.1", int(port)).start()
        except OSError as error:
            print(
                f"tileclock: the page cannot listen on {args.web}: {error.strerror or error} "
                "(choose another with --web HOST:PORT)",
                file=sys.stderr,
            )
            return 1
        started.append(page.close)
        fleet = Fleet(
            f"{folder}/clocks", "127.0.0.1", broker.port, users, args.clocks, speed=args.speed
        ).start()
        started.append(fleet.close)
        print(
            f"mosquitto on 127.0.0.1:{broker.port}; {args.clocks} clocks playing ({args.speed:g}x); "
            f"records in {folder}"
        )
        print(f"the director's page: {page.address}   (Ctrl-C to stop)", flush=True)
        feed.run(threading.Event().is_set)
    except KeyboardInterrupt:
        pass
    finally:
        for stop in reversed(started):
            stop()
    return 0


def cmd_hall_setup(args):
    """Write the hall's broker config, ACL and passwords."""
    from .director.broker import BrokerError, setup

    _folder_to_make(args.folder, "hall-setup")
    try:
        users = setup(args.folder, args.clock)
    except BrokerError as error:
        print(f"tileclock: {error}", file=sys.stderr)
        return 2
    print(f"wrote tileclock.conf, tileclock.acl and tileclock.passwd in {args.folder}; the passwords:")
    for name, password in users.items():
        print(f"  {name} = {password}")
    print("give each clock its own in its [hall] section (docs/hall.md); keep them out of sight")
    return 0


def cmd_export(args):
    """Export the games of a journal as CSV and JSON (and each game's picture, with the director extra)."""
    from .director.export import export
    from .director.plot import available

    pictures = not args.no_pictures and available()  # looking costs the plotting library's memory
    written = export(args.journal, args.out, game=args.game, pictures=pictures)
    for path in written:
        print(path)
    if not pictures and not args.no_pictures and not args.out.endswith((".csv", ".json")):
        print("(no game pictures: they need the director extra, pip install 'tileclock[director]')")
    return 0


def cmd_sheet(args):
    """The penalty sheet of a round: games matched to the pairings, as CSV and a printable page."""
    from .director.results import run_sheets

    return run_sheets(args, sys.stdout)


def cmd_plot(args):
    """Draw the picture of a recorded game (PNG or SVG)."""
    from .director.plot import picture_format, write_picture
    from .director.replay import load_game

    picture_format(args.out)  # a wrong ending is refused before anything is read
    game = load_game(args.log, args.game)
    at_ms = None if args.at is None else parse_seconds(args.at) // NS_PER_MS
    print(write_picture(game, args.out, title=args.title or f"{args.log}, game {game.seq}", at_ms=at_ms))
    return 0


def cmd_replay(args):
    """Show what both screens showed at an instant of a recorded game."""
    from .device.render import Panel, render
    from .director.replay import describe, load_game, view_at, within_the_game

    if args.plot:
        from .director.plot import picture_format

        picture_format(args.plot)
    game = load_game(args.log, args.game)
    at_ms = None if args.at is None else parse_seconds(args.at) // NS_PER_MS
    at_ms, after_seq, note = within_the_game(game, at_ms, args.after_seq)
    if note:
        print(f"{note}: the state at the end")
    view, record, at_ms = view_at(game, at_ms=at_ms, after_seq=after_seq)
    print(describe(view, record, at_ms))
    if args.png:
        from .sim.frames import side_by_side

        side_by_side({side: render(view, Panel(faces=side)) for side in "AB"}).save(args.png)
        print(f"both screens drawn in {args.png}")
    if args.plot:
        from .director.plot import write_picture

        write_picture(game, args.plot, title=f"{args.log} at {format_clock(at_ms // 1000)}", at_ms=at_ms)
        print(f"the game's picture, with the instant marked, in {args.plot}")
    return 0


def build_parser():
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
        "--time", action="append", metavar="SIDE=m:ss", help="a side's starting time (repeatable)"
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

    collect = commands.add_parser("collect", help="collect records from clocks on serial ports (director)")
    collect.add_argument(
        "ports", nargs="+", metavar="PORT", help="serial ports, e.g. /dev/ttyUSB0 /dev/ttyACM0"
    )
    collect.add_argument("--out", default="tileclock-records", help="folder for game files and results.csv")
    collect.add_argument(
        "--idle-exit", type=number(float, 0), metavar="S", help="stop after S seconds with no data"
    )
    collect.add_argument(
        "--round", type=number(int, 1, 999), metavar="N", help="the round, sent to every clock (set)"
    )
    collect.add_argument(
        "--table", action="append", metavar="PORT=TABLE", help="the table of the clock on PORT (repeatable)"
    )
    collect.add_argument("--tables", metavar="FILE", help="tables of ports: lines of PORT TABLE")
    collect.add_argument(
        "--time",
        action="append",
        nargs=2,
        metavar=("PORT", "SIDE=m:ss"),
        help="a side's starting time for one game of the clock on PORT, the next to start (repeatable)",
    )
    collect.set_defaults(run=cmd_collect)

    hall = commands.add_parser(
        "hall", help="every clock through the hall's broker, and a live web page (director)"
    )
    hall.add_argument("--broker", required=True, metavar="HOST", help="the hall's mosquitto")
    hall.add_argument("--port", type=number(int, 1, 65535), default=1883, help="its port (default 1883)")
    hall.add_argument("--password", help="the director's password on the broker")
    hall.add_argument("--password-file", metavar="FILE", help="read the password from FILE instead")
    hall.add_argument("--tls-ca", metavar="FILE", help="TLS to the broker, checked against this CA file")
    hall.add_argument("--out", default="tileclock-records", help="folder for game files and results.csv")
    hall.add_argument("--serial", action="append", metavar="PORT", help="also collect from a serial port")
    hall.add_argument(
        "--web",
        default="127.0.0.1:8080",
        type=web_address,
        metavar="HOST:PORT",
        help="where the page is served",
    )
    hall.set_defaults(run=cmd_hall)

    demo = commands.add_parser("hall-demo", help="a private broker, simulated clocks playing, and the page")
    demo.add_argument("--clocks", type=number(int, 1), default=20, help="how many clocks (default 20)")
    demo.add_argument(
        "--speed", type=number(float, 0.01), default=1.0, help="game time runs this many times real time"
    )
    demo.add_argument(
        "--web",
        default="127.0.0.1:8080",
        type=web_address,
        metavar="HOST:PORT",
        help="where the page is served",
    )
    demo.add_argument(
        "--out", metavar="DIR", help="where the broker, clocks and records live (default: a temp dir)"
    )
    demo.set_defaults(run=cmd_hall_demo)

    hall_setup = commands.add_parser("hall-setup", help="write the hall's broker config, ACL and passwords")
    hall_setup.add_argument("folder", help="where to write them")
    hall_setup.add_argument(
        "--clock", action="append", default=[], metavar="ID", help="a clock id (repeatable)"
    )
    hall_setup.set_defaults(run=cmd_hall_setup)

    export = commands.add_parser("export", help="export the journal's games as CSV and JSON")
    export.add_argument(
        "--journal",
        default="/var/lib/tileclock",
        help="the clock's state directory (or its journal/ folder, or a single journal file)",
    )
    export.add_argument(
        "--game", type=int, metavar="SEQ", help="only the game whose new_game record has this seq"
    )
    export.add_argument("out", help="a folder (e.g. a USB stick), or a file ending in .csv or .json")
    export.add_argument(
        "--no-pictures", action="store_true", help="into a folder: no PNG/SVG picture beside each game"
    )
    export.set_defaults(run=cmd_export)

    replay = commands.add_parser("replay", help="what the screens showed at an instant of a recorded game")
    replay.add_argument("log", help="a clock's state directory or journal, or a game file written by collect")
    when = replay.add_mutually_exclusive_group(required=True)
    when.add_argument("--at", metavar="TIME", help="time since the game's start: seconds or m:ss[.fff]")
    when.add_argument("--after-seq", type=int, metavar="N", help="just after record N")
    replay.add_argument(
        "--game", type=int, metavar="SEQ", help="the game whose new_game has this seq (default: the last)"
    )
    replay.add_argument("--png", metavar="FILE", help="also draw both screens into FILE")
    replay.add_argument(
        "--plot", metavar="FILE", help="also draw the game's picture with the instant marked (.png or .svg)"
    )
    replay.set_defaults(run=cmd_replay)

    sheet = commands.add_parser(
        "sheet", help="the penalty sheet of a round: games matched to TSH or CSV pairings (director)"
    )
    sheet.add_argument("games", nargs="+", metavar="PATH", help="collect's folder, game files or journals")
    source = sheet.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--tsh", nargs="+", metavar="FILE", help="TSH division files (.t), one per division (read only)"
    )
    source.add_argument("--pairings", metavar="CSV", help="a CSV of round,table,first,second")
    sheet.add_argument(
        "--round", type=int, metavar="N", help="the round (default: each round the games' records name)"
    )
    sheet.add_argument("--out", default="sheets", help="folder for round-N.csv, round-N.html and pictures")
    sheet.add_argument("--no-pictures", action="store_true", help="no picture of each game")
    sheet.set_defaults(run=cmd_sheet)

    plot = commands.add_parser("plot", help="draw a recorded game: both sides' time, penalties, events")
    plot.add_argument("log", help="a journal, or a game file written by collect")
    plot.add_argument("out", help="the picture to write: FILE.png or FILE.svg")
    plot.add_argument("--game", type=int, metavar="SEQ", help="the game whose new_game has this seq")
    plot.add_argument("--at", metavar="TIME", help="mark this instant (seconds or m:ss[.fff])")
    plot.add_argument("--title", help="a title above the picture")
    plot.set_defaults(run=cmd_plot)

    bench = commands.add_parser(
        "bench", help="measure exactness, wake-ups, CPU, latency, bus bytes, start-up, memory"
    )
    bench.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    bench.add_argument("--quick", action="store_true", help="shorter runs (under a minute)")
    bench.add_argument(
        "--state-dir", metavar="DIR", help="where the measured service keeps its journal (default: on a disk)"
    )
    bench.set_defaults(run=cmd_bench)

    hall_bench = commands.add_parser(
        "hall-bench",
        help="200 simulated clocks through one mosquitto to the director: loss, page latency, CPU, memory",
    )
    hall_bench.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    hall_bench.add_argument(
        "--quick", action="store_true", help="20 clocks at 60 times real time, shorter phases (2 minutes)"
    )
    hall_bench.add_argument("--clocks", type=number(int, 1), help="how many clocks (default 200)")
    hall_bench.add_argument("--processes", type=number(int, 1), help="in how many processes (default 4)")
    hall_bench.add_argument(
        "--speed", type=number(float, 0.01), help="game time runs this many times real time (default 30)"
    )
    hall_bench.add_argument(
        "--out",
        metavar="DIR",
        help="where the broker, journals and records live (default: a new folder on a disk)",
    )
    hall_bench.set_defaults(run=cmd_hall_bench)
    return parser


def number(kind, least, most=None):
    """An argparse type: an int or float from `least` (to `most`), refused in one line naming the range."""
    span = f"from {least:g} to {most:g}" if most is not None else f"of {least:g} or more"
    word = "a whole number" if kind is int else "a number"

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or not least <= value <= (most or math.inf):
            raise argparse.ArgumentTypeError(f"{text!r}: give {word} {span}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its own messages
    return parse


def web_address(text):
    """`--web HOST:PORT` (or `:PORT`), checked here so a typo is one line, not a failed bind."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:8080"
        )
    return f"{host or '127.0.0.1'}:{int(port)}"


def main(argv=None):
    """Entry point of the `tileclock` command."""
    args = build_parser().parse_args(argv)
    try:
        code = args.run(args)
        sys.stdout.flush()  # here, so that a reader gone early is met below, not at exit
        return code
    except BrokenPipeError:
        # the reader stopped reading (`| head`): nothing to say; stdout goes nowhere from now on
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ConfigError, ScriptError, ValueError, DirectorExtraMissing) as error:
        print(f"tileclock: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"tileclock: {where}{error.strerror or error}", file=sys.stderr)
        return 2
