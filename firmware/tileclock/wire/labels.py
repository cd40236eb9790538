"""Labels: what a board name, a table or a clock id may be (a file name, a CSV cell, a topic level)."""

import re

#: 1 to 32 letters, digits, `-` or `_`, starting with a letter or digit.
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


def is_label(text):
    """Whether `text` is a label: a board name, a table or a clock id (1 to 32 letters, digits,
    `-` or `_`, starting with a letter or digit, so it is safe in a file name and a CSV cell)."""
    return isinstance(text, str) and LABEL.fullmatch(text) is not None
