"""The `tileclock` command's parser: every command, its arguments, and the handler it runs.

The handlers live beside this file, by whom they serve (`clock_commands`, `director_commands`);
each loads the layer it needs only when it runs. The pieces several commands share (the checked
values `number` and `web_address`, the pairings' options): options.py.
"""

import argparse

from .. import __version__
from ..clock.rules import PROFILES
from ..device.wiring import WIRINGS
from .clock_commands import cmd_bench, cmd_doctor, cmd_hall_bench, cmd_run, cmd_sim
from .director_commands import (
    cmd_collect,
    cmd_export,
    cmd_hall,
    cmd_hall_demo,
    cmd_hall_setup,
    cmd_plot,
    cmd_replay,
    cmd_scores,
    cmd_sheet,
)
from .options import number, pairing_options, web_address


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
    hall.add_argument(
        "--port", type=number(int, 1, 65535), help="its port (default 8883 with --tls-ca, else 1883)"
    )
    hall.add_argument(
        "--password",
        nargs="?",
        const=True,
        metavar="VALUE",
        help="alone: ask for the director's password on the broker (a VALUE here is seen by every user: "
        "it works, with a warning)",
    )
    hall.add_argument(
        "--password-file",
        metavar="FILE",
        help="read the password from FILE (default: $TILECLOCK_HALL_PASSWORD, else none)",
    )
    hall.add_argument("--tls-ca", metavar="FILE", help="TLS to the broker, checked against this CA file")
    hall.add_argument(
        "--keys",
        metavar="FILE",
        help="the clocks' command keys (hall-setup's tileclock.keys): commands sealed",
    )
    hall.add_argument("--out", default="tileclock-records", help="folder for game files and results.csv")
    hall.add_argument("--serial", action="append", metavar="PORT", help="also collect from a serial port")
    hall.add_argument(
        "--web",
        default="127.0.0.1:8080",
        type=web_address,
        metavar="HOST:PORT",
        help="where the page is served",
    )
    hall.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a name or address browsers may reach the page by (repeatable; default: this laptop's own)",
    )
    hall.add_argument(
        "--phones",
        default="0.0.0.0:8082",
        type=web_address,
        metavar="HOST:PORT",
        help="the players' door: the score form and nothing else (default 0.0.0.0:8082, the hall's network; 8081 is the spectators')",
    )
    hall.add_argument(
        "--page-password-file",
        metavar="FILE",
        help="hall-setup's tileclock-page.passwd: the director's login where --web is not loopback",
    )
    hall.add_argument(
        "--phone-url",
        metavar="URL",
        help="http://ADDRESS:PORT, the players' door as the phones reach it: each ended game's score "
        "link goes to its clock, shown as a QR code (default: --phones', unless loopback or 0.0.0.0)",
    )
    pairing_options(hall, required=False, seats=False, tsh_dir=True)  # the names on the score forms
    hall.add_argument(
        "--round",
        type=number(int, 1, 99),
        metavar="N",
        help=(
            "the round the page offers where the pairings do not say (CSV pairings); with TSH's files the "
            "page offers TSH's next unscored round, and a --round TSH is not on is refused"
        ),
    )
    hall.set_defaults(run=cmd_hall)

    demo = commands.add_parser("hall-demo", help="a private broker, simulated clocks playing, and the page")
    demo.add_argument("--clocks", type=number(int, 1), default=20, help="how many clocks (default 20)")
    demo.add_argument(
        "--speed", type=number(float, 0.01), default=1.0, help="game time runs this many times real time"
    )
    demo.add_argument(
        "--web", default="127.0.0.1:8080", type=web_address, metavar="HOST:PORT", help="the page"
    )
    demo.add_argument(
        "--phones",
        default="127.0.0.1:0",
        type=web_address,
        metavar="HOST:PORT",
        help="the players' door, the score form's (default: a free port on this laptop)",
    )
    demo.add_argument(
        "--director",
        action="store_true",
        help="a scripted director plays along: rounds, a call, a correction",
    )
    demo.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a name or address browsers may reach the page by (repeatable; default: this laptop's own)",
    )
    demo.add_argument(
        "--out", metavar="DIR", help="where the broker, clocks and records live (default: a temp dir)"
    )
    demo.set_defaults(run=cmd_hall_demo)

    hall_setup = commands.add_parser("hall-setup", help="write the hall's broker and time server configs")
    hall_setup.add_argument("folder", help="where to write them")
    hall_setup.add_argument(
        "--clock",
        action="append",
        default=[],
        metavar="ID",
        help="a clock id (repeatable): `tileclock doctor` on each clock prints it (its `clock id` line)",
    )
    address = (
        "this laptop's address, as the clocks' [hall] broker (chrony-clock.conf, the broker's certificate)"
    )
    hall_setup.add_argument("--address", metavar="HOST", help=address)
    hall_setup.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="NAME",
        help="another name or address the clocks reach the broker by (repeatable; its certificate names it)",
    )
    hall_setup.add_argument(
        "--plain",
        action="store_true",
        help="also listen in the clear on 1883 (passwords and commands readable on the Wi-Fi; doctor says so)",
    )
    hall_setup.add_argument(
        "--time-allow", default="all", metavar="NET", help="chrony's allow: all, a subnet"
    )
    hall_setup.add_argument(
        "--boards",
        metavar="LIST",
        help="with --cards: the boards to make a clock each for (1-30, or 1-12,20): ids board-N",
    )
    hall_setup.add_argument(
        "--cards",
        metavar="DIR",
        help="write DIR/board-N/tileclock-settings.txt for each of --boards, ready to copy to its card",
    )
    hall_setup.add_argument(
        "--card-base",
        metavar="FILE",
        help="a settings file whose lines every card gets too (Wi-Fi, rules, panels; not the hall's)",
    )
    hall_setup.set_defaults(run=cmd_hall_setup)

    export = commands.add_parser("export", help="export the journal's games as CSV and JSON")
    export.add_argument(
        "--state-dir",
        "--journal",  # the earlier name, still taken
        dest="journal",
        metavar="DIR",
        default="/var/lib/tileclock",
        help="where the journal lives, as for `run` and `doctor` (or its journal/ folder, or a "
        "single journal file; --journal is the same; default: /var/lib/tileclock)",
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
    pairing_options(sheet)
    sheet.add_argument(
        "--round", type=int, metavar="N", help="the round (default: each round the games' records name)"
    )
    sheet.add_argument("--out", default="sheets", help="folder for round-N.csv, round-N.html and pictures")
    sheet.add_argument("--no-pictures", action="store_true", help="no picture of each game")
    sheet.add_argument(
        "--entries",
        metavar="CSV",
        help="the slips' scores (as for `scores`): each table's final scores, step by step",
    )
    sheet.set_defaults(run=cmd_sheet)

    scores = commands.add_parser(
        "scores", help="a round's final scores, penalties applied, as lines for TSH's score entry (director)"
    )
    scores.add_argument("games", nargs="+", metavar="PATH", help="collect's folder, game files or journals")
    pairing_options(scores, csv=False, tsh_dir=True)
    scores.add_argument(
        "--round",
        type=number(int, 1, 999),
        metavar="N",
        help="the round to enter (default: TSH's next unscored round; one TSH is not on yet is refused)",
    )
    scores.add_argument(
        "--entries",
        "--slips",
        metavar="CSV",
        help="the scores as written on the slips: table,score_a,score_b (optional seat_a, by, at)",
    )
    scores.add_argument("--out", default="scores", help="folder for round-N-DIV.tsh and round-N-scores.csv")
    scores.add_argument("--dry-run", action="store_true", help="show what would be entered; write nothing")
    scores.add_argument(
        "--queue",
        action="store_true",
        help="with --tsh-dir: put the scores into TSH's queue (else only shown)",
    )
    scores.set_defaults(run=cmd_scores)

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
        help="the hall on bad Wi-Fi: stalls, an access point's reboot, a one-way fault, the laptop asleep",
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
        "--spectators",
        type=number(int, 1),
        metavar="N",
        help="instead: what N spectators on the spectators' broker cost tileclock hall (50 clocks at 10x)",
    )
    hall_bench.add_argument(
        "--out",
        metavar="DIR",
        help="where the broker, journals and records live (default: a new folder on a disk)",
    )
    hall_bench.set_defaults(run=cmd_hall_bench)
    return parser
