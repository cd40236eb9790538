"""A clock's retained messages (its state and public state) in paho's hands: one a topic at most.

Only the newest retained message on a topic counts, at the broker and for everyone who reads it.
Handing paho one for each record would, on a link that passes nothing but is not yet found dead
(up to two keep-alives), pile them up beside the records in the window, each sent again at the
reconnection. So a topic has at most one message in flight; a newer one waits here, replacing any
older one waiting, and is handed over when paho acknowledges the one before it. On a link that
acknowledges within the time between two presses (any working hall), every state still goes out.

`NewestInFlight` holds no lock of its own: the uplink calls it under its `_lock`, the one its
acknowledgements are matched under, and does the publishing itself, outside that lock.
"""


class NewestInFlight:
    """Which retained topics have a message in flight (by paho message id) and the newest one
    waiting behind each. Call every method with the uplink's lock held."""

    def __init__(self):
        self._in_flight = {}  # topic -> message id, or None while its publish call is under way
        self._waiting = {}  # topic -> the newest payload not yet handed to paho

    def offer(self, name, payload):
        """Whether `payload` may go to paho now on topic `name` (the caller then publishes it and
        says `handed` or `not_handed`); if not, it waits, replacing any older one."""
        if name in self._in_flight:
            self._waiting[name] = payload
            return False
        self._in_flight[name] = None
        return True

    def handed(self, name, mid):
        """paho took `name`'s message as `mid` and has not acknowledged it yet."""
        self._in_flight[name] = mid

    def not_handed(self, name, payload, refused):
        """`name`'s message needs no more waiting: acknowledged before its id was known, or
        `refused` by paho (kept to go again, unless a newer one waits). Answers the payload to
        publish next on `name`, or None (the topic is then free)."""
        if refused:
            self._waiting.setdefault(name, payload)
            del self._in_flight[name]
            return None
        return self._next(name)

    def acknowledged(self, mid):
        """paho acknowledged message `mid`: (topic, payload) to publish next on its topic, or None."""
        name = next((n for n, m in self._in_flight.items() if m == mid), None)
        if name is None:
            return None  # not a retained message's (or one from before a reconnection)
        payload = self._next(name)
        return None if payload is None else (name, payload)

    def free(self):
        """(topic, payload) of each message waiting on a topic with nothing in flight (one paho
        refused), each marked in flight: the caller publishes them."""
        ready = [(name, payload) for name, payload in self._waiting.items() if name not in self._in_flight]
        for name, _ in ready:
            del self._waiting[name]
            self._in_flight[name] = None
        return ready

    def _next(self, name):
        payload = self._waiting.pop(name, None)
        if payload is None:
            del self._in_flight[name]
        else:
            self._in_flight[name] = None
        return payload
