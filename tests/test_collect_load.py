"""The collector under load: a catch-up over a slow line without a resend storm, a hall of clocks
at once with nothing lost, and a live table that fits the terminal and never holds up the reading."""

import csv
import os
import threading
import time

from support.cable import Plug
from support.collecting import journal_of
from tileclock.bench.director import fleet, resend_catch_up
from tileclock.director.follow.collect import collect
from tileclock.director.follow.table import Row, Snapshot, screen_lines


def test_a_fresh_collector_catches_up_a_long_journal_over_a_paced_line_asking_once():
    figures = resend_catch_up(records=500, rate=115_200)
    assert figures["every_record_once_in_order"], figures
    assert figures["records"] >= 500 and figures["collected"] == figures["records"]
    assert figures["overhead_pct"] <= 10, figures  # the records, and little else, on the wire


def test_200_clocks_each_sending_a_whole_game_at_once_lose_nothing():
    figures = fleet(200, idle_s=0.2)
    assert figures["nothing_lost_or_twice"], figures
    assert figures["records_collected"] == figures["records_sent"] == 200 * (figures["records_sent"] // 200)
    assert figures["results_rows"] == 200


def rows(count):
    return tuple(
        Row(
            str(n),
            f"clock{n:04d}",
            ("running", "paused", "ended")[n % 3],
            "*A   24:10    0    B   25:00    0",
            n,
            f"/dev/ttyUSB{n}",
        )
        for n in range(count)
    )


def test_the_table_fits_the_terminal_with_what_needs_attention_first_and_in_full():
    reason = "[Errno 2] could not open port /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0: No such file"
    snapshot = Snapshot(
        rows=rows(200)
        + (Row("77", "c0ffee000077", "paused", "", 5, "/dev/ttyUSB77", ("fault: panel A: gone",)),),
        ports_down=(("/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0", reason),),
        notices=("board 3: claimed by clocks a, b",),
        totals={"ports": 202, "records": 12345},
    )
    lines = screen_lines(snapshot, columns=80, height=30)
    assert len(lines) <= 30 and all(len(line) <= 80 for line in lines)
    text = " ".join(line.strip() for line in lines)
    assert reason.split(":")[-1].strip() in text and "usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0" in text
    assert "fault: panel A: gone" in text and "claimed by clocks a, b" in text
    assert lines[1].split()[0] == "playing" and "67:" in lines[1]  # a summary line per state
    assert lines[-1].startswith("... and") and "more boards" in lines[-1]
    assert lines.index("needs attention:") < next(
        n for n, line in enumerate(lines) if line.lstrip().startswith("0 ")
    )


class StuckTerminal:
    """A terminal that takes nothing until released (a slow ssh session, a paused scroll)."""

    def __init__(self):
        self.released = threading.Event()
        self.writes = 0

    def isatty(self):
        return True

    def write(self, text):
        self.writes += 1
        self.released.wait()

    def flush(self):
        pass


def test_a_terminal_that_takes_nothing_never_holds_up_the_reading(tmp_path):
    plug = Plug(str(tmp_path), "ttyUSB0")
    out = tmp_path / "out"
    first = journal_of(board="5")
    second = journal_of(board="5", script="0 press B\n5 press STOP\n8 hold STOP 2.5\n11 press STOP\n")
    terminal = StuckTerminal()
    thread = threading.Thread(
        target=collect, args=([plug.path], str(out)), kwargs={"stop_after_idle_s": 1.0, "out": terminal}
    )
    thread.start()
    assert plug.read_lines(1) == ["status"]  # the port is open (opening it drops what came before)
    plug.write("".join(line + "\n" for line in first))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not os.path.exists(out / "results.csv"):
        time.sleep(0.05)
    time.sleep(0.6)  # the table's thread has tried to draw meanwhile, and is stuck
    plug.write("".join(line + "\n" for line in second))  # another clock on the same port, a power-on later
    while time.monotonic() < deadline and len(list(csv.DictReader(open(out / "results.csv")))) < 2:
        time.sleep(0.05)
    assert terminal.writes >= 1 and not terminal.released.is_set()
    assert len(list(csv.DictReader(open(out / "results.csv")))) == 2  # read and filed all the same
    terminal.released.set()
    thread.join(timeout=20)
    assert not thread.is_alive()
    plug.pull()
