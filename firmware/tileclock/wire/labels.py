"""Labels: what a board name, a table or a clock id may be (a file name, a CSV cell, a topic level)."""

import re

#: 1 to 32 letters, digits, `-` or `_`, starting with a letter or digit.
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
#: 1 to 9 ASCII digits: `str.isdigit` also takes `²` and `٣`, which `int` then refuses or reads.
COUNT = re.compile(r"[0-9]{1,9}")


def is_label(text):
    """Whether `text` is a label: a board name, a table or a clock id (1 to 32 letters, digits,
    `-` or `_`, starting with a letter or digit, so it is safe in a file name and a CSV cell)."""
    return isinstance(text, str) and LABEL.fullmatch(text) is not None


def is_count(text):
    """Whether `text` is a count a form may send (a round, a seq): 1 to 9 ASCII digits."""
    return isinstance(text, str) and COUNT.fullmatch(text) is not None


def table_key(value):
    """A table as text, the same however it was written (`"07"`, `7` and `" 7 "` are table `"7"`)."""
    text = str(value).strip()
    return str(int(text)) if text.isdigit() else text
