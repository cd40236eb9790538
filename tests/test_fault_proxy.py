"""The fault proxy itself (bench/fault_proxy.py): each fault does what it says, on loopback, quickly."""

import socket
import threading
import time

import pytest

from tileclock.bench.fault_proxy import FaultProxy, retransmission_s


class Echo:
    """A loopback server standing in for the broker: it echoes, and keeps what it received."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.got = bytearray()
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    def _echo(self, conn):
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            self.got += data
            try:
                conn.sendall(data)
            except OSError:
                return

    def close(self):
        self.server.close()
        for conn in self.conns:
            conn.close()


@pytest.fixture
def relay():
    echo = Echo()
    proxy = FaultProxy(("127.0.0.1", echo.port)).start()
    yield proxy, echo
    proxy.close()
    echo.close()


def dial(proxy):
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
    return sock


def receive(sock, size, timeout_s=2.0):
    sock.settimeout(timeout_s)
    data = b""
    while len(data) < size:
        part = sock.recv(size - len(data))
        if not part:
            break
        data += part
    return data


def nothing_within(sock, wait_s=0.1):
    sock.settimeout(wait_s)
    try:
        return sock.recv(100) == b"never"
    except TimeoutError:
        return True


def until(predicate, timeout_s=2.0):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_it_relays_both_ways_and_counts_each_connection(relay):
    proxy, _ = relay
    sock = dial(proxy)
    sock.sendall(b"hello")
    assert receive(sock, 5) == b"hello"
    until(lambda: proxy.connections() == 1)
    assert len(proxy.accepts) == 1
    sock.close()


def test_a_delay_holds_each_chunk_and_keeps_the_order(relay):
    proxy, _ = relay
    proxy.set(up={"delay_s": 0.08, "jitter_s": 0.04})
    sock = dial(proxy)
    began = time.monotonic()
    for part in (b"a", b"b", b"c"):
        sock.sendall(part)
    assert receive(sock, 3) == b"abc"  # jitter never reorders one stream
    assert time.monotonic() - began >= 0.08


def test_a_one_way_hold_keeps_the_brokers_bytes_while_the_clocks_still_pass(relay):
    proxy, echo = relay
    sock = dial(proxy)
    proxy.set(down={"hold": True})
    sock.sendall(b"press")
    until(lambda: bytes(echo.got) == b"press")  # up still passes
    assert nothing_within(sock)  # the echo (the broker's ack) is held
    proxy.set(down={"hold": False})
    assert receive(sock, 5) == b"press"  # and comes when the fault ends


def test_a_drop_throws_the_bytes_away(relay):
    proxy, echo = relay
    sock = dial(proxy)
    proxy.set(up={"drop": True})
    sock.sendall(b"lost")
    assert nothing_within(sock)
    assert bytes(echo.got) == b""


def test_a_stall_pauses_then_bursts(relay):
    proxy, _ = relay
    sock = dial(proxy)
    proxy.set(up={"stall_every_s": 10.0, "stall_for_s": 0.1})
    proxy.started = time.monotonic()  # a stall begins now
    began = time.monotonic()
    sock.sendall(b"x" * 10)
    assert receive(sock, 10) == b"x" * 10
    assert time.monotonic() - began >= 0.09


class Draws:
    """A random source that answers the given draws, for TCP's back-off worked out by hand."""

    def __init__(self, *draws):
        self.draws = list(draws)

    def random(self):
        return self.draws.pop(0)


def test_a_lost_chunk_waits_for_tcps_retransmissions_each_twice_as_long():
    assert retransmission_s(Draws(0.9), 0.25, 0.3) == 0.0  # not lost
    assert retransmission_s(Draws(0.1, 0.9), 0.25, 0.3) == pytest.approx(0.3)
    assert retransmission_s(Draws(0.1, 0.2, 0.1, 0.5), 0.25, 0.3) == pytest.approx(0.3 + 0.6 + 1.2)
    assert retransmission_s(Draws(*[0.0] * 12, 0.9), 0.25, 60.0) == pytest.approx(60 + 120 * 11)
    with pytest.raises(ValueError, match="loss 1.0"):
        retransmission_s(Draws(), 1.0, 0.3)  # a link that loses everything is a cut, not a loss


def test_loss_delays_what_is_lost_and_keeps_the_order(relay):
    proxy, _ = relay
    proxy.set(up={"loss": 0.5, "rto_s": 0.05})
    sock = dial(proxy)
    began = time.monotonic()
    for n in range(20):
        sock.sendall(bytes([65 + n]))
        time.sleep(0.002)  # separate chunks, each its own chance of being lost
    assert receive(sock, 20, timeout_s=10) == bytes(range(65, 85))  # TCP's order, all of it
    assert time.monotonic() - began >= 0.05  # seed 0's draws lose some: a retransmission's wait


def test_a_bandwidth_limit_slows_a_burst(relay):
    proxy, _ = relay
    proxy.set(down={"rate_bps": 100_000})
    sock = dial(proxy)
    began = time.monotonic()
    for _ in range(4):
        sock.sendall(b"y" * 5000)
        time.sleep(0.002)  # separate chunks, each paying its time on the link
    assert len(receive(sock, 20000)) == 20000
    assert time.monotonic() - began >= 0.1


def test_a_cut_closes_every_connection_and_refuses_new_ones_until_restored(relay):
    proxy, _ = relay
    sock = dial(proxy)
    sock.sendall(b"1")
    assert receive(sock, 1) == b"1"
    proxy.cut()
    assert receive(sock, 1) == b""  # closed
    again = dial(proxy)  # the accept is counted, the connection refused
    assert receive(again, 1) == b""
    proxy.restore()
    back = dial(proxy)
    back.sendall(b"2")
    assert receive(back, 1) == b"2"
    assert len(proxy.accepts) == 3


def test_attempts_a_second_at_the_peak():
    proxy = FaultProxy(("127.0.0.1", 9))
    proxy.accepts = [0.0, 0.1, 0.2, 0.3, 2.0, 2.5, 5.0]
    assert proxy.attempts_peak() == 4
    assert proxy.attempts_peak(since=1.0) == 2
    with pytest.raises(ValueError, match="no fault setting 'corrupt'"):
        proxy.set(up={"corrupt": 0.1})
    with pytest.raises(ValueError, match="loss 1"):
        proxy.set(loss=1)  # refused at once, not in a relay's thread
    assert proxy.directions["up"].loss == proxy.directions["down"].loss == 0
    proxy.close()


def test_the_chaos_benchmarks_table_has_a_row_a_case_and_says_n_a_for_a_missing_figure():
    from tileclock.bench.chaos_report import table
    from tileclock.bench.hall_chaos import CASES

    figures = {
        "fault_s": 20,
        "records": 1200,
        "lost": 0,
        "duplicated": 0,
        "catch_up_p50_s": 7.8,
        "catch_up_p99_s": None,
        "catch_up_max_s": 11.8,
        "attempts_peak_per_s": 3.0,
        "hall_cpu_percent": 1.2,
        "hall_rss_mb": 37.0,
        "silent_marked_max_s": 21.0,
        "silent_cleared_max_s": None,
        "commands": 3,
        "applied": 1,
        "applied_twice": 0,
        "not_delivered": 1,
        "refused": 0,
        "unanswered": 1,
        "trail_wrong": 0,
    }
    lines = table({case: figures for case in CASES}).splitlines()
    assert [line.split()[0] for line in lines[1:]] == list(CASES)
    first = ["stalls", "20", "1,200", "0", "0", "7.8", "n/a", "11.8", "3", "1", "37"]
    assert lines[1].split() == [*first, "21.0", "n/a", "3", "1", "0", "1", "0", "1", "0", "n/a", "n/a"]
