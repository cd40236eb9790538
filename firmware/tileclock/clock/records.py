"""The record's fields and decoder now live in `tileclock/wire/records.py` (the wire room, issue 26).

Re-exported here so the core's modules, which are being reworked apart, keep their imports; new
code imports `tileclock.wire.records`.
"""

from ..wire.records import (  # noqa: F401  re-exported for the old import path
    BUTTONS,
    EVENTS,
    KINDS,
    SIDES,
    STATES,
    TRANSITIONS,
    Event,
    Record,
    RecordError,
    SideState,
    decode,
    encode,
)
