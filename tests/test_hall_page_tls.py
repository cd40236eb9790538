"""The hall page's two doors over HTTPS (issue 37: nothing travels in the clear; docs/hall.md,
"The page over HTTPS"): on the hall's Wi-Fi a player read the phones' tokens in `/S/...` links
and their scores, and, where the director's door is served beyond loopback, the login's password
and the session cookie (whoever holds it is the director). Here both doors answer TLS only, with a
certificate of the hall's CA; an eavesdropper between a phone, the director and the page reads
none of it; the session cookie is Secure; a door in plain HTTP is the director's choice, said."""

import http.client
import re
import socket
import ssl
import time
import types
import urllib.request

import pytest

from conftest import BROKER_USERS
from support.feeds import Feed
from support.hall_helpers import (
    QUICK_ROUNDS,
    form_headers,
    game_ended,
    hall_page,
    page_json,
    page_request,
    wait_for,
)
from support.phones import PHONE
from support.relay import Relay
from tileclock.cli.errors import UsageError
from tileclock.cli.hall import page_tls_said
from tileclock.cli.hall_checks import page_tls
from tileclock.director.event.entries import ScoreBook
from tileclock.director.hall.page_password import hash_password
from tileclock.director.hall.tls import CA_CERT, PAGE_CERT, PAGE_KEY, fingerprint, local_tls
from tileclock.director.pages.web import COMMAND_HEADER

PASSWORD = "correct horse"
HASH = hash_password(PASSWORD, rounds=QUICK_ROUNDS)


@pytest.fixture
def tls_doors(tmp_path):
    """Both doors over HTTPS with the hall's page certificate; table 5 of round 3 ended, side A
    given a link; the director's door asks for a login, as it does beyond this laptop."""
    made = local_tls(tmp_path / "tls")
    book = ScoreBook(str(tmp_path / "scores"))
    token = book.issue(3, "5", "A")
    feed = Feed(tmp_path)
    game_ended(feed.store.outdir, 3, "5")
    tls = (made[PAGE_CERT], made[PAGE_KEY])
    with hall_page(
        feed, scores=book, phones=("127.0.0.1", 0), tls=tls, login=True, password_hash=HASH
    ) as server:
        yield server, token, made


def handshake(port, context):
    """The certificate (DER) the server on 127.0.0.1:`port` shows a client checking with `context`."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return tls.getpeercert(binary_form=True)


def log_in(door, password=PASSWORD):
    """POST the login form to `door` as the login page does: the answer's Set-Cookie header."""
    headers, body = form_headers(door, f"password={password}")
    headers.pop(COMMAND_HEADER)
    from support.hall_helpers import connect

    connection = connect(door)
    connection.request("POST", "/login", body=body, headers=headers)
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 303
    return answer.getheader("set-cookie") or ""


def test_both_doors_answer_tls_with_the_halls_certificate_and_a_phone_enters_its_score(tls_doors):
    server, token, made = tls_doors
    assert server.address.startswith("https://") and server.phone_address.startswith("https://")
    checking = ssl.create_default_context(cafile=str(made[CA_CERT]))
    page_cert = ssl.PEM_cert_to_DER_cert(made[PAGE_CERT].read_text())
    for door in (server.door, server.phones):
        assert handshake(door.port, checking) == page_cert
        with pytest.raises(ssl.SSLCertVerificationError):  # the system's CAs do not know the hall's
            handshake(door.port, ssl.create_default_context())
    phones = server.phones
    assert page_request(phones, "GET", f"/S/5/A/{token}", form_headers(phones)[0])[0] == 200
    status, text = page_request(
        phones, "POST", f"/api/score/5/A/{token}", *form_headers(phones, "score_a=402&score_b=380")
    )
    assert status == 200, text
    (table,) = server.scores.state(3)["tables"]
    assert table["table"] == "5" and table["status"] != "none"


def test_plain_http_to_a_tls_door_is_answered_with_nothing_of_the_page(tls_doors):
    server, token, _ = tls_doors
    for door, path in ((server.phones, f"/S/5/A/{token}"), (server.door, "/login")):
        with socket.create_connection(("127.0.0.1", door.port), timeout=5) as plain:
            plain.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{door.port}\r\n\r\n".encode())
            answer = b""
            try:
                while chunk := plain.recv(4096):
                    answer += chunk
            except ConnectionResetError:
                pass
        assert b"HTTP/1" not in answer and b"tileclock" not in answer.lower(), answer
        assert token.encode() not in answer


def test_an_eavesdropper_reads_no_token_score_password_or_cookie(tls_doors):
    """Every byte between a phone, the director's browser and the page, kept by a relay as one on
    the hall's Wi-Fi would: none of what a player wants from them is in it."""
    server, token, _ = tls_doors
    relays = {name: Relay(door.port) for name, door in (("phones", server.phones), ("director", server.door))}
    try:
        # each door as the browser reaches it through the relay (its Host and Origin the relay's)
        phone = types.SimpleNamespace(port=relays["phones"].port, tls=server.phones.tls)
        director = types.SimpleNamespace(
            port=relays["director"].port, tls=server.door.tls, server=server.door.server
        )
        assert page_request(phone, "GET", f"/S/5/A/{token}", form_headers(phone)[0])[0] == 200
        form = "score_a=402&score_b=380"
        assert page_request(phone, "POST", f"/api/score/5/A/{token}", *form_headers(phone, form))[0] == 200
        cookie = re.match(r"tileclock-director=([^;]+);", log_in(director)).group(1)
        headers, body = form_headers(director, "round=3", Cookie=f"tileclock-director={cookie}")
        assert page_request(director, "POST", "/api/round/lock", headers, body)[0] == 200
        seen = b"".join(relay.bytes() for relay in relays.values())
    finally:
        for relay in relays.values():
            relay.close()
    assert len(seen) > 4000  # both doors' handshakes and answers went through it
    looked_for = {
        "the token": token.encode(),
        "the score": b"402",
        "the password": PASSWORD.encode(),
        "the cookie": cookie.encode(),
        "the path": b"/S/5/",
        "HTTP": b"HTTP/1.1",
    }
    assert [what for what, value in looked_for.items() if value in seen] == []


def test_the_session_cookie_is_secure_over_https_and_only_there(tls_doors, tmp_path):
    server, _, _ = tls_doors
    cookie = log_in(server)
    for word in ("HttpOnly", "SameSite=Strict", "Secure"):
        assert word in cookie.split("; "), cookie
    with hall_page(Feed(tmp_path / "plain"), login=True, password_hash=HASH) as plain:
        assert "Secure" not in log_in(plain).split("; ")  # a browser would never send it back over http


def test_the_links_the_hall_makes_are_https(tls_doors):
    server, _, _ = tls_doors
    cookie = re.match(r"tileclock-director=([^;]+);", log_in(server)).group(1)
    headers, body = form_headers(server, "round=3", Cookie=f"tileclock-director={cookie}")
    status, text = page_request(server, "POST", "/api/scores/5/link", headers, body)
    assert status == 200, text
    assert re.search(rf'"A": "HTTPS://127\.0\.0\.1:{server.phones.port}/S/5/A/[0-9A-Z]+"', text), text


def test_plain_http_only_where_the_director_asks_for_it_and_said(tmp_path):
    made = local_tls(tmp_path / "setup")
    ca, keys = str(made[CA_CERT]), str(tmp_path / "setup" / "tileclock.keys")
    found = (str(made[PAGE_CERT]), str(made[PAGE_KEY]))
    assert page_tls(None, ca, None) == (found, ())  # hall-setup's folder: HTTPS, unasked
    assert page_tls(None, None, keys, "players") == (found, ("players",))
    assert page_tls(None, None, None, "both") == (None, ("director", "players"))
    with pytest.raises(UsageError, match="give --page-tls DIR .*or --plain-http both"):
        page_tls(None, None, None)  # no certificate: no page in the clear unless asked
    with pytest.raises(UsageError, match=f"--page-tls {tmp_path}: no tileclock-page.pem"):
        page_tls(str(tmp_path), None, None, "players")

    # the players' door in the clear on the hall's network, the director's over HTTPS
    book = ScoreBook(str(tmp_path / "scores"))
    with hall_page(
        Feed(tmp_path), scores=book, phones=("0.0.0.0", 0), tls=found, plain=("players",)
    ) as server:
        assert server.address.startswith("https://") and server.phone_address.startswith("http://")
        phones = types.SimpleNamespace(port=server.phones.port, tls=None)
        assert page_request(phones, "GET", "/score.js", form_headers(phones)[0])[0] == 200
        said = page_json(server, "/api/boards")["in_the_clear"]
        assert "NOT ENCRYPTED: the players' door is plain HTTP" in said
        lines = page_tls_said(found, ("players",), server)
    assert lines[0].endswith(f"the hall's CA, SHA-256 {fingerprint(ca)}")
    assert lines[1] == (
        f"NOT ENCRYPTED (--plain-http): the players' door is plain HTTP at {server.phone_address}, on the Wi-Fi"
    )
    # both doors over HTTPS: the page's header says nothing of it
    with hall_page(Feed(tmp_path / "all"), scores=book, phones=("0.0.0.0", 0), tls=found) as server:
        assert page_json(server, "/api/boards").get("in_the_clear") is None


def test_a_phone_enters_its_score_over_https_in_chromium(tls_doors, browser):
    """A phone's browser that was told to go on past the unknown CA's warning (what a player taps
    through, docs/hall.md), then the director's page, logged in over HTTPS, shows its entry."""
    server, token, _ = tls_doors
    context = browser.new_context(ignore_https_errors=True, **PHONE)
    page = context.new_page()
    page.goto(f"{server.phone_address}S/5/A/{token}".replace("/s/", "/S/"))
    page.locator("#title").filter(has_text="Table 5, round 3").wait_for()
    page.fill("#score_a", "402")
    page.fill("#score_b", "380")
    page.click("button[type=submit]")
    page.locator("#answer").filter(has_text="Entered").wait_for()
    context.close()
    context = browser.new_context(ignore_https_errors=True)
    page = context.new_page()
    page.goto(server.one_time_link())
    (cookie,) = [c for c in context.cookies() if c["name"] == "tileclock-director"]
    assert cookie["secure"] and cookie["httpOnly"]
    page.goto(f"{server.address}scores")
    page.fill("#round", "3")
    page.click("#show")
    page.locator("tr[data-table='5']").filter(has_text="phone A at ").wait_for()
    context.close()


def test_tileclock_hall_serves_https_and_says_the_door_it_was_asked_to_serve_in_the_clear(
    broker, tmp_path, monkeypatch, capsys
):
    """The command as a director runs it: the console names both doors' addresses (https, but the
    players' door the flag asked for), the CA's fingerprint and the door in the clear; the page
    answers over HTTPS meanwhile (asked from the hall's first step, which then stops it as a
    Ctrl-C does)."""
    from tileclock.cli import main
    from tileclock.director.hall.feed import HallFeed

    made = local_tls(tmp_path / "setup")
    monkeypatch.setenv("TILECLOCK_HALL_PASSWORD", BROKER_USERS["director"])
    seen = {}

    def first_step(feed, timeout_s=0.2):
        seen["said"] = text = capsys.readouterr().out
        page = re.search(r"the page is at (https://127\.0\.0\.1:\d+/)", text)
        context = ssl.create_default_context(cafile=str(made[CA_CERT]))
        with urllib.request.urlopen(page.group(1), context=context, timeout=5) as answer:
            seen["answer"] = answer.status, answer.headers["set-cookie"]
        raise KeyboardInterrupt

    monkeypatch.setattr(HallFeed, "step", first_step)
    argv = ["hall", "--broker", "127.0.0.1", "--port", str(broker.port), "--out", str(tmp_path / "records")]
    argv += ["--web", "127.0.0.1:0", "--phones", "127.0.0.1:0", "--page-tls", str(tmp_path / "setup")]
    assert main([*argv, "--plain-http", "players"]) == 0
    text = seen["said"]
    phones = re.search(r"the players' door \(the score form only\) is at (http://127\.0\.0\.1:\d+/)", text)
    assert phones, text
    assert f"the hall's CA, SHA-256 {fingerprint(made[CA_CERT])}" in text
    assert (
        f"NOT ENCRYPTED (--plain-http): the players' door is plain HTTP at {phones.group(1)}, on this laptop only"
    ) in text
    status, cookie = seen["answer"]
    assert status == 200 and "Secure" in cookie
    # links in http for a door that speaks HTTPS: no phone could open them, refused before the start
    assert main([*argv, "--phone-url", "http://192.168.4.2:8082"]) == 2
    assert "--phone-url http://192.168.4.2:8082: the players' door speaks HTTPS" in capsys.readouterr().err


def test_a_folder_from_before_the_pages_https_gets_its_certificate_from_its_own_ca(tmp_path, capsys):
    """hall-setup's folder of an earlier version has the CA every clock holds, and no page
    certificate: the hall says how to make one, `hall-setup --page-cert` makes it from that CA
    and changes nothing else, and the page serves it to a client checking that CA."""
    from tileclock.cli import main

    folder = tmp_path / "setup"
    made = local_tls(folder)
    for name in (PAGE_CERT, PAGE_KEY):
        made[name].unlink()
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    with pytest.raises(UsageError, match=f"tileclock hall-setup {folder} --page-cert makes it from that CA"):
        page_tls(None, str(made[CA_CERT]))
    assert main(["hall-setup", str(folder), "--page-cert", "--address", "192.168.4.1"]) == 0
    assert "nothing else changed" in capsys.readouterr().out
    assert {name: (folder / name).read_bytes() for name in before} == before
    assert oct(made[PAGE_KEY].stat().st_mode & 0o777) == "0o600"
    found, _ = page_tls(None, str(made[CA_CERT]))
    checking = ssl.create_default_context(cafile=str(made[CA_CERT]))
    with hall_page(Feed(tmp_path), tls=found) as server:
        assert handshake(server.port, checking) == ssl.PEM_cert_to_DER_cert(made[PAGE_CERT].read_text())


def test_connections_stalled_before_their_handshake_starve_neither_door(tls_doors):
    """One address's 210 connections at each TLS door that never say a word (a slowloris before
    TLS: uvicorn counts a connection only once its handshake is done) leave the director's login
    and another phone's form answering over HTTPS within a second of what they take without them
    (a handshake on a busy machine takes a good part of a second itself)."""
    server, token, made = tls_doors
    context = ssl.create_default_context(cafile=str(made[CA_CERT]))
    asked = ((server.door, "/login"), (server.phones, f"/S/5/A/{token}"))

    def took(door, path):
        connection = http.client.HTTPSConnection(
            "127.0.0.1", door.port, timeout=10, context=context, source_address=("127.0.0.3", 0)
        )
        started = time.monotonic()
        connection.request("GET", path, headers={"Host": f"127.0.0.1:{door.port}"})
        answer = connection.getresponse()
        answer.read()
        connection.close()
        assert answer.status == 200
        return time.monotonic() - started

    alone = {door.name: took(door, path) for door, path in asked}
    held = []
    for door in (server.phones, server.door):
        for _ in range(210):
            client = socket.socket()
            client.bind(("127.0.0.2", 0))
            client.connect(("127.0.0.1", door.port))
            held.append(client)
    try:
        for door, _ in asked:  # every one taken off the kernel's queue: held by the page, not the kernel
            wait_for(lambda door=door: accept_queue(door.port) == 0, what=f"{door.name}'s queue empty")
        for door, path in asked:
            assert took(door, path) < alone[door.name] + 1.0, door.name
    finally:
        for client in held:
            client.close()


def accept_queue(port):
    """How many connections wait in the kernel's accept queue of the socket listening on `port`
    (its rx_queue in /proc/net/tcp, state 0A: LISTEN)."""
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:
                return int(fields[4].split(":")[1], 16)
    raise AssertionError(f"nothing listens on {port}")
