"""The command line as a test runs it: `tileclock ARGV` in this process, and pools of options and
words to throw at the commands that finish by themselves."""

import io
import sys

from hypothesis import strategies as st

from tileclock.cli import main


def run(argv, stdin=""):
    """`tileclock ARGV` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own refusals
        code = exit.code
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


# Any arguments at all, to the commands that finish by themselves: an answer or one line of error.
OPTIONS = {
    "replay": ["--at", "--after-seq", "--game", "--png", "--plot"],
    "export": ["--journal", "--game", "--no-pictures"],
    "plot": ["--game", "--at", "--title"],
    "sheet": ["--tsh", "--config", "--pairings", "--tables", "--seat", "--round", "--out", "--no-pictures"],
    "scores": ["--tsh", "--config", "--tables", "--seat", "--round", "--entries", "--out", "--dry-run"],
    "sim": ["--script", "--rules", "--time", "--config", "--frames"],
}
WORDS = st.one_of(
    st.sampled_from(["-", "0", "-1", "3", "1:00", "25:01.5", "99:99", "A=1:00", "B=", "naspa", "x.csv", "x.json", "x.png"]),
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=6),
)  # fmt: skip  # one pool of words a line
