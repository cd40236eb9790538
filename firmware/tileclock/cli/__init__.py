"""The `tileclock` command: the entry point that parses a command line and runs its handler.

The arguments of every command: parser.py, the director's commands' in director_arguments.py
(with options.py, the pieces they share). The handlers live beside this file, by whom they serve
(`clock_commands`, `director_commands`, and the director's longer commands `hall`, `sheet` and
`scores`); each loads the layer it needs only when it runs. Which errors are the user's (one line) and which are bugs (a traceback): errors.py.
"""

import os
import sys

from .errors import said
from .parser import build_parser


def main(argv=None):
    """Entry point of the `tileclock` command. The user's errors (errors.py says which) are one
    line and exit status 2; any other error is a bug: its traceback, a line asking for a report,
    and exit status 70."""
    args = build_parser().parse_args(argv)
    try:
        code = args.run(args)
        sys.stdout.flush()  # here, so that a reader gone early is met below, not at exit
        return code
    except BrokenPipeError:
        # the reader stopped reading (`| head`): nothing to say; stdout goes nowhere from now on
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        return said(error, args)
