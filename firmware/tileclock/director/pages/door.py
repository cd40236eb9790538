"""One door of the hall's page: a Starlette app served by uvicorn from a thread of its own, on a
socket bound at once (a port already taken is an OSError at once), over HTTPS with the page's
certificate or in plain HTTP (docs/hall.md, "The page over HTTPS"). `web.HallPage` opens two:
the director's and the players'.
"""

import socket
import threading
import time

import uvicorn

from ..hall.tls import PageTlsError
from .guard import TimedH11

__all__ = ["Door", "PageTlsError"]

#: how long the server has to start listening
START_S = 10.0


class Door:
    """One door of the page: `app` served by uvicorn on a socket bound at once to `host`:`port`
    (a port already taken is an OSError here), from a thread named `name`: at most `limit`
    connections in all (None: no such cap), and `limits` (doors.AddressLimits) per address.
    `tls` (certificate file, key file): HTTPS only on that port, else plain HTTP; `http` its HTTP
    protocol (the door's `TimedH11`), `options` more of uvicorn's settings."""

    def __init__(self, app, host, port, name, limit, limits, tls=None, http=None, **options):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind((host, port))
            self.socket.listen(128)
        except OSError:
            self.socket.close()
            raise
        self.host, self.port, self.name = host, self.socket.getsockname()[1], name
        self.tls = tuple(str(path) for path in tls) if tls else None
        certfile, keyfile = self.tls or (None, None)
        config = uvicorn.Config(
            app,
            http=http or TimedH11.for_door(limits),
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            limit_concurrency=limit,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=1,
            ssl_certfile=certfile,
            ssl_keyfile=keyfile,
            **options,  # the spectators' door's WebSockets
        )
        if self.tls:  # the certificate and key read here: a bad one is an error before any thread
            try:
                config.load()
            except OSError as error:  # ssl.SSLError is an OSError
                self.socket.close()
                raise PageTlsError(
                    f"{certfile} or {keyfile}: {getattr(error, 'reason', None) or _why_not(error)}"
                ) from None
        self.server = uvicorn.Server(config)
        self.thread = None

    @property
    def address(self):
        """Its address, as it listens."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}/"

    def start(self):
        """Serve from a thread of its own; OSError if it is not listening within `START_S`."""
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, name=self.name, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + START_S
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.server.started:
            raise OSError(f"the page did not start on {self.host}:{self.port}")

    def close(self):
        """Stop serving (open answers get a second to finish) and close the socket."""
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(5)
        self.socket.close()


def _why_not(error):
    """An OSError in a few words: its strerror, else itself."""
    return error.strerror or str(error)
