"""The room's plan file (`tileclock hall --plan`): the page's map lays the tables out as the room
is, and a plan with a mistake is refused in one line naming the line, before the hall opens."""

import pytest

from support.command_line import run
from tileclock.director.hall.plan import MAX_BYTES, PlanError, parse_plan, read_plan

ROOM = """\
# the main hall, the stage at the top
1  2  3  .  4  5
6  7  8  .  9 10

11 . 12b
"""


def test_a_plan_places_each_board_where_its_table_stands():
    places = parse_plan(ROOM)
    assert places["1"] == [1, 0] and places["4"] == [1, 4]  # the comment line is the room's row 0
    assert places["10"] == [2, 5]
    assert places["11"] == [4, 0] and places["12b"] == [4, 2]  # the blank line: an aisle across the room
    assert len(places) == 12


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("1 2\n3 2\n", "line 2: board 2 is also on line 1"),
        ("1 2 tab/le\n", "line 1: 'tab/le' is no board name"),
        ("# only a comment\n\n", "no board on it"),
        ("1 " * 101 + "\n", "line 1: 101 places; at most 100 a row"),
        ("1\n" * 101, "101 lines; a plan has at most 100 rows"),
    ],
)
def test_a_plan_with_a_mistake_names_its_line(text, said):
    with pytest.raises(PlanError, match="^room.txt") as refused:
        parse_plan(text, "room.txt")
    assert said in str(refused.value)


def test_a_file_that_is_no_plan_is_refused_before_the_hall_opens(tmp_path):
    big, binary = tmp_path / "big.txt", tmp_path / "photo.jpg"
    big.write_text("1 " * (MAX_BYTES // 2 + 1))
    binary.write_bytes(b"\xff\xd8\xff\xe0 JFIF")
    with pytest.raises(PlanError, match="over 64 KiB"):
        read_plan(big)
    with pytest.raises(PlanError, match="not UTF-8"):
        read_plan(binary)
    with pytest.raises(PlanError, match="cannot be read"):
        read_plan(tmp_path)  # a folder
    twice = tmp_path / "room.txt"
    twice.write_text("1 2\n2\n")
    code, _out, err = run(["hall", "--broker", "127.0.0.1", "--plan", str(twice)])
    assert code == 2 and err.count("\n") == 1, err
    assert f"--plan {twice}, line 2: board 2 is also on line 1" in err


def test_the_guides_sample_plan_is_a_room_of_24_tables():
    import pathlib

    sample = pathlib.Path(__file__).parent.parent / "docs" / "examples" / "room-plan.txt"
    places = read_plan(sample)
    assert sorted(places, key=int) == [str(n) for n in range(1, 25)]
    assert places["5"][1] == places["1"][1] + 5  # across the gap from 4
