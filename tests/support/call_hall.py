"""The hall for the board's calls: two clocks on a real broker, the director's feed stepping in its
thread, the page asked over HTTP as a browser tab asks it; and a call made at a board."""

import http.client
import json
from urllib.parse import urlencode

import pytest

from conftest import tap
from support.hall_helpers import Stepping, closed_after
from support.halls import Clocks, director, settle
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.director.pages.app import COMMAND_HEADER, ONCE_HEADER
from tileclock.director.pages.web import HallPage


class Hall:
    """Two clocks on the broker (`ids`: simulated in this process), the director's feed stepping in
    its thread, and the page."""

    def __init__(self, broker, tmp_path, ids=("c1", "c2")):
        self.broker, self.folder = broker, tmp_path / "records"
        #: the hall's time of day (ms), virtual: the simulated clocks' wall clocks start at SIM_EPOCH_NS
        self.now_ms = SIM_EPOCH_NS // 1_000_000
        self.clocks = Clocks(broker, tmp_path, ids=ids)
        self.clocks.play(2)
        self.start()

    def start(self):
        self.feed = director(self.broker, self.folder, wall=lambda: self.now_ms / 1000)
        settle(self.feed, self.clocks, "the first records")
        self.stepper = Stepping(self.feed)
        self.page = HallPage(self.feed, port=0).start()
        # a browser tab's session, as the page gives it its cookie: it names the tab's commands
        self.tabs = {}
        self.label = self.tab("first")

    def close(self):
        self.stepper.stop()
        self.page.close()
        self.feed.close()

    def tab(self, name):
        """The label of browser tab `name`'s session (opened as the page opens one at its first page)."""
        if name not in self.tabs:
            self.tabs[name] = self.page.sessions.open()
        return self.tabs[name][1]

    def post(self, path, form, tab="first"):
        """A command as the page's script sends it from tab `tab`: its header, its Origin, its
        session's cookie and a one-time value of that session's."""
        self.tab(tab)
        host = f"127.0.0.1:{self.page.port}"
        body = urlencode(form)
        headers = {"Host": host, "Origin": f"http://{host}", COMMAND_HEADER: "1"}
        headers["Cookie"] = f"tileclock-director={self.tabs[tab][0]}"
        headers[ONCE_HEADER] = self.page.onces.issue(self.tabs[tab][1])  # as the script asks for one
        headers.update(
            {"Content-Type": "application/x-www-form-urlencoded", "Content-Length": str(len(body))}
        )
        connection = http.client.HTTPConnection("127.0.0.1", self.page.port, timeout=10)
        connection.request("POST", path, body, headers)
        answer = connection.getresponse()
        return answer.status, answer.read().decode()

    def get(self, path):
        connection = http.client.HTTPConnection("127.0.0.1", self.page.port, timeout=10)
        connection.request("GET", path, headers={"Host": f"127.0.0.1:{self.page.port}"})
        return json.loads(connection.getresponse().read())

    def board(self, clock):
        return next((b for b in self.feed.snapshot()["boards"] if b["clock"] == clock), None)

    def clock_records(self, clock):
        self.clocks.pump()
        return self.clocks.sims[clock].journal.records()


@pytest.fixture
def hall(broker, tmp_path):
    yield from closed_after(Hall(broker, tmp_path))


def call_from(hall, clock):
    """The board's players stop the clock and call the director (tap STOP three times)."""
    clocks = hall.clocks
    tap(clocks.sims[clock], "STOP", clocks.t[clock] + 1)
    for t_s in (2, 2.5, 3):
        tap(clocks.sims[clock], "STOP", clocks.t[clock] + t_s)
    clocks.t[clock] += 8
    clocks.sims[clock].uplink.pump()
