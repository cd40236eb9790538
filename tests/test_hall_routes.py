"""Every route of both doors, attacked as a player on the hall's Wi-Fi would, from one table of
them (docs/hall.md, "The two doors"): the table is checked against the doors' own route lists and
the docs', so a new route without its attacks fails here. For each: at the players' door every
route of the director's is 404; at a director's door that asks for a login, none answers without
a session, a forged one or one logged out; no POST is taken without this page's Origin (nor a
command without its header); every answer of both doors forbids framing, a 500 too; and every
route at the players' door is rationed per address."""

import http.client
import itertools
import re
import secrets
import socket
import time
from pathlib import Path

import pytest

from support.feeds import Feed
from support.hall_helpers import form_headers, game_ended, hall_page, slow_clients
from tileclock.director.event.entries import ScoreBook
from tileclock.director.hall.audit import read
from tileclock.director.pages import web
from tileclock.director.pages.doors import COOKIE, OPEN_PATHS
from tileclock.director.pages.web import COMMAND_HEADER

DOCS = Path(__file__).parent.parent / "docs" / "hall.md"
DIRECTOR, BOTH = "director", "both"
NONE, TOKEN, SESSION = "none", "token", "session"

#: every route: (method, its path in the Route list, a path of it to ask, a form, its doors, what
#: it needs at its own door: `none`, a phone's `token`, or the director's `session` where the
#: director's door asks for a login; every POST also needs this page's Origin)
ROUTES = [
    ("GET", "/", "/", "", DIRECTOR, SESSION),
    ("GET", "/board/{clock}", "/board/c1", "", DIRECTOR, SESSION),
    ("GET", "/scores", "/scores", "", DIRECTOR, SESSION),
    ("GET", "/favicon.svg", "/favicon.svg", "", BOTH, NONE),
    ("GET", "/favicon.ico", "/favicon.ico", "", BOTH, NONE),
    *(
        ("GET", f"/{name}", f"/{name}", "", DIRECTOR, SESSION)
        for name in ("session.js", "calls.js", "calls.css", "health.js", "map.js")
    ),
    *(
        ("GET", f"/{name}", f"/{name}", "", DIRECTOR, SESSION)
        for name in ("index.js", "board.js", "scores.js")
    ),
    ("GET", "/score.js", "/score.js", "", BOTH, NONE),
    ("GET", "/events", "/events", "", DIRECTOR, SESSION),
    ("GET", "/api/boards", "/api/boards", "", DIRECTOR, SESSION),
    ("GET", "/api/board/{clock}", "/api/board/c1", "", DIRECTOR, SESSION),
    ("GET", "/api/board/{clock}/panels.png", "/api/board/c1/panels.png?at_ms=0", "", DIRECTOR, SESSION),
    ("GET", "/api/board/{clock}/picture.svg", "/api/board/c1/picture.svg", "", DIRECTOR, SESSION),
    ("GET", "/api/board/{clock}/history", "/api/board/c1/history", "", DIRECTOR, SESSION),
    ("POST", "/api/board/{clock}/command", "/api/board/c1/command", "action=new_game", DIRECTOR, SESSION),
    # the speech action (who hears the clock) is a command of its own to attack: a row of its own
    (
        "POST",
        "/api/board/{clock}/command",
        "/api/board/c1/command",
        "action=speech&sides=A",
        DIRECTOR,
        SESSION,
    ),
    ("POST", "/api/board/{clock}/call", "/api/board/c1/call", "call=1&answer=taken", DIRECTOR, SESSION),
    ("POST", "/api/board/{clock}/move", "/api/board/c1/move", "to=c2", DIRECTOR, SESSION),
    ("POST", "/api/board/{clock}/clear", "/api/board/c1/clear", "", DIRECTOR, SESSION),
    ("GET", "/api/round", "/api/round", "", DIRECTOR, SESSION),
    ("GET", "/api/plan", "/api/plan", "", DIRECTOR, SESSION),
    ("POST", "/api/round/start", "/api/round/start", "round=1", DIRECTOR, SESSION),
    ("POST", "/api/round/over", "/api/round/over", "", DIRECTOR, SESSION),
    ("POST", "/api/selftest", "/api/selftest", "", DIRECTOR, SESSION),
    ("POST", "/api/round/new-game", "/api/round/new-game", "boards=", DIRECTOR, SESSION),
    ("POST", "/api/once", "/api/once", "", DIRECTOR, SESSION),
    ("POST", "/api/round/lock", "/api/round/lock", "round=3", DIRECTOR, SESSION),
    ("POST", "/api/round/unlock", "/api/round/unlock", "round=3", DIRECTOR, SESSION),
    ("GET", "/api/scores", "/api/scores?round=3", "", DIRECTOR, SESSION),
    ("POST", "/api/scores/{table}", "/api/scores/5", "round=3&score_a=999&score_b=1", DIRECTOR, SESSION),
    ("POST", "/api/scores/{table}/link", "/api/scores/5/link", "round=3", DIRECTOR, SESSION),
    ("GET", "/S/{table}/{side}/{token}", "/S/5/A/{token}", "", BOTH, NONE),
    ("GET", "/s/{table}/{side}/{token}", "/s/5/A/{token}", "", BOTH, NONE),
    ("GET", "/api/score/{table}/{side}/{token}", "/api/score/5/A/{token}", "", BOTH, TOKEN),
    (
        "POST",
        "/api/score/{table}/{side}/{token}",
        "/api/score/5/A/{token}",
        "score_a=1&score_b=2",
        BOTH,
        TOKEN,
    ),
    ("GET", "/login", "/login", "", DIRECTOR, NONE),
    ("POST", "/login", "/login", "password=guess", DIRECTOR, NONE),
    ("POST", "/logout", "/logout", "", DIRECTOR, SESSION),
]


def ids(routes):
    """The tests' names of `routes`: method and path, and the action where one route has several."""
    return [
        f"{method} {path}" + (f" {form.split('&')[0]}" if form.startswith("action=") else "")
        for method, path, _, form, *_ in routes
    ]


#: the POSTs a plain form makes (the login page's): Origin, but no command header
PLAIN_FORMS = ("/login", "/logout")
IDS = ids(ROUTES)
PLAYERS = [route for route in ROUTES if route[4] == BOTH]
DIRECTORS_ONLY = [route for route in ROUTES if route[4] == DIRECTOR]
GATED = [route for route in ROUTES if not route[2].startswith(OPEN_PATHS)]
POSTS = [route for route in ROUTES if route[0] == "POST"]


class Games(Feed):
    """The stand-in feed with a store that has no game of any clock (a board's routes: 404)."""

    def __init__(self, folder):
        super().__init__(folder)
        self.store.log_of = lambda clock_id: None


def routes_of(door):
    """(method, path) of every route `door` (a `door.Door`) serves, HEAD aside."""
    app = door.server.config.app.app  # inside SecurityHeaders: the Starlette app
    return {(method, route.path) for route in app.routes for method in route.methods - {"HEAD"}}


_SOURCES = itertools.count()


def fresh_source():
    """A loopback address no request of this module came from yet: each address's ration is its
    own, so the many requests to a door shared by a module's tests never meet it (the tests of
    the ration choose their addresses)."""
    n = next(_SOURCES)
    return f"127.{100 + n // 65025 % 100}.{n // 255 % 255}.{n % 255 + 1}"


def ask(door, method, path, headers, body=b"", source=None):
    """One request to `door` from `source` (None: a fresh loopback address) with exactly
    `headers`: (status, headers, text); a stream (the live page) is not read."""
    source = source or fresh_source()
    connection = http.client.HTTPConnection("127.0.0.1", door.port, timeout=5, source_address=(source, 0))
    connection.putrequest(method, path, skip_host=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    answer = connection.getresponse()
    streamed = (answer.getheader("content-type") or "").startswith("text/event-stream")
    text = "" if streamed else answer.read().decode("utf-8", "replace")
    connection.close()
    return answer.status, {k.lower(): v for k, v in answer.getheaders()}, text


def asked(route, door, token, own=True, **more):
    """The request of `route` at `door` as the page's own script sends it (`own`) or as another
    page would: (method, path, headers, body)."""
    method, _, path, form, *_ = route
    headers, body = form_headers(door, form, own=own, **more)
    if route[2] in PLAIN_FORMS:
        headers.pop(COMMAND_HEADER, None)
    if method == "GET":
        headers.pop("Content-Type"), headers.pop("Content-Length")
        body = b""
    return method, path.format(token=token), headers, body


def untouched(server, book_before):
    """Nothing sent, nothing on the audit trail, the score book as it was."""
    assert server.feed.sent == []
    assert read(server.feed.store.outdir) == []
    assert book_files(server) == book_before


def book_files(server):
    """The score book's files and what they hold."""
    return {p.name: p.read_bytes() for p in Path(server.scores.folder).iterdir()}


def make_doors(tmp_path, **options):
    book = ScoreBook(str(tmp_path / "scores"))
    token = book.issue(3, "5", "A")
    feed = Games(tmp_path)
    game_ended(feed.store.outdir, 3, "5")  # the phones' entries are taken for an ended game only
    return hall_page(feed, scores=book, phones=("127.0.0.1", 0), **options), token


@pytest.fixture
def doors(tmp_path):
    """Both doors, the director's on loopback (no login), table 5 of round 3 given a link."""
    page, token = make_doors(tmp_path)
    with page as server:
        yield server, token


@pytest.fixture
def login_doors(tmp_path):
    """Both doors, the director's asking for a login (as it does beyond this laptop)."""
    page, token = make_doors(tmp_path, login=True)
    with page as server:
        yield server, token


# The doors the refusals are tried at, one pair for the module (a page's start is most of a
# test's time): each of those tests asserts that nothing was sent, written or changed, so one
# that let a request through also fails every test after it; the tests that change a game or a
# round have doors of their own (above).


@pytest.fixture(scope="module")
def shared_doors(tmp_path_factory):
    page, token = make_doors(tmp_path_factory.mktemp("doors"))
    with page as server:
        yield server, token


@pytest.fixture(scope="module")
def shared_login_doors(tmp_path_factory):
    page, token = make_doors(tmp_path_factory.mktemp("login-doors"), login=True)
    with page as server:
        yield server, token


# --- the table is the code's, and the docs'


def test_the_table_is_every_route_of_both_doors(doors):
    server, _ = doors
    assert routes_of(server.door) == {(method, path) for method, path, *_ in ROUTES}
    assert routes_of(server.phones) == {(method, path) for method, path, *_ in PLAYERS}


def test_the_docs_table_lists_every_route_with_its_door_and_login():
    """docs/hall.md's table under "The two doors": one row a route (`METHOD path`), its door
    (players' and director's, or director's) and, for a route of the players' door, its login."""
    section = DOCS.read_text(encoding="utf-8").split("### The two doors", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        for method, path in re.findall(r"`(GET|POST) ([^`]+)`", cells[0] if line.startswith("|") else ""):
            rows[(method, path)] = cells[1:]
    assert set(rows) == {(method, path) for method, path, *_ in ROUTES}
    for method, path, _, _, doors_, login in ROUTES:
        door, needs = rows[(method, path)][:2]
        assert ("players'" in door) == (doors_ == BOTH), (method, path, door)
        word = {NONE: "none", TOKEN: "token", SESSION: "session"}[login]
        assert word in needs, (method, path, needs)


# --- the players' door serves the score form and nothing else


@pytest.mark.parametrize("route", DIRECTORS_ONLY, ids=ids(DIRECTORS_ONLY))
def test_every_route_of_the_directors_is_404_at_the_players_door(shared_doors, route):
    server, token = shared_doors
    before = book_files(server)
    method, path, headers, body = asked(route, server.phones, token)
    status, answer, _ = ask(server.phones, method, path, headers, body)
    assert status == 404
    assert "set-cookie" not in answer
    untouched(server, before)


# --- a director's door that asks for a login: nothing without a session


def cookies(server):
    """A forged session cookie, an empty one, and one logged out (through the door's /logout)."""
    secret, _ = server.sessions.open()
    headers, body = form_headers(server, "", **{"Cookie": f"{COOKIE}={secret}"})
    headers.pop(COMMAND_HEADER)
    assert ask(server.door, "POST", "/logout", headers, body)[0] == 303
    assert server.sessions.label(secret) is None
    return {"forged": secrets.token_urlsafe(32), "empty": "", "logged out": secret}


@pytest.mark.parametrize("route", GATED, ids=ids(GATED))
def test_no_route_answers_without_a_session_a_forged_one_or_one_logged_out(shared_login_doors, route):
    """Before this table, only Round over and the boards were tried without a session."""
    server, token = shared_login_doors
    before = book_files(server)
    pages = route[0] == "GET" and (route[2] in ("/", "/scores") or route[2].startswith("/board/"))
    for name, value in [("none", None), *cookies(server).items()]:
        more = {} if value is None else {"Cookie": f"{COOKIE}={value}"}
        method, path, headers, body = asked(route, server.door, token, **more)
        status, answer, _ = ask(server.door, method, path, headers, body)
        assert status == (303 if pages else 401), name
        assert answer.get("location") == ("/login" if pages else None), name
        assert "set-cookie" not in answer, name  # no session handed out
    untouched(server, before)


def test_with_a_session_every_gated_route_answers(login_doors):
    """The other side of the test above: the same requests with a session are not refused by it."""
    server, token = login_doors
    secret, _ = server.sessions.open()
    for route in sorted(GATED, key=lambda r: r[2].endswith("/link")):  # new links last: they end the token
        if route[2] == "/logout":
            continue
        method, path, headers, body = asked(route, server.door, token, Cookie=f"{COOKIE}={secret}")
        assert ask(server.door, method, path, headers, body)[0] not in (401, 303, 403), route[:2]


# --- no POST without this page's Origin


ORIGINS = {"no Origin": None, "another site": "http://evil.example", "null": "null"}


def posted(server, door, route, token, origin, session=True, command_header=True):
    method, path, headers, body = asked(route, door, token)
    if session:
        headers["Cookie"] = f"{COOKIE}={server.sessions.open()[0]}"
    headers.pop("Origin")
    if origin is not None:
        headers["Origin"] = origin
    if not command_header:
        headers.pop(COMMAND_HEADER, None)
    return ask(door, method, path, headers, body)


@pytest.mark.parametrize("origin", ORIGINS.values(), ids=ORIGINS.keys())
@pytest.mark.parametrize("route", POSTS, ids=ids(POSTS))
def test_no_post_is_taken_without_this_pages_origin_even_with_a_session(shared_login_doors, route, origin):
    server, token = shared_login_doors
    before = book_files(server)
    status, _, text = posted(server, server.door, route, token, origin)
    assert status == 403, text
    untouched(server, before)


@pytest.mark.parametrize("origin", ORIGINS.values(), ids=ORIGINS.keys())
@pytest.mark.parametrize("route", POSTS, ids=ids(POSTS))
def test_no_post_is_taken_without_this_pages_origin_on_this_laptops_door(shared_doors, route, origin):
    """On loopback anyone at the laptop is the director: a page on another site the director's
    browser opens is not."""
    server, token = shared_doors
    before = book_files(server)
    status, _, text = posted(server, server.door, route, token, origin, session=False)
    assert status == 403, text
    untouched(server, before)


COMMANDS = [route for route in POSTS if route[2] not in PLAIN_FORMS]


@pytest.mark.parametrize("route", COMMANDS, ids=ids(COMMANDS))
def test_no_command_is_taken_without_the_pages_header_whatever_its_origin(shared_doors, route):
    """A cross-site plain form sends no custom header (and the Origin check is then the second wall)."""
    server, token = shared_doors
    before = book_files(server)
    own_origin = f"http://127.0.0.1:{server.port}"
    status, _, _ = posted(server, server.door, route, token, own_origin, session=False, command_header=False)
    assert status == 403
    untouched(server, before)


@pytest.mark.parametrize("origin", ORIGINS.values(), ids=ORIGINS.keys())
def test_a_phones_entry_needs_this_doors_origin(shared_doors, origin):
    server, token = shared_doors
    before = book_files(server)
    (route,) = [r for r in PLAYERS if r[0] == "POST"]
    status, _, _ = posted(server, server.phones, route, token, origin, session=False)
    assert status == 403
    untouched(server, before)


def test_a_logout_without_this_pages_origin_leaves_the_session(login_doors):
    server, token = login_doors
    secret, _ = server.sessions.open()
    method, path, headers, body = asked(ROUTES[-1], server.door, token, Cookie=f"{COOKIE}={secret}")
    headers.pop("Origin")
    assert ask(server.door, method, path, headers, body)[0] == 403
    assert server.sessions.label(secret) is not None


# --- no answer of either door can be framed


def framing_forbidden(answer):
    csp = answer.get("content-security-policy", "")
    return (
        "frame-ancestors 'none'" in csp
        and "script-src 'self'" in csp
        and answer.get("x-frame-options") == "DENY"
    )


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_every_answer_of_both_doors_forbids_framing(shared_login_doors, route):
    """Refusals included: 404 at the players' door, 401 or 303 without a session, 403 without
    the Origin (as another page frames it: no Origin, no cookie)."""
    server, token = shared_login_doors
    for door in (server.door, server.phones):
        method, path, headers, body = asked(route, door, token, own=False)
        status, answer, _ = ask(door, method, path, headers, body)
        assert framing_forbidden(answer), (door.name, status)


def test_a_route_that_fails_still_forbids_framing(tmp_path):
    """Before: Starlette's own 500 (here: a feed whose store cannot find a game) was answered
    outside the headers' middleware, with none of them."""
    with hall_page(Feed(tmp_path)) as server:  # its store has no `log_of`: the board's routes fail
        status, answer, _ = ask(server.door, "GET", "/api/board/c1", {"Host": f"127.0.0.1:{server.port}"})
        assert status == 500 and framing_forbidden(answer)


# --- every route at the players' door is rationed per address


@pytest.mark.parametrize("route", PLAYERS, ids=ids(PLAYERS))
def test_every_route_at_the_players_door_is_rationed_per_address(tmp_path, monkeypatch, route):
    monkeypatch.setattr(web, "PHONE_LIMITS", {"connections": 16, "per_s": 0.01, "burst": 1})
    page, token = make_doors(tmp_path)
    with page as server:
        method, path, headers, body = asked(route, server.phones, token)
        assert ask(server.phones, method, path, headers, body, source="127.0.0.6")[0] != 429
        status, answer, _ = ask(server.phones, method, path, headers, body, source="127.0.0.6")
        assert status == 429 and answer.get("retry-after") == "1"
        # another address is not
        assert ask(server.phones, method, path, headers, body, source="127.0.0.7")[0] != 429


def test_a_director_with_a_session_is_never_rationed(tmp_path, monkeypatch):
    monkeypatch.setattr(web, "DIRECTOR_LIMITS", {"connections": 64, "per_s": 0.01, "burst": 1})
    page, token = make_doors(tmp_path, login=True)
    with page as server:
        secret, _ = server.sessions.open()
        for route in [r for r in GATED if r[0] == "GET" and r[2] != "/events"]:
            method, path, headers, _ = asked(route, server.door, token, Cookie=f"{COOKIE}={secret}")
            assert ask(server.door, method, path, headers, source="127.0.0.8")[0] != 429, route[:2]
        # and a stranger's login is
        route = next(r for r in ROUTES if r[:2] == ("POST", "/login"))
        method, path, headers, body = asked(route, server.door, token)
        statuses = [ask(server.door, method, path, headers, body, source="127.0.0.9")[0] for _ in range(2)]
        assert statuses == [403, 429]


# --- the speech action and the move route: hostile input, a slow client, the same POST again

HOSTILE_FORMS = {
    "speech 1 MB": ("command", "action=speech&sides=" + "A" * 1_000_000),
    "speech nested": ("command", "action=speech&sides=" + "[" * 10_000 + "]" * 10_000),
    "speech object": ("command", 'action=speech&sides={"A":true}'),
    "speech control": ("command", "action=speech&sides=A%00"),
    "speech twice": ("command", "action=speech&sides=off&sides=AB"),  # before: the first was sent
    "move 1 MB": ("move", "to=" + "c" * 1_000_000),
    "move nested": ("move", "to=" + "[" * 10_000 + "]" * 10_000),
    "move object": ("move", 'to={"to":"c2"}'),
    "move control": ("move", "to=c2%1B%5B2J"),
    "move line break": ("move", "to=c2%0D%0Amoved+790+c3"),
    "move too long": ("move", "to=" + "c" * 33),
    "move huge game id": ("move", "to=c2&game=" + "9" * 100_000),
    "move game id": ("move", "to=c2&game=" + "9" * 900),  # no game id is taken from the page
}


@pytest.mark.parametrize(("route", "form"), HOSTILE_FORMS.values(), ids=HOSTILE_FORMS.keys())
def test_a_hostile_speech_or_move_is_a_clear_refusal_with_nothing_sent(shared_doors, route, form):
    server, _ = shared_doors
    before = book_files(server)
    headers, body = form_headers(server.door, form)
    status, _, text = ask(server.door, "POST", f"/api/board/c1/{route}", headers, body)
    if len(body) > 1024:  # past the page's cap on a form: refused before it is read
        assert (status, text.startswith("Content-Length")) == (400, True), text
    elif route == "command":
        assert (status, text.startswith("speech: sides")) == (400, True), text
    elif "game=" in form:
        assert status == 409, text  # the spare is fine: c1 has no game to move (nothing sent)
    else:
        assert (status, "the spare clock's id" in text) == (400, True), text
    assert len(text) < 300  # quotes none of it
    untouched(server, before)


def slow_post(port, path, addr="127.0.0.2"):
    """A connection from `addr` that sends a POST of `path`'s headers and half its body, never the rest."""
    client = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(addr, 0))
    client.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 40\r\n\r\naction=sp".encode()
    )
    return client


def test_slow_clients_hold_up_neither_the_speech_action_nor_a_move(doors):
    """Slowloris at the director's door from one address, some of them halfway through a speech
    or a move: the director's own speech and move (from this laptop) are answered within a second."""
    server, _ = doors
    held = slow_clients(server.port, 60)
    held += [
        slow_post(server.port, f"/api/board/c1/{path}") for path in ("command", "move") for _ in range(20)
    ]
    try:
        for path, form, status in [("command", "action=speech&sides=AB", 200), ("move", "to=c2", 409)]:
            headers, body = form_headers(server.door, form)
            started = time.monotonic()
            got, _, text = ask(
                server.door, "POST", f"/api/board/c1/{path}", headers, body, source="127.0.0.1"
            )
            assert (got, time.monotonic() - started < 1.0) == (status, True), text
    finally:
        for client in held:
            client.close()
    (sent,) = server.feed.sent  # the speech, once; the move refused (c1 has no game here), never sent
    assert sent.startswith("set speech=AB by=")


# --- an action sent again is a replay: refused, on the trail, never done twice

#: the routes that take an action's one-time value: every command at the director's door but a
#: phone's entry (its token is its credential) and the value's own route
ONCE_TAKING = [
    route
    for route in COMMANDS
    if route[4] == DIRECTOR and route[1] != "/api/once" and not route[2].startswith("/api/score/")
]


def test_a_value_taken_once_refuses_every_action_sent_with_it_again(doors):
    """Each action route, sent with a one-time value an action used before (a captured POST's):
    409, a `replay` line on the trail naming it, nothing sent, the score book as it was."""
    server, token = doors
    before = book_files(server)
    for route in ONCE_TAKING:
        method, path, headers, body = asked(route, server.door, token)
        spent = form_headers(server.door, "action=none")[0]  # refused (400), its value taken
        assert ask(server.door, "POST", "/api/board/c1/command", spent, b"action=none")[0] == 400
        headers["X-Tileclock-Once"] = spent["X-Tileclock-Once"]
        status, _, text = ask(server.door, method, path, headers, body)
        assert (status, "a replay" in text) == (409, True), (route[:2], text)
    assert server.feed.sent == []
    assert book_files(server) == before
    trail = read(server.feed.store.outdir)
    assert [(e["action"], e["changed"]["path"]) for e in trail] == [("replay", r[2]) for r in ONCE_TAKING]
    assert {e["by"] for e in trail} == {"page"}  # this laptop's door: no session label


def test_the_same_post_sent_twice_is_done_once(doors):
    """A double submit, or a POST captured and sent again byte for byte: done once, the second
    409 and on the trail as a replay of the same board."""
    server, _ = doors
    headers, body = form_headers(server.door, "action=speech&sides=AB")
    first = ask(server.door, "POST", "/api/board/c1/command", headers, body)
    again = ask(server.door, "POST", "/api/board/c1/command", headers, body)
    assert (first[0], again[0]) == (200, 409), again[2]
    (sent,) = server.feed.sent
    assert sent.startswith("set speech=AB by=")
    action, replay = read(server.feed.store.outdir)
    assert (action["action"], replay["action"], replay["clock"]) == ("speech", "replay", "c1")
    assert replay["changed"] == {"path": "/api/board/c1/command"}


def test_an_action_without_a_value_or_with_one_made_up_or_another_sessions_is_refused(login_doors):
    server, token = login_doors
    mine, theirs = (f"{COOKIE}={server.sessions.open()[0]}" for _ in range(2))
    headers, body = form_headers(server.door, "action=speech&sides=A", Cookie=mine)
    value = headers.pop("X-Tileclock-Once")
    refusals = [
        headers,  # none
        {**headers, "X-Tileclock-Once": secrets.token_urlsafe(18)},  # made up
        {**headers, "Cookie": theirs, "X-Tileclock-Once": value},  # another session's
    ]
    for each in refusals:
        status, _, text = ask(server.door, "POST", "/api/board/c1/command", each, body)
        assert (status, "one-time value" in text) == (403, True), text
    assert server.feed.sent == [] and read(server.feed.store.outdir) == []
    # its own session's value was left as it was: still good, once
    status, _, _ = ask(
        server.door, "POST", "/api/board/c1/command", {**headers, "X-Tileclock-Once": value}, body
    )
    assert status == 200
    assert len(server.feed.sent) == 1
