"""The hall page's two doors and what stands at each (docs/hall.md, "The two doors").

- **The headers** on every answer of both doors: no framing (`frame-ancestors 'none'` and
  `X-Frame-Options: DENY`: a decoy page cannot put a button of the page under a player's
  click), scripts from the page itself only (`script-src 'self'`: the pages have no inline
  script), no Referer to another site (a phone's link holds its token).
- **The director's door** (`DirectorGate`, `Sessions`): every command is named by the session
  the server holds for it, from its cookie (HttpOnly, SameSite=Strict), never by a label the
  browser sends; where the door listens beyond this laptop a session needs a login (the page's
  password, or a one-time link printed at the start).
"""

import collections
import secrets
import threading
import time

from ..hall.page_password import password_matches

#: the pages' own scripts, styles, pictures and streams, nothing else; never inside a frame
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # no Referer to another site (a phone's link holds its token); `no-referrer` would also make
    # Chromium send `Origin: null` with the login form's POST, which the Origin check refuses
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """ASGI middleware: `HEADERS` on every HTTP answer, whatever route (or refusal) made it. It
    wraps the whole Starlette app (app.py), so Starlette's own `500` gets them too."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        return await self.app(scope, receive, with_headers)


# --- the director's door: who is the director


#: the session cookie's name; its value is the session's secret, never shown nor written down
COOKIE = "tileclock-director"
#: sessions kept at once (the oldest goes first): a director, a deputy, a tablet or two, and
#: every browser a loopback page opened
MAX_SESSIONS = 200
#: failed logins an address may make a minute; past that, 429 until the minute is out
MAX_FAILED_LOGINS = 5
#: addresses whose tries this minute are counted, at most (a flood of addresses is bounded)
MAX_ADDRESSES = 10_000
#: what a page needs no session for: the login itself, the icon
OPEN_PATHS = ("/login", "/favicon.svg", "/favicon.ico")
#: the director's pages: a browser sent here without a session is taken to the login
PAGE_PATHS = ("/", "/scores")


class Sessions:
    """The director's door's sessions, held in memory by the server: a session's secret is its
    cookie, its label (`page-` and 8 random letters) names it on the audit trail and in every
    command's `by`. `login`: whether a session needs the password or a one-time link (the door
    listens beyond this laptop); else any browser that opens a page is given one."""

    def __init__(self, login=False, password_hash=None):
        self.login = login
        self.password_hash = password_hash
        self._sessions = collections.OrderedDict()  # secret -> label
        self._once = set()  # one-time links not used yet
        self._failed = {}  # address -> (minute, failures)
        self._lock = threading.Lock()

    def open(self):
        """A new session: (its secret, for the cookie; its label, for the trail)."""
        secret, label = secrets.token_urlsafe(32), f"page-{secrets.token_hex(4)}"
        with self._lock:
            self._sessions[secret] = label
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return secret, label

    def label(self, secret):
        """The label of the session whose secret is `secret`, or None: no such session (any more)."""
        with self._lock:
            return self._sessions.get(secret) if secret else None

    def close(self, secret):
        """End the session `secret` (a logout): its cookie opens nothing from now on."""
        with self._lock:
            self._sessions.pop(secret, None)

    def one_time_link(self):
        """A code for `/login?once=CODE`: good for one login, until the hall stops."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._once.add(code)
        return code

    def use_once(self, code):
        """Whether `code` is a one-time link not used yet (it is used now)."""
        with self._lock:
            if code in self._once:
                self._once.discard(code)
                return True
        return False

    def attempt(self, addr, now=None):
        """Count a password try from `addr`, before its (slow) check: whether it may try now,
        fewer than `MAX_FAILED_LOGINS` this minute. Counted first, so a burst of tries at once
        passes no more than that; a right password hands its try back (`succeeded`)."""
        minute = int((time.time() if now is None else now) // 60)
        with self._lock:
            if addr not in self._failed and len(self._failed) >= MAX_ADDRESSES:
                # only this minute's count matters: the others go, never the counts still running
                self._failed = {a: seen for a, seen in self._failed.items() if seen[0] == minute}
                if len(self._failed) >= MAX_ADDRESSES:
                    return False  # more addresses trying this minute than any hall has: wait
            at, tries = self._failed.get(addr, (minute, 0))
            tries = tries if at == minute else 0
            if tries >= MAX_FAILED_LOGINS:
                return False
            self._failed[addr] = (minute, tries + 1)
            return True

    def succeeded(self, addr):
        """A right password from `addr`: its try is not counted against it."""
        with self._lock:
            at, tries = self._failed.get(addr, (0, 0))
            if tries:
                self._failed[addr] = (at, tries - 1)

    def password_ok(self, password):
        """Whether `password` is the page's (never, without a password file)."""
        return bool(self.password_hash) and password_matches(self.password_hash, password)


def cookie_of(scope):
    """The session cookie's value in the request `scope`, or None."""
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            for part in value.decode("latin-1").split(";"):
                key, _, text = part.strip().partition("=")
                if key == COOKIE:
                    return text
    return None


def set_cookie(secret, scope, end=False):
    """The Set-Cookie header of the session `secret` (`end`: the one that clears it): HttpOnly (no
    script reads it), SameSite=Strict (no other site's page sends it), Secure over HTTPS."""
    value = "" if end else secret
    words = [f"{COOKIE}={value}", "Path=/", "HttpOnly", "SameSite=Strict"]
    if scope.get("scheme") == "https":
        words.append("Secure")
    if end:
        words.append("Max-Age=0")
    return (b"set-cookie", "; ".join(words).encode())


class DirectorGate:
    """ASGI middleware of the director's door: each request's session, from its cookie only, in
    `scope["tileclock.by"]` (the label every command and audit line is named by; `page` for a
    request with none, on this laptop's own door). Where a login is needed, a request with no
    session reaches only `OPEN_PATHS`: a page is sent to the login, anything else is 401."""

    def __init__(self, app, sessions):
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        label = self.sessions.label(cookie_of(scope))
        path = scope["path"]
        scope["tileclock.session"] = label is not None
        scope["tileclock.by"] = label or "page"
        if label is None and self.sessions.login and not path.startswith(OPEN_PATHS):
            if scope["method"] == "GET" and (path in PAGE_PATHS or path.startswith("/board/")):
                return await _answer(send, 303, b"to the login", [(b"location", b"/login")])
            return await _answer(send, 401, b"the director's page: log in first (/login)")
        if label is not None or self.sessions.login or scope["method"] != "GET":
            return await self.app(scope, receive, send)
        if not (path in PAGE_PATHS or path.startswith("/board/")):
            return await self.app(scope, receive, send)
        # this laptop's own door: the browser opening a page is given its session
        secret, scope["tileclock.by"] = self.sessions.open()
        scope["tileclock.session"] = True

        async def with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), set_cookie(secret, scope)]}
            await send(message)

        return await self.app(scope, receive, with_cookie)


async def _answer(send, status, body, headers=()):
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"cache-control", b"no-store"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


# --- one address cannot starve the page


class AddressLimits:
    """A door's caps per client address: `connections` open at once (one more is answered 503
    and closed at once, before it can hold a place), and requests a second (`per_s`, in bursts of
    `burst`; one more is 429). Kept by the door's own event loop: no lock."""

    def __init__(self, connections, per_s, burst):
        self.connections, self.per_s, self.burst = connections, per_s, burst
        self.open = collections.Counter()  # address -> connections open
        self.buckets = {}  # address -> (requests it may still make, when that was counted)

    def connect(self, addr):
        """Whether `addr` may open one more connection (counted if so)."""
        if self.open[addr] >= self.connections:
            return False
        self.open[addr] += 1
        return True

    def disconnect(self, addr):
        """A connection of `addr` closed."""
        self.open[addr] -= 1
        if self.open[addr] <= 0:
            del self.open[addr]

    def request(self, addr, now=None):
        """Whether `addr` may make a request now (a token bucket: `per_s` a second, `burst` at once)."""
        now = time.monotonic() if now is None else now
        tokens, then = self.buckets.get(addr, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.per_s)
        if tokens < 1:
            self.buckets[addr] = (tokens, now)
            return False
        self.buckets[addr] = (tokens - 1, now)
        if len(self.buckets) > 10_000:  # many addresses: forget the ones whose bucket is full again
            full = [a for a, (t, at) in self.buckets.items() if t + (now - at) * self.per_s >= self.burst]
            for gone in full:
                del self.buckets[gone]
        return True


#: the players' door, per address: a phone's form is a page, a script, its data and an entry
PHONE_LIMITS = {"connections": 16, "per_s": 10, "burst": 40}
#: the director's door, per address (a session's requests are never rationed, only counted open)
DIRECTOR_LIMITS = {"connections": 64, "per_s": 10, "burst": 40}
#: what a connection past its address's cap is told, before it is closed
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 45\r\n"
    b"connection: close\r\n\r\ntoo many connections from your address: later"
)


class RateLimit:
    """ASGI middleware: a request past its address's rate (`AddressLimits.request`) is answered
    429, unless it comes with the director's session (a tab of the director's is never refused by
    a limit meant for strangers)."""

    def __init__(self, app, limits):
        self.app = app
        self.limits = limits

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("tileclock.session"):
            return await self.app(scope, receive, send)
        addr = (scope.get("client") or ("?", 0))[0]
        if not self.limits.request(addr):
            return await _answer(
                send, 429, b"too many requests from your address: wait a second", [(b"retry-after", b"1")]
            )
        return await self.app(scope, receive, send)
