"""What several commands' arguments share: the checked values `number` and `web_address` (a
mistyped value refused in one line, by argparse), and `pairing_options`, where a round's pairings
come from (`sheet`, `scores`, `hall`).
"""

import argparse
import math


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


def pairing_options(parser, csv=True, required=True, seats=True, tsh_dir=False):
    """The options that say where a round's pairings come from (`sheet`, `scores`, and `hall`,
    where they are optional and name the players on the score forms); `tsh_dir`: also
    `--tsh-dir`, TSH's own folder, whose remote queue the scores are put into."""
    source = parser.add_mutually_exclusive_group(required=required)
    if tsh_dir:
        source.add_argument(
            "--tsh-dir",
            metavar="DIR",
            help="TSH's folder (its config.tsh): pairings from there, scores into its remote_queue/",
        )
    source.add_argument(
        "--tsh",
        nargs="+",
        metavar="FILE",
        help="TSH division files (.t), one per division, or TSH's tourney.js (read only)",
    )
    source.add_argument(
        "--config", dest="tsh_config", metavar="config.tsh", help="TSH's config.tsh: every division it names"
    )
    if csv:
        source.add_argument("--pairings", metavar="CSV", help="a CSV of round,table,first,second")
    parser.add_argument(
        "--tables",
        action="append",
        metavar="DIV=FIRST-LAST",
        help="the hall's tables of a division whose boards start at 1 again (repeatable): B=11-20",
    )
    if not seats:
        return
    parser.add_argument(
        "--seat",
        action="append",
        metavar="TABLE=PLAYER",
        help="the TSH player number who sat at side A of TABLE, where the pairings cannot say (repeatable)",
    )


def web_address(text):
    """`--web HOST:PORT` (or `:PORT`), checked here so a typo is one line, not a failed bind."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:8080"
        )
    return f"{host or '127.0.0.1'}:{int(port)}"
