"""Who may ask the page anything (docs/hall.md, "What the hall trusts").

- **Host**: only the names and addresses the director configured (`--allow-host`), by default
  this laptop's own. A page on another site whose name resolves to the laptop (DNS rebinding)
  sends its own name as Host, and is refused before any route runs (Starlette's
  `TrustedHostMiddleware`).
- **Origin** on every command: a browser sends it with every POST; it must be this page itself.
- **Time limits**: a connection that has not sent a whole request within `REQUEST_S` is closed
  (uvicorn itself waits for ever for the first one), so idle or slow clients cannot pile up
  against the cap on connections.
- **Per address**: each door caps the connections one client address holds open (`limits`,
  doors.AddressLimits): past it a connection is answered 503 and closed before it can hold a
  place, so one address's slow connections cannot fill the page for the others.
"""

import socket

from uvicorn.protocols.http.h11_impl import H11Protocol

from .doors import REFUSED

#: a client has this long to send each whole request (its line and headers)
REQUEST_S = 10.0


def own_hosts(bind_host=None):
    """The names and addresses this laptop answers to: loopback, its host name (and `.local`, as
    mDNS gives it), its fully qualified name, the addresses those resolve to, and `bind_host`."""
    names = {"localhost", "127.0.0.1", "::1"}
    host = socket.gethostname()
    names.update({host, f"{host}.local"})
    try:
        names.add(socket.getfqdn())
    except OSError:
        pass
    for name in list(names):
        try:
            names.update(info[4][0] for info in socket.getaddrinfo(name, None))
        except (OSError, UnicodeError):
            continue
    if bind_host and bind_host not in ("0.0.0.0", "::", ""):
        names.add(bind_host)
    return sorted(name.lower() for name in names)


def origin_ok(headers, scheme=None):
    """Whether a command comes from this page itself: its Origin is exactly `scheme://` + its Host
    (the Host already checked against the allowed names); with no `scheme`, `http://` or
    `https://` (a phone that reaches the page through the director's TLS proxy, `--phone-url
    https://`). No Origin, no command."""
    origin, host = headers.get("origin"), headers.get("host")
    if not (origin and host):
        return False
    schemes = (scheme,) if scheme else ("http", "https")
    return origin.lower() in {f"{each}://{host}".lower() for each in schemes}


class TimedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for each request: from the connection (or the
    last answer) to a whole request line and headers, `REQUEST_S`. An answer being streamed (the
    live page) is not a request waited for."""

    #: the door's caps per address (doors.AddressLimits), set on each door's own subclass (`for_door`)
    limits = None

    @classmethod
    def for_door(cls, limits):
        """This protocol with `limits` (a door's `AddressLimits`): a class of its own per door."""
        return type("DoorH11", (cls,), {"limits": limits})

    def connection_made(self, transport):
        super().connection_made(transport)
        self._deadline = self.loop.call_later(REQUEST_S, self._too_slow)
        self._counted = None
        if self.limits is not None:
            peer = transport.get_extra_info("peername")
            addr = peer[0] if peer else "?"
            if not self.limits.connect(addr):  # one address's slow connections hold no more places
                transport.write(REFUSED)
                transport.close()
                return
            self._counted = addr

    def _too_slow(self):
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a request is being answered: its own limits apply
        if not self.transport.is_closing():
            self.transport.close()

    def on_response_complete(self):
        super().on_response_complete()
        self._deadline.cancel()
        self._deadline = self.loop.call_later(REQUEST_S, self._too_slow)

    def connection_lost(self, exc):
        self.release()
        super().connection_lost(exc)

    def release(self):
        """Leave the request deadline and give back this connection's place in its address's count
        (at its end, or when another part takes the connection over)."""
        self._deadline.cancel()
        if self._counted is not None:
            self.limits.disconnect(self._counted)
            self._counted = None
