"""The hall page's routes, as a Starlette app (docs/hall.md). Every asset is served from here: the
page works in a hall with no internet.

    GET  /                          every board, those needing attention first (hall_page/index.html)
    GET  /favicon.svg, /favicon.ico the page's icon (a browser asks for one: never a 404)
    GET  /session.js, /calls.js, /calls.css, /health.js, /map.js   what the pages share: the tab's
                                    session, the call banners, a clock's health in words, the map
    GET  /events                    Server-Sent Events: the boards again whenever anything changes
    GET  /api/boards                the boards, JSON
    GET  /board/CLOCK               one board's game (hall_page/board.html)
    GET  /api/board/CLOCK           that game's records, JSON
    GET  /api/board/CLOCK/panels.png?at_ms=N   both panels at an instant, as the clock drew them
    GET  /api/board/CLOCK/picture.svg          the game's picture (with the director extra)
    GET  /api/plan                  the room's plan (--plan, hall/plan.py): {"places": {board: [row,
                                    column]}}, empty without one (the map then lays boards in order)
    GET  /api/round                 the round started from this page: number, start, boards (JSON),
                                    and `next`, the round TSH takes scores for next (or `--round`)
    POST /api/round/start  round=N start=HH:MM[:SS] boards=1-8,11   the round, for a time of day, on
                                    those boards (empty: in 10 s, every board): hall/round_control.py
    POST /api/round/over            `round over` to every clock: it stops them (school rule 21)
    POST /api/selftest              `selftest` to every clock: those on a fresh game self-test
    POST /api/round/new-game  boards=1-8,11   `new game` on those boards (empty: every board), each
                                    answering applied or refused (a game not ended) on the page
    POST /api/board/CLOCK/clear     clears the clock's retained state and status on the broker
    POST /api/once                  a one-time value for the next action (once.py): every command
                                    at the director's door but a phone's entry sends one in
                                    `X-Tileclock-Once`; one sent before is a replay (409, audited)

the board's commands, its call's answers and its table's history (`board_routes.py`), and the
score entry's routes (`score_routes.py`): the phones' form, the director's scores page. Every
command is on the audit trail (`hall/audit.py`) before it is sent.
"""

import asyncio
import contextlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qs

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import Response
from starlette.routing import Route

from ...wire.labels import is_count
from ...wire.protocol import is_label
from .board_routes import board_routes, clock_form, round_step, sent, unwritten, who
from .doors import DirectorGate, RateLimit, SecurityHeaders
from .guard import origin_ok
from .live import LiveBoards
from .login_routes import login_routes
from .once import FRESH, REPLAY
from .score_routes import PHONE_PATHS, score_routes

PAGES = Path(__file__).with_name("hall_page")
ICON = PAGES / "favicon.svg"
#: what the hall's pages share (one copy each, not one a page), and its media type
SHARED = {
    "session.js": "text/javascript",
    "calls.js": "text/javascript",
    "calls.css": "text/css",
    "health.js": "text/javascript",
    "map.js": "text/javascript",  # the hall page's map of the room
    # each page's own script, in a file: the pages' CSP runs no inline script (doors.py)
    "index.js": "text/javascript",
    "board.js": "text/javascript",
    "scores.js": "text/javascript",
    "score.js": "text/javascript",
}
#: what the players' door serves of them: the score form's script
PHONE_SHARED = ("score.js",)
#: the header the page's own script sends with each command (a cross-site form cannot set one)
COMMAND_HEADER = "X-Tileclock-Command"
#: the header carrying an action's one-time value (once.py)
ONCE_HEADER = "X-Tileclock-Once"
#: the largest command form read (a round number)
MAX_FORM_BYTES = 1024
#: a command's body must arrive within this
FORM_S = 5.0
#: a picture or a panels image must be drawn within this; then 503 (it goes on in its thread)
PICTURE_S = 10.0
#: pictures drawn at once; a request past them is told to come back (503), never queued
PICTURE_WORKERS = 2
#: a viewer who has not taken an update within this is dropped
SEND_S = 10.0
#: the live stream's keep-alive comment, every this many seconds
KEEPALIVE_S = 15


def make_app(hall, allowed_hosts, door="director", limits=None):
    """The ASGI app of `hall` (a `HallPage`): its Starlette app (`.app`, its `routes`) behind the
    Host check, inside `SecurityHeaders`. `door`:
    `director` (every route) or `players` (the score form, its data and its entry, its script
    and the icon: nothing a phone could use to act as the director); `limits` (doors.AddressLimits)
    rations each address's requests."""
    live = LiveBoards(hall.feed, getattr(hall, "with_answers", None))
    drawing = _Drawing()

    async def _command_form(request):
        """`_page_form`, and at the director's door an action's one-time value taken (a phone's
        entry aside: its token is its credential): none or unknown, 403; one used before, a
        replay: 409, on the audit trail as `replay`, nothing done."""
        form, refused = await _page_form(request)
        if refused or door != "director" or request.url.path.startswith(PHONE_PATHS):
            return form, refused
        by, addr = who(request)
        taken = hall.onces.take(by, request.headers.get(ONCE_HEADER, ""))
        if taken == FRESH:
            return form, None
        if taken != REPLAY:
            return None, _text(403, "not done: the action's one-time value is missing or unknown")
        clock = request.path_params.get("clock", "all")
        clock = clock if is_label(clock) else "all"
        changed = {"path": request.url.path}
        try:
            await asyncio.to_thread(hall.audit.record, "replay", by, addr, None, clock, None, changed)
        except OSError as error:
            return None, unwritten(_text, error, "not done")
        return None, _text(409, "not done: a replay (this action was sent before, and done once)")

    async def once(request):
        _form, refused = await _page_form(request)
        if refused:
            return refused
        return _json({"once": hall.onces.issue(who(request)[0])})

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        producer = asyncio.create_task(live.run())
        try:
            yield
        finally:
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await producer
            drawing.close()

    async def index(_request):
        return _file("index.html")

    async def icon(_request):
        return Response(
            ICON.read_bytes(), media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
        )

    async def shared(request):
        name = request.url.path.lstrip("/")
        body = (PAGES / name).read_bytes()
        return Response(body, media_type=f"{SHARED[name]}; charset=utf-8", headers=_NO_STORE)

    async def events(_request):
        if live.full():
            return _text(503, "too many viewers of the live page: close one and reload")
        return EventSourceResponse(live.stream(), ping=KEEPALIVE_S, send_timeout=SEND_S)

    async def boards(_request):
        return _json(await asyncio.to_thread(live.snapshot))

    async def board_page(request):
        if not is_label(request.path_params["clock"]):
            return _text(404, "not found")
        return _file("board.html")

    async def board_api(request):
        clock = request.path_params["clock"]
        board = await asyncio.to_thread(hall.board_json, clock) if is_label(clock) else None
        return _json(board) if board else _text(404, "no game")

    async def panels(request):
        clock = request.path_params["clock"]
        try:
            at_ms = int(request.query_params.get("at_ms", "0")[:12])
        except ValueError:
            return _text(400, "at_ms: a whole number of milliseconds")
        if not is_label(clock):
            return _text(404, "no game")
        status, body = await drawing.draw(hall.panels_png, clock, at_ms)
        if status != 200:
            return _text(status, body)
        return Response(body, media_type="image/png", headers=_NO_STORE) if body else _text(404, "no game")

    async def picture(request):
        clock = request.path_params["clock"]
        if not is_label(clock):
            return _text(404, "no game")
        status, body = await drawing.draw(hall.picture_svg, clock)
        if status != 200:
            return _text(status, body)
        if body is None:
            return _text(404, "no picture (install the director extra)")
        return Response(body, media_type="image/svg+xml", headers=_NO_STORE)

    async def round_start(request):
        form, refused = await _command_form(request)
        if refused:
            return refused
        number = form.get("round", [""])[0]
        if not is_count(number) or not 1 <= int(number) <= 99:
            return _text(400, "round: a number from 1 to 99")
        start, boards = form.get("start", [""])[0], form.get("boards", [""])[0]
        try:
            started = await asyncio.to_thread(round_step, hall, request, "start", int(number), start, boards)
        except ValueError as error:
            return _text(400, str(error))
        except OSError as error:
            return unwritten(_text, error)
        count = len(started["boards"])
        said = f"round {number} starts at {started['start']} on {count} board{'' if count == 1 else 's'}"
        return _json({"sent": said, "round": started})

    async def current_round(_request):
        offered = await asyncio.to_thread(hall.next_round)  # TSH's next round, or the director's
        return _json({"round": hall.rounds.current, "problem": hall.rounds.problem, "next": offered})

    async def room_plan(_request):
        return _json({"places": getattr(hall, "plan", None) or {}})

    async def round_over(request):
        _form, refused = await _command_form(request)
        if refused:
            return refused
        try:
            await asyncio.to_thread(round_step, hall, request, "over")
        except OSError as error:
            return unwritten(_text, error)
        return _json({"sent": "round over", "round": hall.rounds.current})

    async def selftest_all(request):
        _form, refused = await _command_form(request)
        if refused:
            return refused
        return await sent(hall, request, _json, _text, "selftest", "selftest", "all")

    async def new_games(request):
        form, refused = await _command_form(request)
        if refused:
            return refused
        boards = form.get("boards", [""])[0]
        try:
            sent = await asyncio.to_thread(round_step, hall, request, "new_game", boards)
        except ValueError as error:
            return _text(400, str(error))
        except OSError as error:
            return unwritten(_text, error)
        count = len(sent["boards"])
        return _json({"sent": f"new game on {count} board{'' if count == 1 else 's'}", "new_game": sent})

    async def clear(request):
        _form, clock, refused = await clock_form(_command_form, _text, request)
        if refused:
            return refused
        by, addr = who(request)
        changed = {"cleared": ["state", "status"]}
        try:
            await asyncio.to_thread(hall.audit.record, "clear", by, addr, None, clock, None, changed)
        except OSError as error:
            return unwritten(_text, error, "not cleared")
        hall.feed.clear_state(clock)
        return _json({"cleared": clock})

    routes = [
        Route("/", index),
        Route("/favicon.svg", icon),
        Route("/favicon.ico", icon),
        *(Route(f"/{name}", shared) for name in SHARED),
        Route("/events", events),
        Route("/api/boards", boards),
        Route("/board/{clock}", board_page),
        Route("/api/board/{clock}", board_api),
        Route("/api/board/{clock}/panels.png", panels),
        Route("/api/board/{clock}/picture.svg", picture),
        Route("/api/round", current_round),
        Route("/api/plan", room_plan),
        Route("/api/round/start", round_start, methods=["POST"]),
        Route("/api/round/over", round_over, methods=["POST"]),
        Route("/api/selftest", selftest_all, methods=["POST"]),
        Route("/api/round/new-game", new_games, methods=["POST"]),
        Route("/api/once", once, methods=["POST"]),
        *score_routes(hall, _command_form, _file, _json, _text),
        *board_routes(hall, _command_form, _json, _text),
        Route("/api/board/{clock}/clear", clear, methods=["POST"]),
    ]
    if door == "director":
        routes += login_routes(hall, _file, _text)
    if door == "players":
        kept = ("/favicon.svg", "/favicon.ico", *(f"/{name}" for name in PHONE_SHARED))
        routes = [route for route in routes if route.path in kept or route.path.startswith(PHONE_PATHS)]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False)]
    if door == "director":  # who the director is: the session the server holds for the cookie
        middleware.append(Middleware(DirectorGate, sessions=hall.sessions))
    # inside the gate: a request with the director's session is never rationed; nor any at the
    # director's door on loopback, where every browser is this laptop's (no stranger reaches it)
    if limits is not None and (door == "players" or hall.sessions.login):
        middleware.append(Middleware(RateLimit, limits=limits))
    # the players' door needs no live stream: it never serves /events
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan if door == "director" else None)
    app.state.live = live
    # outside Starlette's own error handler, not among its middleware: its 500 gets the headers too
    return SecurityHeaders(app)


async def _page_form(request):
    """The form of a command from this page's own script, or a refusal: the page sends a header
    no plain form can, and the browser's Origin must be this page; the body is small and prompt."""
    if request.headers.get(COMMAND_HEADER) != "1" or not origin_ok(request.headers):
        return None, _text(403, "commands come from the director's own page")
    try:
        length = int(request.headers.get("content-length") or 0)
    except ValueError:
        length = -1
    if not 0 <= length <= MAX_FORM_BYTES:
        return None, _text(400, "Content-Length: a number of bytes up to 1024")
    try:
        body = await asyncio.wait_for(_read(request, length), FORM_S)
    except TimeoutError:
        return None, _text(408, "the command's body did not arrive in time")
    return parse_qs(body.decode("ascii", "replace")), None


async def _read(request, limit):
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            break
    return body[:limit]


class _Drawing:
    """Pictures drawn in a few threads of their own, each with a time limit. A drawing past its
    limit is answered 503 and finishes in its thread, still holding its place, so a picture that
    never ends can hold at most `PICTURE_WORKERS` threads, never the page."""

    def __init__(self):
        self.pool = ThreadPoolExecutor(PICTURE_WORKERS, thread_name_prefix="hall-picture")
        self.places = threading.BoundedSemaphore(PICTURE_WORKERS)

    async def draw(self, function, *args):
        if not self.places.acquire(blocking=False):
            return 503, "pictures are busy: try again in a moment"

        def run():
            try:
                return function(*args)
            finally:
                self.places.release()

        future = asyncio.get_running_loop().run_in_executor(self.pool, run)
        try:
            return 200, await asyncio.wait_for(asyncio.shield(future), PICTURE_S)
        except TimeoutError:
            return 503, f"the picture took over {PICTURE_S:g} s"

    def close(self):
        self.pool.shutdown(wait=False, cancel_futures=True)


_NO_STORE = {"Cache-Control": "no-store"}


def _file(name):
    return Response((PAGES / name).read_bytes(), media_type="text/html; charset=utf-8", headers=_NO_STORE)


def _json(data):
    return Response(json.dumps(data), media_type="application/json", headers=_NO_STORE)


def _text(status, text):
    return Response(text, status_code=status, media_type="text/plain", headers=_NO_STORE)
