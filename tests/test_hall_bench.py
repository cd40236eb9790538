"""The hall benchmark's arithmetic: what it calls a record's time to the page, and its table.

(The benchmark itself runs outside the suite: `tileclock hall-bench`. Its small, fast version is
tests/test_hall.py, which asserts that no record is lost or kept twice.)
"""

from tileclock.bench.hall_clocks import fleet_processes, split
from tileclock.bench.hall_report import record_to_page, table

MS = 1_000_000


def test_a_record_reaches_the_page_when_the_page_first_shows_it_or_a_later_one():
    published = {("c1", 5): 1000 * MS, ("c1", 6): 1100 * MS, ("c1", 7): 1200 * MS, ("c2", 1): 1000 * MS}
    shown = {"c1": [(900 * MS, 4), (1300 * MS, 6), (1700 * MS, 9)], "c2": []}
    assert record_to_page(published, shown) == {
        ("c1", 5): 300.0,  # seq 6 on the page carries seq 5 with it
        ("c1", 6): 200.0,
        ("c1", 7): 500.0,  # never shown itself: the page went from 6 to 9
    }  # c2's record never reached the page: left out, not counted as fast


def test_the_table_marks_the_targets_met_or_missed():
    rows = {
        line.split()[0]: line.split()[1:]
        for line in table({"lost": 0, "duplicated": 2, "record_to_page_p99_ms": 1200.0}).splitlines()[1:]
    }
    assert rows["lost"] == ["0", "==", "0", "met"]
    assert rows["duplicated"] == ["2", "==", "0", "MISSED"]
    assert rows["record_to_page_p99_ms"] == ["1,200.0", "<", "1000", "MISSED"]
    assert rows["director_rss_mb"] == ["n/a"]


def test_every_clock_plays_in_exactly_one_fleet_and_no_fleet_is_empty(tmp_path):
    passwords = {f"clock-{n}": "pw" for n in range(1, 201)}
    for clocks, processes in ((200, 3), (200, 8), (7, 4), (1, 4), (5, 5)):
        fleets = fleet_processes(str(tmp_path), str(tmp_path), 1883, passwords, clocks, processes, 1.0)
        ids = [clock for fleet in fleets for clock in fleet.spec["passwords"]]
        assert ids == [f"clock-{n}" for n in range(1, clocks + 1)], (clocks, processes)
        assert 0 < len(fleets) <= processes and all(fleet.count > 0 for fleet in fleets)
        assert max(f.count for f in fleets) - min(f.count for f in fleets) <= -(-clocks // processes)
    assert [count for _, count in split(1000, 4)] == [250] * 4  # the spectators' children
    assert all(fleet.spec["health"] for fleet in fleets)  # their states say their health ...
    bare = fleet_processes(str(tmp_path), str(tmp_path), 1883, passwords, 4, 2, 1.0, health=False)
    assert not any(fleet.spec["health"] for fleet in bare)  # ... but with --no-health


def test_the_director_it_starts_is_a_tileclock_hall_the_cli_accepts(tmp_path):
    """The bench's `tileclock hall` command line parses, and names how its page is served (it
    reads the page over HTTP on loopback): a run would otherwise stop minutes in, at its start."""
    from tileclock.bench.hall import Director
    from tileclock.cli.hall_checks import page_tls
    from tileclock.cli.parser import build_parser

    command = Director(str(tmp_path), 1883, "pw", 8080).command
    assert command[1:4] == ["-m", "tileclock", "hall"]
    args = build_parser().parse_args(command[3:])
    assert page_tls(args.page_tls, args.tls_ca, args.keys, args.plain_http) == (None, ("director", "players"))
