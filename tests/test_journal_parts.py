"""The journal's parts alone (device/journal/__init__.py is a thin front over them): each owns its state and
can be tried without the others."""

from tileclock.device.journal.numbering import HEADROOM, Numbering
from tileclock.device.journal.outbox import Outbox
from tileclock.device.journal.retention import DAY_S, MB, Pruning, Retention, SegmentInfo, choose
from tileclock.device.journal.store import SegmentStore
from tileclock.wire import segments as files


def test_the_outbox_gives_up_the_oldest_unwritten_records_past_its_backlog_and_says_which_once():
    outbox = Outbox(backlog=3, recent=0)
    for seq in range(5):
        outbox.add(seq, f"line {seq}", segment=0, urgent=True)
    assert [seq for seq, _, _ in outbox.waiting()] == [2, 3, 4]
    assert [outbox.line(seq) for seq in range(1, 6)] == [None, "line 2", "line 3", "line 4", None]
    assert outbox.take_lost() == [0, 1] and outbox.take_lost() is None
    outbox.written(3)
    assert outbox.waiting() == [] and outbox.unwritten == 0


def test_the_outbox_counts_each_record_not_yet_through_a_write_once_until_settled():
    # the links send a record only once it has been through a write (Journal.settled_seq): one
    # miscounted is one held back for ever, or sent before the disk had it
    outbox = Outbox(backlog=10)
    assert outbox.unsettled == 0  # a fresh journal holds nothing back
    outbox.add(0, "line 0", segment=0, urgent=False)
    outbox.add(1, "line 1", segment=0, urgent=True)
    assert outbox.unsettled == 2
    outbox.settle()
    assert outbox.unsettled == 0
    outbox.add(2, "line 2", segment=0, urgent=False)
    assert outbox.unsettled == 1


def test_the_outbox_starts_a_segment_at_each_game_and_keeps_boot_records_with_the_next():
    outbox = Outbox(backlog=10)
    placed = [outbox.place(seq, ev) for seq, ev in enumerate(["boot", "new_game", "switch", "new_game"])]
    assert placed == [0, 0, 0, 3]


def test_the_reservation_moves_only_half_its_headroom_at_a_time(tmp_path):
    notes = []
    numbering = Numbering(str(tmp_path), None, lambda detail, extra: notes.append(extra))
    numbering.reserve(0)
    assert files.read_mark(str(tmp_path), files.RESERVED) == HEADROOM
    numbering.reserve(HEADROOM // 2)  # not past the half: the mark stays (no write)
    assert files.read_mark(str(tmp_path), files.RESERVED) == HEADROOM
    numbering.reserve(HEADROOM // 2 + 1)
    assert files.read_mark(str(tmp_path), files.RESERVED) == HEADROOM * 3 // 2 + 1
    numbering.note_skipped(5, 9, "why")
    assert notes == [{"skipped": [5, 8]}]


def test_the_held_mark_moves_to_the_end_of_the_last_whole_game_held(tmp_path):
    store = SegmentStore(str(tmp_path), note=lambda *_: None, fail=None)
    for first in (0, 10, 20):
        store.add(first)
    pruning = Pruning(store, Retention(), note=lambda *_: None)
    pruning.mark_held(15)  # inside the second game: only the first is held whole
    assert pruning.held == 9 and files.read_mark(str(tmp_path), files.COLLECTED) == 9


def test_a_game_the_director_holds_is_kept_its_days_then_let_go():
    game = SegmentInfo(0, 9, size=100, mtime=0)
    thirty_days = Retention(keep_days=30)
    assert choose([game], thirty_days, held_through=9, now_s=29 * DAY_S) == []  # young: kept
    assert choose([game], thirty_days, held_through=9, now_s=31 * DAY_S) == [(game, False)]
    assert choose([game], thirty_days, held_through=8, now_s=999 * DAY_S) == []  # not held whole: kept


def test_over_its_size_the_journal_lets_the_games_held_go_first_then_the_oldest_others():
    held = [SegmentInfo(0, 9, MB, mtime=0), SegmentInfo(10, 19, MB, mtime=0)]
    others = [SegmentInfo(20, 29, MB, mtime=0), SegmentInfo(30, 39, MB, mtime=0)]
    chosen = choose(held + others, Retention(keep_mb=1), held_through=19, now_s=0)
    # 4 MB over a budget of 1: both held games, then the oldest other (with a fault), and no more
    assert chosen == [(held[0], False), (held[1], False), (others[0], True)]
