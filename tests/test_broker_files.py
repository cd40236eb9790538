"""`tileclock hall-setup`'s secret files (the clocks' command keys, the broker's passwords) are never
readable by another user, not even for the moment between their creation and a chmod."""

import os
import stat
from pathlib import Path

import pytest

from tileclock.director.hall.broker import INSTALL_HINT, write_private
from tileclock.director.hall.setup import read_keys_file, setup


def _no_chmod(monkeypatch):
    # only the mode a file is created with counts: a chmod after it exists is too late (another
    # user may have opened it in between, and reads through that descriptor whatever comes later)
    for name in ("chmod", "fchmod"):
        monkeypatch.setattr(os, name, lambda *args, **kwargs: None)
    monkeypatch.setattr(Path, "chmod", lambda *args, **kwargs: None)


def test_a_hall_setup_over_an_old_folder_leaves_no_key_or_password_readable_by_others(tmp_path, monkeypatch):
    if not os.access("/usr/bin/mosquitto_passwd", os.X_OK) and not os.environ.get("CI"):
        pytest.skip(f"mosquitto_passwd is not installed: {INSTALL_HINT}")
    folder = tmp_path / "hall"
    folder.mkdir()
    # a folder set up before whose files were left readable by all (copied by hand, an old version)
    for name in ("tileclock.keys", "tileclock.passwd", "tileclock-ca.key", "tileclock-broker.key"):
        (folder / name).write_text("old\n")
        (folder / name).chmod(0o644)
    peeker = open(folder / "tileclock.keys", encoding="utf-8")  # another user's, while it was readable
    tls_peeker = open(folder / "tileclock-ca.key", encoding="utf-8")
    _no_chmod(monkeypatch)
    old = os.umask(0o022)
    try:
        users = setup(folder, ["c1", "c2"])
    finally:
        os.umask(old)
    keys = read_keys_file(folder / "tileclock.keys")
    assert sorted(keys) == ["c1", "c2"] and all(len(key) == 64 for key in keys.values())
    private = (
        "tileclock.keys",
        "tileclock.passwd",
        "tileclock-viewers.conf",
        "tileclock-ca.key",
        "tileclock-broker.key",
    )
    for name in private:
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    with peeker:
        seen = peeker.read()
    assert not any(key in seen for key in keys.values()), "a new key reached an old reader's descriptor"
    with tls_peeker:
        assert tls_peeker.read() == "old\n", "the new CA key reached an old reader's descriptor"
    assert sorted(users) == ["c1", "c2", "director"]
    assert not list(folder.glob("*.new")), "a half-written file left behind"


def test_a_private_file_is_created_owner_only_whatever_the_umask(tmp_path, monkeypatch):
    _no_chmod(monkeypatch)
    for umask in (0o000, 0o022, 0o077):
        path = tmp_path / f"secret-{umask:o}"
        old = os.umask(umask)
        try:
            write_private(path, "s3cret\n")
            write_private(path, "s3cret again\n")  # over a file already there
        finally:
            os.umask(old)
        assert path.read_text() == "s3cret again\n"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(umask)
