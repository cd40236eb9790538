"""The hall page's two doors, attacked as a player on the hall's Wi-Fi would (issue 37): the
players' door serves the score form and nothing else; the director's door, open beyond this
laptop, lets nobody act without a login, and names every action by the server's session, never
by a label the browser sends; no page of either door can be framed (Chromium)."""

import http.client
import http.server
import json
import re
import threading
import time

import pytest

from support.feeds import Feed
from support.hall_helpers import QUICK_ROUNDS, form_headers, game_ended, hall_page, page_request, slow_clients
from tileclock.director.event.entries import ScoreBook
from tileclock.director.hall.audit_read import read
from tileclock.director.hall.page_password import hash_password
from tileclock.director.pages.doors import MAX_ADDRESSES, Sessions
from tileclock.director.pages.web import COMMAND_HEADER, MAX_DIRECTOR_CONNECTIONS

PASSWORD = "correct horse"


def own(door, form="", **more):
    """The headers (and body) of the page's own script at `door` (anything with a `port`)."""
    return form_headers(door, form, **more)


@pytest.fixture
def doors(tmp_path):
    """The page with both doors, score entry on, table 5 of round 3 given a link."""
    book = ScoreBook(str(tmp_path / "scores"))
    token = book.issue(3, "5", "A")
    feed = Feed(tmp_path)
    game_ended(feed.store.outdir, 3, "5")  # the phones' entries are taken for an ended game only
    with hall_page(feed, scores=book, phones=("127.0.0.1", 0)) as server:
        yield server, token


DIRECTORS = [
    ("GET", "/", ""),
    ("GET", "/board/c1", ""),
    ("GET", "/api/boards", ""),
    ("GET", "/events", ""),
    ("GET", "/api/board/c1", ""),
    ("GET", "/api/board/c1/history", ""),
    ("POST", "/api/board/c1/command", "action=new_game"),
    ("POST", "/api/board/c1/call", "call=1&answer=taken"),
    ("POST", "/api/board/c1/clear", ""),
    ("GET", "/api/round", ""),
    ("POST", "/api/round/start", "round=1"),
    ("POST", "/api/round/over", ""),
    ("POST", "/api/round/lock", "round=3"),
    ("POST", "/api/round/unlock", "round=3"),
    ("GET", "/scores", ""),
    ("GET", "/api/scores?round=3", ""),
    ("POST", "/api/scores/5", "round=3&score_a=999&score_b=1"),
    ("POST", "/api/scores/5/link", "round=3"),
    ("GET", "/login", ""),
]


@pytest.mark.parametrize(("method", "path", "form"), DIRECTORS)
def test_the_players_door_serves_nothing_of_the_directors(doors, method, path, form):
    """Before: one server and one port, so a phone with the two headers set by hand settled a
    table, took its link, answered a call, opened a new game and locked the round."""
    server, _ = doors
    headers, body = own(server.phones, form)
    status, _ = page_request(server.phones, method, path, headers, body)
    assert status == 404
    assert server.feed.sent == [] and read(server.feed.store.outdir) == []


def test_the_players_door_serves_the_score_form_its_data_and_an_entry(doors):
    server, token = doors
    assert page_request(server.phones, "GET", f"/S/5/A/{token}", own(server.phones)[0])[0] == 200
    assert page_request(server.phones, "GET", "/score.js", own(server.phones)[0])[0] == 200
    status, text = page_request(server.phones, "GET", f"/api/score/5/A/{token}", own(server.phones)[0])
    assert status == 200 and '"table": "5"' in text
    status, _ = page_request(
        server.phones, "POST", f"/api/score/5/A/{token}", *own(server.phones, "score_a=1&score_b=2")
    )
    assert status == 200


def test_a_locked_round_is_unlocked_by_the_director_on_the_audit_trail(doors):
    """Before: after a lock (one a phone could make), the director's own corrections were
    refused and there was no unlock."""
    server, token = doors
    cookie, label = server.sessions.open()
    session = {"Cookie": f"tileclock-director={cookie}"}

    def post(path, form):
        return page_request(server, "POST", path, *own(server, form, **session))

    assert post("/api/round/lock", "round=3")[0] == 200
    status, text = post("/api/scores/5", "round=3&score_a=402&score_b=380")
    assert status == 400 and "locked" in text
    assert post("/api/round/unlock", "round=3")[0] == 200
    assert post("/api/scores/5", "round=3&score_a=402&score_b=380")[0] == 200
    trail = [(e["action"], e["by"], e["changed"].get("round")) for e in read(server.feed.store.outdir)]
    # the refused entry is on the trail too (its outcome: refused), then the unlock, then the entry
    assert trail == [("lock", label, 3), ("score", label, 3), ("unlock", label, 3), ("score", label, 3)]


@pytest.fixture
def login_page(tmp_path):
    """The director's door as it is where it listens beyond this laptop: a login first."""
    book = ScoreBook(str(tmp_path / "scores"))
    with hall_page(
        Feed(tmp_path), scores=book, login=True, password_hash=hash_password(PASSWORD, rounds=QUICK_ROUNDS)
    ) as server:
        yield server


def log_in(server, password=PASSWORD):
    """POST the login form as the login page does: (status, the session cookie's value or None)."""
    headers, body = own(server, f"password={password}")
    headers.pop(COMMAND_HEADER)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    connection.putrequest("POST", "/login", skip_host=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    answer = connection.getresponse()
    cookie = answer.getheader("set-cookie") or ""
    answer.read()
    connection.close()
    found = re.match(r"tileclock-director=([^;]+);", cookie)
    if found:
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return answer.status, found and found.group(1)


def test_no_director_action_without_a_login_and_by_is_the_servers_session(login_page):
    """Before: any client that reached the page was the director, and the audit trail's `by`
    was whatever label it sent (`X-Tileclock-Session`)."""
    server = login_page
    headers, body = own(server, **{"X-Tileclock-Session": "director1"})
    assert page_request(server, "POST", "/api/round/over", headers, body)[0] == 401
    assert page_request(server, "GET", "/api/boards", headers)[0] == 401
    assert page_request(server, "GET", "/")[0] == 303  # to the login
    assert page_request(server, "GET", "/login")[0] == 200
    assert server.feed.sent == [] and read(server.feed.store.outdir) == []
    assert log_in(server, "wrong") == (403, None)
    status, cookie = log_in(server)
    assert status == 303 and cookie
    headers, body = own(
        server, **{"X-Tileclock-Session": "director1", "Cookie": f"tileclock-director={cookie}"}
    )
    status, text = page_request(server, "POST", "/api/round/over", headers, body)
    assert status == 200, text
    label = server.sessions.label(cookie)
    assert re.fullmatch(r"page-[0-9a-f]{8}", label) and label != "page-director1"
    assert [e["by"] for e in read(server.feed.store.outdir)] == [label]
    assert re.fullmatch(rf"round over by={label}_[0-9a-z]+_1", server.feed.sent[0])
    # logged out, the cookie opens nothing
    logout = {k: v for k, v in headers.items() if k != COMMAND_HEADER}
    assert page_request(server, "POST", "/logout", {**logout, "Content-Length": "0"})[0] == 303
    assert page_request(server, "POST", "/api/round/over", headers, body)[0] == 401


def test_a_one_time_link_logs_in_once(login_page):
    server = login_page
    code = server.one_time_link().split("once=")[1]
    status, _ = page_request(server, "GET", f"/login?once={code}")
    assert status == 303
    assert page_request(server, "GET", f"/login?once={code}")[0] == 403


def test_wrong_passwords_are_rationed(login_page):
    server = login_page
    for _ in range(5):
        assert log_in(server, "guess")[0] == 403
    assert log_in(server)[0] == 429  # even the right one, until the minute is out


def test_this_laptops_own_door_names_each_browser_by_its_session_not_its_label(tmp_path):
    with hall_page(Feed(tmp_path)) as server:
        headers, body = own(server, **{"X-Tileclock-Session": "director1"})
        assert page_request(server, "POST", "/api/round/over", headers, body)[0] == 200
        assert [e["by"] for e in read(server.feed.store.outdir)] == ["page"]  # never `page-director1`


def test_every_page_of_both_doors_forbids_framing_and_foreign_scripts(doors):
    server, token = doors
    for door, path in [
        (server, "/"),
        (server, "/board/c1"),
        (server, "/scores"),
        (server, "/login"),
        (server, "/api/boards"),
        (server.phones, f"/S/5/A/{token}"),
        (server.phones, "/board/c1"),  # a refusal too
    ]:
        connection = http.client.HTTPConnection("127.0.0.1", door.port, timeout=5)
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        connection.close()
        csp = answer.getheader("content-security-policy") or ""
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, path
        assert answer.getheader("x-frame-options") == "DENY", path


@pytest.fixture
def decoy(doors):
    """A decoy page on another site (its own server, another loopback address) framing both
    doors' pages: a player's page that puts the director's buttons under a click."""
    server, token = doors
    frames = f'<iframe src="{server.address}"></iframe><iframe src="{server.phones.address}S/5/A/{token}"></iframe>'

    class Decoy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802  (http.server's name)
            body = f"<!doctype html><title>win a prize</title>{frames}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.3", 0), Decoy)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    yield f"http://127.0.0.3:{site.server_address[1]}/"
    site.shutdown()
    site.server_close()


def test_a_decoy_page_cannot_frame_the_directors_page(doors, decoy, browser):  # noqa: F811  # the fixture
    """Before: no page forbade framing; one click on a decoy page locked a round."""
    server, _ = doors
    context = browser.new_context()
    page = context.new_page()
    page.goto(decoy)
    page.wait_for_load_state("load")

    def shown():  # a frame showing the director's buttons or the form's fields
        frames = [frame for frame in page.frames if frame != page.main_frame]
        return [f.url for f in frames if f.query_selector("#end-round") or f.query_selector("#score_a")]

    deadline = time.monotonic() + 3  # framed, both pages load well within this (they did before)
    while time.monotonic() < deadline:
        assert shown() == []
        page.wait_for_timeout(100)
    assert len(page.frames) == 3  # the two frames are there, refused: Chromium's own error page
    context.close()


# --- one address cannot starve the page


def answered_within(door, path, addr, limit_s=1.0):
    """GET `path` at `door` from `addr`: its status, asked within `limit_s` (else an error)."""
    connection = http.client.HTTPConnection("127.0.0.1", door.port, timeout=limit_s, source_address=(addr, 0))
    started = time.monotonic()
    connection.request("GET", path, headers={"Host": f"127.0.0.1:{door.port}"})
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert time.monotonic() - started < limit_s
    return answer.status


def starve(server, token, count):
    """Slow connections from one address at each door, then the director and two other phones."""
    held = slow_clients(server.phones.port, count) + slow_clients(server.port, count)
    try:
        time.sleep(0.2)  # every connection made and counted
        for _ in range(3):
            assert answered_within(server, "/api/boards", "127.0.0.1") == 200  # the director
            assert answered_within(server.phones, f"/api/score/5/A/{token}", "127.0.0.3") == 200
            assert answered_within(server.phones, f"/S/5/A/{token}", "127.0.0.4") == 200
    finally:
        for client in held:
            client.close()


def test_one_addresss_slow_connections_leave_the_director_and_the_phones_answering(doors):
    """Before: 210 slow connections from one address made the director's page answer 503 (the
    cap was one for every address together, the director's open tab included)."""
    starve(*doors, 210)  # past the old cap of 200 for every client together


@pytest.mark.slow
def test_300_slow_connections_from_one_address_starve_nobody(doors):
    starve(*doors, 300)


def test_one_address_asking_too_fast_is_rationed_and_the_others_are_not(doors):
    server, token = doors
    statuses = [answered_within(server.phones, "/favicon.svg", "127.0.0.2") for _ in range(60)]
    assert statuses.count(429) > 0 and statuses[0] == 200
    assert answered_within(server.phones, f"/S/5/A/{token}", "127.0.0.3") == 200


def test_hall_setup_gives_the_page_a_password_kept_hashed(tmp_path, capsys):
    from tileclock.cli import main
    from tileclock.director.hall.page_password import password_matches

    assert main(["hall-setup", str(tmp_path / "hall"), "--clock", "c1"]) == 0
    said = capsys.readouterr().out
    password = re.search(r"its password is (\S+) \(kept hashed", said).group(1)
    stored = tmp_path / "hall" / "tileclock-page.passwd"
    assert stored.stat().st_mode & 0o777 == 0o600 and password not in stored.read_text()
    assert password_matches(stored.read_text(), password) and not password_matches(stored.read_text(), "x")


def test_a_page_password_file_that_is_not_one_is_said_in_one_line(tmp_path, capsys):
    from tileclock.cli import main

    wrong = tmp_path / "page.passwd"
    wrong.write_text("hunter2\n")  # the password itself, not its hash
    code = main(["hall", "--broker", "127.0.0.1", "--page-password-file", str(wrong)])
    err = capsys.readouterr().err
    assert code == 2 and "--page-password-file" in err and "not a page password file" in err
    assert "Traceback" not in err and "hunter2" not in err


def test_the_director_logs_in_in_chromium_and_the_cookie_is_the_servers(login_page, browser):  # noqa: F811  # the fixture
    """The login as a browser makes it: sent to /login, the password, then the page; the session's
    cookie is HttpOnly (no script of any page reads it) and SameSite=Strict."""
    server = login_page
    context = browser.new_context()
    page = context.new_page()
    page.goto(server.address)
    assert page.url.endswith("/login")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(server.address)
    page.locator("#end-round").wait_for()
    (cookie,) = context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]  # plain HTTP
    assert page.evaluate("document.cookie") == ""
    assert re.fullmatch(r"page-[0-9a-f]{8}", server.sessions.label(cookie["value"]))
    page.goto(server.address + "scores")
    page.click("#logout")
    page.wait_for_url(server.address + "login")
    assert server.sessions.label(cookie["value"]) is None
    context.close()


def test_password_tries_are_counted_before_their_check_so_a_burst_gets_no_more():
    """Before: the try was counted after the (slow) PBKDF2 check, so a burst of tries at once all
    passed may_try before any was counted. Now the sixth try this minute, however close behind
    the first five, is refused; a right password hands its try back; a flood of addresses keeps
    every count still running."""
    sessions = Sessions(login=True)
    assert [sessions.attempt("10.0.0.9", now=60) for _ in range(6)] == [True] * 5 + [False]
    assert sessions.attempt("10.0.0.9", now=120)  # a new minute
    sessions.succeeded("10.0.0.9")
    assert [sessions.attempt("10.0.0.9", now=120) for _ in range(5)] == [True] * 5
    for n in range(MAX_ADDRESSES):  # this minute's tries from as many addresses as are kept
        sessions.attempt(f"a{n}", now=180)
    assert not sessions.attempt("a-new-one", now=180)  # bounded: this minute's counts stay
    assert [sessions.attempt("a0", now=180) for _ in range(5)] == [True] * 4 + [False]


def test_the_directors_door_beyond_this_laptop_caps_its_connections_in_all(tmp_path):
    with hall_page(
        Feed(tmp_path), login=True, password_hash=hash_password(PASSWORD, rounds=QUICK_ROUNDS)
    ) as server:
        assert server.door.server.config.limit_concurrency == MAX_DIRECTOR_CONNECTIONS
    with hall_page(Feed(tmp_path)) as server:  # on this laptop: no stranger, no cap in all
        assert server.door.server.config.limit_concurrency is None


GOOD_HASH = hash_password("correct horse", salt=bytes(16), rounds=QUICK_ROUNDS)
_, _ROUNDS, _SALT, _DIGEST = GOOD_HASH.split("$")
HOSTILE_PASSWORD_FILES = {
    # wrong types
    "rounds a word": f"pbkdf2_sha256$many${_SALT}${_DIGEST}",
    "rounds in superscript": f"pbkdf2_sha256$²${_SALT}${_DIGEST}",  # str.isdigit took it
    "upper-case hex": GOOD_HASH.upper().replace("PBKDF2_SHA256", "pbkdf2_sha256"),
    "another hash": f"bcrypt${_ROUNDS}${_SALT}${_DIGEST}",
    "JSON": json.dumps({"hash": GOOD_HASH}),
    # huge: a billion rounds held every login for hours; a salt or a file of megabytes
    "a billion rounds": f"pbkdf2_sha256$1000000000${_SALT}${_DIGEST}",
    "rounds of 60 digits": f"pbkdf2_sha256${'9' * 60}${_SALT}${_DIGEST}",
    "a huge salt": f"pbkdf2_sha256${_ROUNDS}${'a' * 3000}${_DIGEST}",
    "a huge file": GOOD_HASH + "\n" + "#" * 1_000_000,
    # nested: a hash inside a hash's fields
    "a hash in the salt": f"pbkdf2_sha256${_ROUNDS}${GOOD_HASH}${_DIGEST}",
    "dollars": "$" * 2000,
}


@pytest.mark.parametrize("text", HOSTILE_PASSWORD_FILES.values(), ids=HOSTILE_PASSWORD_FILES.keys())
def test_a_hostile_page_password_file_is_refused_at_the_start_never_taken(tmp_path, text):
    from tileclock.cli.errors import UsageError
    from tileclock.cli.hall_checks import page_password
    from tileclock.director.hall.page_password import password_matches

    path = tmp_path / "page.passwd"
    path.write_text(text, encoding="utf-8")
    # (a billion rounds hashed would hold this test for hours: its time limit is the check)
    with pytest.raises(UsageError, match="not a page password file"):
        page_password(str(path))
    assert not password_matches(text, "correct horse")  # nor tried at a login
    path.write_text(GOOD_HASH + "\n", encoding="utf-8")  # hall-setup's own is taken
    assert page_password(str(path)) == GOOD_HASH and password_matches(GOOD_HASH, "correct horse")
