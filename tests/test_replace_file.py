"""`replace_file` (wire/segments.py), the one atomic write, against what an earlier crash or a
hostile user left where its new file goes: it writes only inside its folder, and only its data."""

import os

import pytest

from tileclock.wire.segments import replace_file


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_symlink_planted_where_the_new_file_goes_is_never_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"not the clock's\n")
    folder = tmp_path / "state"
    folder.mkdir()
    os.symlink(outside, folder / "acked.new")
    replace_file(str(folder / "acked"), b"41\n")
    assert outside.read_bytes() == b"not the clock's\n"
    assert not (folder / "acked").is_symlink() and (folder / "acked").read_bytes() == b"41\n"
    assert os.listdir(folder) == ["acked"]


def test_a_hard_link_left_where_the_new_file_goes_keeps_its_other_name_as_it_was(tmp_path):
    other = tmp_path / "other"
    other.write_bytes(b"someone else's\n")
    os.link(other, tmp_path / "acked.new")
    replace_file(str(tmp_path / "acked"), b"41\n")
    assert other.read_bytes() == b"someone else's\n" and (tmp_path / "acked").read_bytes() == b"41\n"


def test_a_larger_leftover_from_a_crash_lends_the_new_file_neither_bytes_nor_mode(tmp_path, umask_022):
    leftover = tmp_path / "seal.new"
    leftover.write_bytes(b"9" * 10_000)
    leftover.chmod(0o666)  # anyone could have rewritten the counter
    replace_file(str(tmp_path / "seal"), b"7\n")
    assert (tmp_path / "seal").read_bytes() == b"7\n"
    assert (tmp_path / "seal").stat().st_mode & 0o777 == 0o644
