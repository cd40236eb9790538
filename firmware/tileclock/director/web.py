"""The director's web page of the hall: every board live, each game in full (docs/hall.md).

Served by the standard library's threading HTTP server; every asset is served
from here (the page works in a hall with no internet). Routes:

    GET  /                          every board, those needing attention first (hall_page/index.html)
    GET  /events                    Server-Sent Events: the boards again whenever anything changes
    GET  /api/boards                the boards, JSON
    GET  /board/CLOCK               one board's game (hall_page/board.html)
    GET  /api/board/CLOCK           that game's records, JSON
    GET  /api/board/CLOCK/panels.png?at_ms=N   both panels at an instant, as the clock drew them
    GET  /api/board/CLOCK/picture.svg          the game's picture (with the director extra)
    POST /api/round/start  round=N  sets the round on every clock
    POST /api/round/over            `round over` to every clock: it stops them (school rule 21)
"""

import io
import json
import logging
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from ..clock.history import view_at
from ..device.identity import is_label

PAGES = Path(__file__).with_name("hall_page")
#: how long one Server-Sent Events wait lasts before a keep-alive comment
KEEPALIVE_S = 15.0
#: at most this many updates a second to each page (a busy hall changes all the time)
MAX_UPDATES_PER_S = 5
_BOARD = re.compile(r"/(api/)?board/([A-Za-z0-9_-]{1,32})(/panels\.png|/picture\.svg)?")

log = logging.getLogger(__name__)

#: the header the page's own script sends with each command (a cross-site form cannot set one)
COMMAND_HEADER = "X-Tileclock-Command"
#: the largest command form read (a round number)
MAX_FORM_BYTES = 1024


class HallPage:
    """Serves `feed` (a `HallFeed`) on `host`:`port` (0: any free port) from a thread of its own."""

    def __init__(self, feed, host="127.0.0.1", port=8080):
        self.feed = feed
        handler = type("Handler", (_Handler,), {"hall": self})
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        self.thread = None

    @property
    def address(self):
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self):
        self.thread = threading.Thread(target=self.server.serve_forever, name="hall-page", daemon=True)
        self.thread.start()
        return self

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    # --- what the routes answer

    def game(self, clock_id):
        """The game the store is writing for `clock_id` (a `clock.history.Game`), or None."""
        log_ = self.feed.store.clocks.get(clock_id)
        return getattr(log_, "_file_game", None) if log_ else None

    def board_json(self, clock_id):
        game = self.game(clock_id)
        if game is None:
            return None
        board = next((b for b in self.feed.snapshot()["boards"] if b["clock"] == clock_id), {})
        return {
            "clock": clock_id,
            "board": board.get("board"),
            "game_seq": game.seq,
            "records": game.records,
            "corrections": [r for r in game.records if r["ev"] == "adjust"],
            "end_ms": game.records[-1]["t_ms"],
            "picture": _plot_available(),
        }

    def panels_png(self, clock_id, at_ms):
        from PIL import Image

        from ..device.render import Panel, render

        game = self.game(clock_id)
        if game is None:
            return None
        view, _record, _ = view_at(game, at_ms=max(0, at_ms))
        frames = [render(view, Panel(faces=side)).convert("L") for side in "AB"]
        width, height = frames[0].size
        scale, gap = 3, 8
        sheet = Image.new("L", (2 * width * scale + gap, height * scale), 60)
        for number, frame in enumerate(frames):
            sheet.paste(frame.resize((width * scale, height * scale)), (number * (width * scale + gap), 0))
        out = io.BytesIO()
        sheet.save(out, "PNG")
        return out.getvalue()

    def picture_svg(self, clock_id):
        from . import plot

        game = self.game(clock_id)
        if game is None or not plot.available():
            return None
        return plot.game_svg(game, title=f"clock {clock_id}, game {game.seq}")


def _plot_available():
    from . import plot

    return plot.available()


class _Handler(BaseHTTPRequestHandler):
    hall = None  # set per server
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002  (the standard library's name)
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self):  # noqa: N802  (the standard library's name)
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/":
            return self._file("index.html", "text/html; charset=utf-8")
        if url.path == "/events":
            return self._events()
        if url.path == "/api/boards":
            return self._json(self.hall.feed.snapshot())
        match = _BOARD.fullmatch(url.path)
        if match and is_label(match.group(2)):
            api, clock_id, extra = match.groups()
            if not api and not extra:
                return self._file("board.html", "text/html; charset=utf-8")
            if api and extra == "/panels.png":
                try:
                    at_ms = int(query.get("at_ms", ["0"])[0])
                except ValueError:
                    return self._send(400, b"at_ms: a whole number of milliseconds", "text/plain")
                body = self.hall.panels_png(clock_id, at_ms)
                return (
                    self._send(200, body, "image/png") if body else self._send(404, b"no game", "text/plain")
                )
            if api and extra == "/picture.svg":
                body = self.hall.picture_svg(clock_id)
                if body is None:
                    return self._send(404, b"no picture (install the director extra)", "text/plain")
                return self._send(200, body.encode() if isinstance(body, str) else body, "image/svg+xml")
            if api and not extra:
                board = self.hall.board_json(clock_id)
                return self._json(board) if board else self._send(404, b"no game", "text/plain")
        return self._send(404, b"not found", "text/plain")

    def do_POST(self):  # noqa: N802  (the standard library's name)
        url = urlsplit(self.path)
        if not self._from_own_page():
            return self._send(403, b"commands come from the director's own page", "text/plain")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_FORM_BYTES:
            return self._send(400, b"Content-Length: a number of bytes up to 1024", "text/plain")
        form = parse_qs(self.rfile.read(length).decode("ascii", "replace"))
        feed = self.hall.feed
        if url.path == "/api/round/start":
            number = form.get("round", [""])[0]
            if not number.isdigit() or not 1 <= int(number) <= 99:
                return self._send(400, b"round: a number from 1 to 99", "text/plain")
            feed.command(f"set round={int(number)}")
            return self._json({"sent": f"set round={int(number)}"})
        if url.path == "/api/round/over":
            feed.command("round over")
            return self._json({"sent": "round over"})
        return self._send(404, b"not found", "text/plain")

    def _from_own_page(self):
        """A command that ends games must come from this page's own script, not from a form or a
        script on another site open in the same browser: the page sends a header no plain form can,
        and a browser's Origin (when it sends one) must be this server."""
        if self.headers.get(COMMAND_HEADER) != "1":
            return False
        origin = self.headers.get("Origin")
        return origin is None or origin == f"http://{self.headers.get('Host')}"

    def _events(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        feed = self.hall.feed
        version = None
        try:
            while True:
                if version == feed.version:
                    feed.wait_for_change(version, KEEPALIVE_S)
                if version == feed.version:
                    self.wfile.write(b": keep-alive\n\n")
                else:
                    snapshot = feed.snapshot()
                    version = snapshot["version"]
                    self.wfile.write(b"data: " + json.dumps(snapshot).encode() + b"\n\n")
                self.wfile.flush()
                # let changes gather: at most MAX_UPDATES_PER_S snapshots a second, however busy the hall
                time.sleep(1 / MAX_UPDATES_PER_S)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _file(self, name, kind):
        return self._send(200, (PAGES / name).read_bytes(), kind)

    def _json(self, data):
        return self._send(200, json.dumps(data).encode(), "application/json")

    def _send(self, status, body, kind):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)
