"""The director's commands' arguments: `collect`, the hall's (`hall`, `hall-demo`, `hall-setup`,
`spectators`),
`export`, `replay`, `sheet`, `scores` and `plot`, each with the handler it runs (director_commands.py, hall_setup.py).

parser.py places them among the clock's commands, in the order `tileclock --help` lists them.
"""

from .director_commands import (
    cmd_collect,
    cmd_export,
    cmd_hall,
    cmd_hall_demo,
    cmd_plot,
    cmd_replay,
    cmd_scores,
    cmd_sheet,
    cmd_spectators,
)
from .hall_setup import cmd_hall_setup
from .options import number, pairing_options, web_address


def plain_http(command):
    """`--plain-http DOOR`: a door of the page in the clear, asked for by name (`hall`, `hall-demo`)."""
    command.add_argument(
        "--plain-http",
        choices=["players", "director", "both"],
        metavar="DOOR",
        help="serve that door (players, director or both) in plain HTTP, not HTTPS: readable on the "
        "Wi-Fi; the console and the page say so",
    )


def add_director_commands(commands):
    """Add the director's commands, in --help's order, to `commands` (the parser's subparsers)."""
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
        "--page-tls",
        metavar="DIR",
        help="hall-setup's folder: the page's certificate (tileclock-page.pem, .key) for both doors' "
        "HTTPS (default: the folder of --tls-ca or --keys)",
    )
    plain_http(hall)
    hall.add_argument(
        "--page-password-file",
        metavar="FILE",
        help="hall-setup's tileclock-page.passwd: the director's login where --web is not loopback",
    )
    hall.add_argument(
        "--phone-url",
        metavar="URL",
        help="https://ADDRESS:PORT, the players' door as the phones reach it: each ended game's score "
        "link goes to its clock, shown as a QR code (default: --phones', unless loopback or 0.0.0.0)",
    )
    hall.add_argument(
        "--plan",
        metavar="FILE",
        help="the room drawn in text, a line a row of tables, each word a board, '.' a gap: the page's Map",
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
    plain_http(demo)
    demo.set_defaults(run=cmd_hall_demo)

    spectators = commands.add_parser(
        "spectators", help="the spectators' door: their pages, relayed to the spectators' broker"
    )
    spectators.add_argument(
        "--listen",
        default="0.0.0.0:8081",
        type=web_address,
        metavar="HOST:PORT",
        help="where the phones reach the spectators' pages (default: every interface, 8081)",
    )
    spectators.add_argument(
        "--broker-port",
        default=1884,
        type=number(int, 1, 65535),
        metavar="PORT",
        help="the spectators' mosquitto's listener on 127.0.0.1 (tileclock-viewers.conf's: 1884)",
    )
    spectators.set_defaults(run=cmd_spectators)

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
        "--page-cert",
        action="store_true",
        help="only the page's certificate (tileclock-page.pem, .key) from the CA already in the folder, "
        "for a folder written before the page spoke HTTPS; nothing else rewritten",
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
