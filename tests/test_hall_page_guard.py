"""The director's page takes commands only from its own script: no other site open in the same
browser can end a round, and a malformed request gets a plain refusal, not a dead handler."""

import http.client

import pytest

from tileclock.director.web import COMMAND_HEADER, HallPage


class Feed:
    """Stands in for the hall's feed: it only notes the commands it is asked to send."""

    def __init__(self):
        self.sent = []

    def command(self, line):
        self.sent.append(line)


@pytest.fixture
def page():
    feed = Feed()
    server = HallPage(feed, port=0).start()
    yield server, feed
    server.close()


def post(server, path, headers, body=b""):
    host, port = server.server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=5)
    connection.putrequest("POST", path)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    answer = connection.getresponse()
    status, text = answer.status, answer.read().decode()
    connection.close()
    return status, text


def test_the_pages_own_script_ends_the_round(page):
    server, feed = page
    status, _ = post(server, "/api/round/over", {COMMAND_HEADER: "1", "Content-Length": "0"})
    assert status == 200 and feed.sent == ["round over"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Length": "0"},  # a plain form from anywhere: no command header
        {COMMAND_HEADER: "1", "Origin": "http://evil.example", "Content-Length": "0"},
    ],
)
def test_another_site_cannot_end_the_round(page, headers):
    server, feed = page
    status, text = post(server, "/api/round/over", headers)
    assert status == 403 and "own page" in text and feed.sent == []


@pytest.mark.parametrize("length", ["abc", "-5", "999999"])
def test_a_bad_length_is_refused_and_the_page_goes_on(page, length):
    server, feed = page
    status, text = post(server, "/api/round/start", {COMMAND_HEADER: "1", "Content-Length": length})
    assert status == 400 and "Content-Length" in text and feed.sent == []
    assert post(server, "/api/round/over", {COMMAND_HEADER: "1", "Content-Length": "0"})[0] == 200
