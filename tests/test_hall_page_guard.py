"""The director's page answers only its own: a Host it was not configured for (DNS rebinding) is
refused before any route runs, a command needs this page's own Origin and header, a malformed
request gets a plain refusal, and idle or too many clients cannot hold the page."""

import http.client
import re
import socket
import time

import pytest

from support.feeds import Feed
from support.hall_helpers import page_request as request
from tileclock.director.pages import guard, live
from tileclock.director.pages.app import ONCE_HEADER
from tileclock.director.pages.web import COMMAND_HEADER, MAX_CONNECTIONS, HallPage


@pytest.fixture
def page(tmp_path):
    feed = Feed(tmp_path)
    server = HallPage(feed, port=0).start()
    yield server, feed
    server.close()


def own(server, **more):
    """The headers of the page's own script, as the browser sends them (a one-time value too)."""
    host = f"127.0.0.1:{server.port}"
    once = {ONCE_HEADER: server.onces.issue("page")}  # this laptop's door: no session cookie
    return {
        "Host": host,
        "Origin": f"http://{host}",
        COMMAND_HEADER: "1",
        "Content-Length": "0",
        **once,
        **more,
    }


def test_the_pages_own_script_ends_the_round(page):
    server, feed = page
    status, _ = request(server, "POST", "/api/round/over", own(server))
    assert status == 200 and len(feed.sent) == 1  # no session named: the page's
    assert re.fullmatch(r"round over by=page_[0-9a-z]{6}_1", feed.sent[0])


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", socket.gethostname()])
def test_the_laptops_own_names_reach_the_page(page, name):
    server, _ = page
    status, text = request(server, "GET", "/api/boards", {"Host": f"{name}:{server.port}"})
    assert status == 200 and '"boards": []' in text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", ""])
def test_a_page_on_another_site_resolving_to_the_laptop_is_refused(page, host):
    """DNS rebinding: the attacker's page, its name now resolving to the laptop, sends its own
    name as Host, and its own origin (which then equals http://Host)."""
    server, feed = page
    headers = {"Host": host, "Origin": f"http://{host}", COMMAND_HEADER: "1", "Content-Length": "0"}
    status, text = request(server, "POST", "/api/round/over", headers)
    assert status == 400 and "Invalid host header" in text and feed.sent == []
    assert request(server, "GET", "/api/boards", {"Host": host})[0] == 400


def test_the_director_names_the_hosts_the_page_answers_to():
    feed = Feed()
    server = HallPage(feed, port=0, allowed_hosts=["director.hall"]).start()
    try:
        assert request(server, "GET", "/api/boards", {"Host": f"director.hall:{server.port}"})[0] == 200
        assert request(server, "GET", "/api/boards", {"Host": f"127.0.0.1:{server.port}"})[0] == 400
    finally:
        server.close()


@pytest.mark.parametrize(
    "change",
    [
        {COMMAND_HEADER: None},  # a plain form from anywhere: no command header
        {"Origin": "http://evil.example"},  # a script on another site
        {"Origin": None},  # no Origin: no command (a browser always sends one with a POST)
        {"Origin": "null"},  # a sandboxed frame or a file
    ],
)
def test_another_site_cannot_end_the_round(page, change):
    server, feed = page
    headers = {k: v for k, v in {**own(server), **change}.items() if v is not None}
    status, text = request(server, "POST", "/api/round/over", headers)
    assert status == 403 and "own page" in text and feed.sent == []


@pytest.mark.parametrize("length", ["abc", "-5", "999999"])
def test_a_bad_length_is_refused_and_the_page_goes_on(page, length):
    server, feed = page
    status, text = request(server, "POST", "/api/round/start", own(server, **{"Content-Length": length}))
    # h11 refuses a malformed length itself ("Invalid HTTP request"); the page, one over 1024
    assert status == 400 and ("Content-Length" in text or "Invalid HTTP" in text) and feed.sent == []
    assert request(server, "POST", "/api/round/over", own(server))[0] == 200


def cut_off_after(server):
    """Seconds the page takes to close a client that never finishes its request (at most 10: the
    client's own limit, past which the test fails)."""
    idle = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    idle.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
    started = time.monotonic()
    assert idle.recv(100) == b""  # the server closed it
    taken = time.monotonic() - started
    idle.close()
    return taken


def test_a_client_that_never_finishes_its_request_is_cut_off(page, monkeypatch):
    server, _ = page
    monkeypatch.setattr(guard, "REQUEST_S", 0.5)
    cut_off_after(server)


@pytest.mark.slow  # a wall-clock bound: a loaded machine (or the other xdist worker) may miss it
def test_a_client_that_never_finishes_its_request_is_cut_off_within_the_limit(page, monkeypatch):
    server, _ = page
    monkeypatch.setattr(guard, "REQUEST_S", 0.5)
    assert cut_off_after(server) < guard.REQUEST_S + 2


def test_clients_past_the_cap_are_told_to_come_back_and_the_page_goes_on(page):
    server, _ = page
    held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(MAX_CONNECTIONS)]
    try:
        status, text = request(server, "GET", "/api/boards", {"Host": "127.0.0.1"})
        assert status == 503
    finally:
        for connection in held:
            connection.close()
    deadline = time.monotonic() + 5
    while request(server, "GET", "/api/boards", {"Host": "127.0.0.1"})[0] != 200:
        assert time.monotonic() < deadline, "the page never came back"


def test_viewers_past_the_cap_are_told_to_come_back(page, monkeypatch):
    server, _ = page
    monkeypatch.setattr(live, "MAX_VIEWERS", 2)
    streams = []
    for _ in range(2):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("GET", "/events")
        response = connection.getresponse()
        # each event: its id (the snapshot's age in ms, live.py), then its data
        assert response.status == 200 and response.readline().startswith(b"id: ")
        assert response.readline().startswith(b"data: ")
        streams.append(connection)
    status, text = request(server, "GET", "/events", {"Host": "127.0.0.1"})
    assert status == 503 and "too many viewers" in text
    for connection in streams:
        connection.close()


def test_the_director_clears_a_clocks_retained_state_from_the_page_and_nobody_else_can(page):
    server, feed = page
    assert (
        request(server, "POST", "/api/board/c1/clear", {**own(server), "Origin": "http://evil.example"})[0]
        == 403
    )
    status, text = request(server, "POST", "/api/board/c1/clear", own(server))
    assert status == 200 and feed.sent == ["clear c1"]
