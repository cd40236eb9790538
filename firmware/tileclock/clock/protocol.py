"""The line format now lives in `tileclock/wire/protocol.py` (the wire room, issue 26).

Re-exported here for code written against the old place; new code imports `tileclock.wire.protocol`.
"""

from ..wire.protocol import (  # noqa: F401  re-exported for the old import path
    LABEL,
    MAX_COMMAND,
    VERSION,
    Command,
    CommandError,
    FieldError,
    FrameError,
    crc32,
    frame,
    is_label,
    parse_command,
    unframe,
    unframe_any,
    with_crc,
)
