"""The director's login and logout (docs/hall.md, "The two doors"; the sessions: doors.py).

    GET  /login              the login form (hall_page/login.html); with `?once=CODE`, a one-time
                             link printed at the hall's start: the session at once
    POST /login              password=...: the page's password (hall-setup's tileclock-page.passwd)
    POST /logout             the session ends; its cookie opens nothing from now on

A login or logout must come from this page itself (its Origin): another site's form cannot log a
browser in as someone else, nor out. Wrong passwords are counted per address (doors.py).
"""

import asyncio
from urllib.parse import parse_qs

from starlette.responses import Response
from starlette.routing import Route

from .doors import cookie_of, set_cookie
from .guard import origin_ok

#: a login form's largest body
MAX_LOGIN_BYTES = 1024


def login_routes(hall, file, text):
    """The routes above for `hall` (its `sessions`), with the app's helpers."""
    sessions = hall.sessions

    def logged_in(request):
        secret, _label = sessions.open()
        return Response(status_code=303, headers={"Location": "/", "Cache-Control": "no-store"}), secret

    def with_cookie(answer, request, secret, end=False):
        name, value = set_cookie(secret, request.scope, end)
        answer.headers.append(name.decode(), value.decode())
        return answer

    async def login_page(request):
        code = request.query_params.get("once")
        if code is not None:
            if not sessions.use_once(code[:64]):
                return text(403, "this one-time link has been used (or is not one): log in with the password")
            answer, secret = logged_in(request)
            return with_cookie(answer, request, secret)
        return file("login.html")

    async def login(request):
        addr = request.client.host if request.client else ""
        if not origin_ok(request.headers, request.url.scheme):
            return text(403, "a login comes from the director's own page")
        if not sessions.attempt(addr):
            return text(429, "too many wrong passwords: wait a minute")
        try:
            length = int(request.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_LOGIN_BYTES:
            return text(400, "Content-Length: a number of bytes up to 1024")
        try:
            body = await asyncio.wait_for(request.body(), 5)
        except TimeoutError:
            return text(408, "the login's body did not arrive in time")
        password = parse_qs(body[:MAX_LOGIN_BYTES].decode("utf-8", "replace")).get("password", [""])[0]
        if not await asyncio.to_thread(sessions.password_ok, password):  # PBKDF2: off the loop
            return text(403, "not the page's password (hall-setup printed it; tileclock-page.passwd)")
        sessions.succeeded(addr)
        answer, secret = logged_in(request)
        return with_cookie(answer, request, secret)

    async def logout(request):
        if not origin_ok(request.headers, request.url.scheme):
            return text(403, "a logout comes from the director's own page")
        sessions.close(cookie_of(request.scope))
        answer = Response(status_code=303, headers={"Location": "/login", "Cache-Control": "no-store"})
        return with_cookie(answer, request, "", end=True)

    return [
        Route("/login", login_page),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]
