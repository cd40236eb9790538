"""The hall's topics on the broker, shared by the clock's uplink and the director (docs/hall.md).

    tileclock/<clock id>/records   every record, framed as in the journal, QoS 1 (clock → director)
    tileclock/<clock id>/state     what the clock shows now, JSON, retained (clock → director)
    tileclock/<clock id>/status    "online" or "offline", retained; "offline" is also the will
    tileclock/<clock id>/answer    the answer to a `status` command, framed, never journaled (clock → director)
    tileclock/<clock id>/public    what spectators see: time left at a stamped instant, JSON, retained (clock → anyone)
    tileclock/<clock id>/cmd       a command line, as on the serial line (director → one clock)
    tileclock/all/cmd              a command line for every clock (director → all)

A clock id is also the clock's user name and client id on the broker, so it
must be a plain topic level: letters, digits, `-` and `_`, and never `all`.
"""

from .protocol import is_label

ROOT = "tileclock"
ALL = "all"
#: the director's user name on the broker (docs/hall.md): the one that may send commands
DIRECTOR = "director"
#: the spectators' broker's user name on the hall's broker: it may read the public topics only
VIEWERS = "viewers"
#: where the spectators' broker says whether its bridge to the hall's broker is up ("1" or "0")
BRIDGE_TOPIC = f"{ROOT}/{VIEWERS}/bridge"


def valid_clock_id(text):
    """Whether `text` can be a clock id on the broker (a user name and one topic level)."""
    return is_label(text) and text not in (ALL, DIRECTOR, VIEWERS)


def topic(clock_id, kind):
    """`tileclock/<clock id>/<kind>`: kind is records, state, status, answer, public or cmd."""
    return f"{ROOT}/{clock_id}/{kind}"


def parse_topic(name):
    """(clock id, kind) of a hall topic, or None for anything else."""
    parts = name.split("/")
    if len(parts) != 3 or parts[0] != ROOT or not (valid_clock_id(parts[1]) or parts[1] == ALL):
        return None
    return parts[1], parts[2]
