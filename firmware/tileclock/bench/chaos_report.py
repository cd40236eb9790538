"""What each case of `tileclock hall-bench --chaos` measures (hall_chaos.py), and its table: each
board's catch-up after the fault, with records lost and duplicated; the hall's CPU and memory; the
page's silent-board marking, read as the page reads its snapshot; and the director's commands sent
from the page into the fault, with what the audit trail and the clocks' journals say became of them."""

import http.client
import json
import os
import threading
import time
from urllib.parse import urlencode

from ..director.hall import audit_read
from ..director.pages.app import COMMAND_HEADER, ONCE_HEADER
from ..director.records.history import read_records
from . import procstat
from .hall import count_on_disk, journaled

#: the longest a case's catch-up is waited for
CATCH_UP_LIMIT_S = 300


def hall_usage(pid):
    """(CPU seconds, peak RSS MB) of the hall's process now."""
    return procstat.cpu_seconds(pid) or 0.0, procstat.peak_rss_mb(pid) or 0.0


def catch_up(hall, since, progress, what):
    """Wait until every board's records journaled by now are on file at the hall; returns each
    board's catch-up time (s after `since`) and the lost/duplicated counts when all were in."""
    keys, _ = journaled(hall.clocks_dir)
    wanted = {}
    for clock, seq in keys:
        wanted.setdefault(clock, set()).add(seq)
    caught = {}
    deadline = time.monotonic() + CATCH_UP_LIMIT_S
    stored = {}
    while len(caught) < len(wanted) and time.monotonic() < deadline:
        stored = count_on_disk(hall.director.records)
        now = time.monotonic()
        for clock, seqs in wanted.items():
            if clock not in caught and all((clock, seq) in stored for seq in seqs):
                caught[clock] = now - since
        time.sleep(0.25)
    if len(caught) < len(wanted):
        progress.say(f"{what}: {len(wanted) - len(caught)} boards not caught up in {CATCH_UP_LIMIT_S} s")
    stored = count_on_disk(hall.director.records)
    lost = sum(1 for key in keys if key not in stored)
    duplicated = sum(1 for n in stored.values() if n > 1)
    return list(caught.values()), lost, duplicated, len(keys)


def _page(hall, method, path, form=None):
    """The hall's page asked as its own script asks it (JSON back); None if it did not answer (the
    laptop asleep) or refused."""
    host = f"127.0.0.1:{hall.director.web_port}"
    body = urlencode(form) if form else None
    headers = {"Host": host, "Origin": f"http://{host}", COMMAND_HEADER: "1"}
    if body:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if method == "POST":  # an action: with a one-time value asked for first, as the script does
        once = _ask(hall.director.web_port, "POST", "/api/once", None, headers)
        if once is None:
            return None
        headers[ONCE_HEADER] = once["once"]
    return _ask(hall.director.web_port, method, path, body, headers)


def _ask(port, method, path, body, headers):
    """One request to the page on `port`: its JSON, or None (no answer, or refused)."""
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request(method, path, body, headers)
        answer = connection.getresponse()
        text = answer.read()
        connection.close()
    except (OSError, http.client.HTTPException):
        return None
    return json.loads(text) if answer.status == 200 else None


class SilentWatch:
    """The page's snapshot (`/api/boards`, as the page reads it) every `every_s` in a thread of its
    own: when each board was first shown silent (offline) and online again."""

    def __init__(self, hall, every_s=0.25):
        self.hall, self.every_s = hall, every_s
        self.shown = {}  # clock -> whether online, as last seen
        self.changes = []  # (monotonic time, clock, online)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="silent-watch", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.every_s):
            answer = _page(self.hall, "GET", "/api/boards")
            if not answer:
                continue
            now = time.monotonic()
            for board in answer.get("boards", []):
                clock, online = board["clock"], board.get("online", True)
                if self.shown.get(clock, True) != online:
                    self.changes.append((now, clock, online))
                self.shown[clock] = online

    def delays(self, clocks, since, online):
        """For each of `clocks`, s from `since` until the page first showed it `online` (or not),
        None for a board never shown so."""
        first = {}
        for at, clock, shown in self.changes:
            if at >= since and shown == online and clock in clocks:
                first.setdefault(clock, at - since)
        return [first.get(clock) for clock in clocks]

    def close(self):
        self._stop.set()
        self._thread.join()


def command(hall, clock, side="A", delta_s=-60):
    """A director's adjust to `clock`, sent from the page as its script sends it; its action id
    on the audit trail (None: the page did not take it)."""
    form = {"action": "adjust", "side": side, "delta_s": delta_s}
    answer = _page(hall, "POST", f"/api/board/{clock}/command", form)
    return answer and answer.get("id")


def commands_figures(hall, sent):
    """What became of the actions `sent` ({id: clock}), from the audit trail and the clocks'
    journals: applied (once), twice (applied more than once: never), not delivered, refused, no
    answer yet; and whether every one was applied at most once."""
    trail = {e["id"]: e for e in audit_read.read(hall.director.records) if e.get("id") in sent}
    counts = dict.fromkeys(("applied", "not_delivered", "refused", "unanswered"), 0)
    twice = wrong = 0
    for action, clock in sent.items():
        taken = [r for r in read_records(os.path.join(hall.clocks_dir, clock)) if r.get("by") == action]
        taken = [r for r in taken if r["ev"] != "error"]
        outcome = (trail.get(action, {}).get("outcomes", {}).get(clock) or {}).get("outcome", "unanswered")
        counts[outcome] += 1
        twice += len(taken) > 1
        # the trail true to the clock: applied is one record taken, anything else none
        wrong += (outcome == "applied") != (len(taken) == 1)
    return {"commands": len(sent), **counts, "applied_twice": twice, "trail_wrong": wrong}


def wait_for_answers(hall, sent, timeout_s=20):
    """Wait (up to `timeout_s`) until the last action `sent` has its answer on the audit trail."""
    if not sent:
        return
    last = list(sent)[-1]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        entry = next((e for e in audit_read.read(hall.director.records) if e.get("id") == last), None)
        if entry and entry["outcomes"]:
            return
        time.sleep(0.25)


def table(results):
    """The figures of each case (`run`'s results), one row a case; n/a for a figure not measured."""
    columns = [
        ("case", "{}"),
        ("fault_s", "{:g}"),
        ("records", "{:,}"),
        ("lost", "{}"),
        ("duplicated", "{}"),
        ("catch_up_p50_s", "{:.1f}"),
        ("catch_up_p99_s", "{:.1f}"),
        ("catch_up_max_s", "{:.1f}"),
        ("attempts_peak_per_s", "{:g}"),
        ("hall_cpu_percent", "{:.0f}"),
        ("hall_rss_mb", "{:.0f}"),
        ("silent_marked_max_s", "{:.1f}"),
        ("silent_cleared_max_s", "{:.1f}"),
        ("commands", "{}"),
        ("applied", "{}"),
        ("applied_twice", "{}"),
        ("not_delivered", "{}"),
        ("refused", "{}"),
        ("unanswered", "{}"),
        ("trail_wrong", "{}"),
        ("spectators_stale_after_s", "{:.1f}"),
        ("spectators_fresh_after_s", "{:.1f}"),
    ]
    lines = ["  ".join(name for name, _ in columns)]
    for case, figures in results.items():
        row = {"case": case, **figures}
        cells = [("n/a" if row.get(name) is None else form.format(row[name])) for name, form in columns]
        lines.append("  ".join(cells))
    return "\n".join(lines)
