"""A clock's retained state on the hall's broker (`tileclock/<id>/state`), checked before the
director's page uses any of it (docs/hall.md, "What the hall trusts").

The state is what the clock shows now (device/links/hall_state.py writes it). Whatever arrives
on that topic is held to this shape, and anything else is refused whole with a reason, so one
clock's bad state can neither blank the page for every board nor slow it.
"""

import re

from .decoder import Limits, WireError, load_object
from .records import SIDE_SETTINGS

#: the largest state taken (an honest one is about 300 bytes)
MAX_STATE_BYTES = 4096
#: JSON nesting taken (an honest state nests 2 deep)
MAX_DEPTH = 4
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
_SHOWN = re.compile(r"-?\d{1,4}:\d\d")
_STATES = (None, "ready", "running", "paused", "ended")
#: the largest whole number a field may hold (JavaScript's exact integers)
MAX_WHOLE = 2**53 - 1
#: what the decoder takes of a state
LIMITS = Limits(max_bytes=MAX_STATE_BYTES, max_depth=MAX_DEPTH)


class StateError(WireError):
    """A state refused; `reason` is the decoder's code (`wire.decoder.Reason`: too_large, not_text,
    too_deep, not_json, bad_number, not_object, wrong_kind for a field out of shape), and its text
    names it before the detail."""

    def __str__(self):
        return f"{self.reason}: {self.detail}"


def _whole(value, low=0, high=MAX_WHOLE):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def decode_state(payload, clock_id):
    """The state in `payload` (bytes) of clock `clock_id`, held to its shape (a dict of known
    fields only); StateError with its reason for anything else. Read by the one decoder
    (`wire/decoder.py`) with the state's own limits: size, nesting and numbers first."""
    try:
        value = load_object(payload, LIMITS)
    except WireError as error:
        raise StateError(str(error.reason), error.detail) from None
    return _fields(value, clock_id)


def _fields(value, clock_id):
    def bad(name):
        raise StateError("wrong_kind", f"field {name!r} not valid")

    state = {}
    if value.get("clock") not in (None, clock_id):
        bad("clock")
    for name in ("board", "table"):
        item = value.get(name)
        if item is not None and not (isinstance(item, str) and _LABEL.fullmatch(item)):
            if name == "table" and _whole(item, 0, 9999):
                state[name] = item
                continue
            bad(name)
        state[name] = item
    for name, high in (("round", 9999), ("seq", MAX_WHOLE)):
        item = value.get(name)
        if item is not None and not _whole(item, 0, high):
            bad(name)
        state[name] = item
    if value.get("state") not in _STATES:
        bad("state")
    state["state"] = value.get("state")
    if value.get("run") not in (None, "A", "B"):
        bad("run")
    state["run"] = value.get("run")
    ev = value.get("ev")
    if ev is not None and not (isinstance(ev, str) and _LABEL.fullmatch(ev)):
        bad("ev")
    state["ev"] = ev
    for side in "AB":
        item = value.get(side)
        if item is None:
            state[side] = None
            continue
        if not (
            isinstance(item, dict)
            and _whole(item.get("used_ms"))
            and _whole(item.get("pen"))
            and isinstance(item.get("shown"), str)
            and _SHOWN.fullmatch(item["shown"])
        ):
            bad(side)
        state[side] = {"used_ms": item["used_ms"], "pen": item["pen"], "shown": item["shown"]}
    faults = value.get("faults") or {}
    if not isinstance(faults, dict) or len(faults) > 16:
        bad("faults")
    for part, detail in faults.items():
        if not (isinstance(detail, str) and len(part) <= 32 and len(detail) <= 200):
            bad("faults")
    state["faults"] = dict(faults)
    if value.get("time") is not None:  # said only by a clock whose chrony answers
        state["time"] = _time(value["time"], bad)
    if value.get("health") is not None:  # said by a clock on the hall (device/health.py)
        state["health"] = _health(value["health"], bad)
    if value.get("selftest") is not None:  # said by a clock self-tested since its start
        state["selftest"] = _selftest(value["selftest"], bad)
    for key in SIDE_SETTINGS:  # who hears the clock, who has large digits (clock/scene.py): a newer clock's
        if value.get(key) is not None:
            if value[key] not in ("", "A", "B", "AB"):
                bad(key)
            state[key] = value[key]
    if "tls" in value:  # said only by a clock that reaches the broker without TLS
        if value["tls"] is not False:
            bad("tls")
        state["tls"] = False
    return state


def _time(item, bad):
    """How the clock's wall clock follows the laptop (chrony, device/timesync.py), or None."""
    if item is None:
        return None
    limit = 10**9  # µs: a quarter of an hour either way is already no time service at all
    if not (
        isinstance(item, dict)
        and _whole(item.get("offset_us"), -limit, limit)
        and _whole(item.get("error_us"), 0, limit)
        and isinstance(item.get("synced"), bool)
    ):
        bad("time")
    return {"offset_us": item["offset_us"], "error_us": item["error_us"], "synced": item["synced"]}


#: a software version as a clock says it (`0.1.0`, `0.2.0.dev3+g1a2b3c`)
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,39}")
#: the health's whole numbers and their bounds (a month of uptime is 2.6e6 s; a card of 2 TB)
_HEALTH_WHOLE = {"up_s": 10**9, "run_s": 10**9, "free_mb": 10**8, "journal_kb": 10**9}
_RESTARTS = ("start", "restart", "power_cut")


def _health(item, bad):
    """The clock's health (device/health.py), each field None where the clock does not know it."""
    if not isinstance(item, dict) or len(item) > 16:
        bad("health")
    said = {}
    version = item.get("v")
    if not (isinstance(version, str) and _VERSION.fullmatch(version)):
        bad("health")
    said["v"] = version
    for name, high in _HEALTH_WHOLE.items():
        value = item.get(name)
        if value is not None and not _whole(value, 0, high):
            bad("health")
        said[name] = value
    if item.get("sync") not in (None, True, False) or item.get("restart") not in (None, *_RESTARTS):
        bad("health")
    said["sync"], said["restart"] = item.get("sync"), item.get("restart")
    said["wifi"] = _wifi(item.get("wifi"), bad)
    said["power"] = _power(item.get("power"), bad)
    return said


def _selftest(item, bad):
    """The clock's last self-test since its start (clock/selftest.py): `pass` or `fail`, and what
    failed (a few short phrases: `A not pressed`)."""
    failed = item.get("failed") if isinstance(item, dict) else None
    if not (
        isinstance(failed, list)
        and item.get("result") in ("pass", "fail")
        and len(failed) <= 6
        and all(isinstance(f, str) and len(f) <= 40 for f in failed)
    ):
        bad("selftest")
    return {"result": item["result"], "failed": list(failed)}


def _wifi(item, bad):
    if item is None:
        return None
    name = item.get("if") if isinstance(item, dict) else None
    if not (
        isinstance(name, str)
        and _LABEL.fullmatch(name)
        and _whole(item.get("dbm"), -127, 0)
        and _whole(item.get("link"), 0, 255)
    ):
        bad("health")
    return {"if": name, "dbm": item["dbm"], "link": item["link"]}


def _power(item, bad):
    if item is None:
        return None
    if not isinstance(item, dict) or item.get("src") not in (None, "rpi_volt", "get_throttled", "simulated"):
        bad("health")
    flags = item.get("flags")
    if (flags is not None and not _whole(flags, 0, 0xF000F)) or not isinstance(item.get("low"), bool):
        bad("health")
    return {"src": item.get("src"), "flags": flags, "low": item["low"]}
