"""One-time values for the director's actions (docs/hall.md, "The two doors"): the page's script
asks for one (`POST /api/once`) just before it sends an action, and sends it with the action in
`X-Tileclock-Once`; the server takes each once. The same POST sent again (captured on the
network, or resent by a browser or a proxy) carries a value already taken: it is refused and
written on the audit trail as a replay, never applied a second time.

Held in the hall's memory, bounded: at most `MAX_WAITING` values handed out and not yet used
(the oldest go first: a page asks for one only as it acts), and the last `MAX_TAKEN` used, to
tell a replay from a value never handed out. A restart forgets both (its sessions end too).
"""

import collections
import secrets
import threading

#: values handed out and not used yet, kept at most (a page uses its own within a second)
MAX_WAITING = 1024
#: values used, remembered at most (a replay of an older one is refused as unknown, unaudited)
MAX_TAKEN = 4096
#: what `take` says of a value
FRESH, REPLAY, UNKNOWN = "fresh", "replay", "unknown"


class OneTimeValues:
    """The one-time values of the director's door, each for the session it was handed to."""

    def __init__(self, waiting=MAX_WAITING, taken=MAX_TAKEN):
        self._limits = (waiting, taken)
        self._waiting = collections.OrderedDict()  # value -> session label
        self._taken = collections.OrderedDict()  # value -> session label
        self._lock = threading.Lock()

    def issue(self, label):
        """A new value for the session `label`, good for one action of it."""
        value = secrets.token_urlsafe(18)
        with self._lock:
            self._waiting[value] = label
            while len(self._waiting) > self._limits[0]:
                self._waiting.popitem(last=False)
        return value

    def take(self, label, value):
        """Use `value` for an action of the session `label`: `FRESH` (taken now), `REPLAY` (taken
        before) or `UNKNOWN` (never handed out, forgotten, or another session's: left as it is)."""
        with self._lock:
            if value in self._taken:
                return REPLAY
            if self._waiting.get(value) != label:
                return UNKNOWN
            del self._waiting[value]
            self._taken[value] = label
            while len(self._taken) > self._limits[1]:
                self._taken.popitem(last=False)
        return FRESH
