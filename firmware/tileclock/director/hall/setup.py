"""`tileclock hall-setup`'s files: both brokers' configs, the ACL, the passwords, the clocks'
command keys and the broker's TLS (its CA and certificate), written once before the event
(docs/hall.md, "The broker"). Above `broker.py`, `tls.py` and `viewers_broker.py`, whose writers
it calls.
"""

import secrets
from pathlib import Path

from ...wire.topics import DIRECTOR, VIEWERS, valid_clock_id
from .broker import BrokerError, acl_text, hall_conf_text, write_passwords, write_private
from .page_password import hash_password
from .tls import make_tls
from .viewers_broker import write_setup


def setup(folder, clock_ids, director_password=None, names=(), addresses=(), plain_port=None):
    """Write tileclock.conf, tileclock.acl, tileclock.passwd and tileclock.keys (each clock's command
    key, wire/seal.py) into `folder`, the broker's TLS files (tls.py: a CA, and a certificate for
    this laptop's `names` and `addresses`) and the spectators' broker's config, ACL and pages
    (viewers_broker.py); returns the passwords to give out. The broker listens with TLS only;
    `plain_port` adds a listener in the clear (`--plain`)."""
    for clock in clock_ids:  # before anything is written
        if not valid_clock_id(clock):
            raise BrokerError(
                f"--clock {clock!r} cannot be a clock id (letters, digits, - and _; not 'all' or 'director')"
            )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    make_tls(folder, names, addresses)  # first: a name openssl refuses stops it before any password
    (folder / "tileclock.conf").write_text(hall_conf_text(plain_port), encoding="utf-8")
    (folder / "tileclock.acl").write_text(acl_text(clock_ids), encoding="utf-8")
    users = {DIRECTOR: director_password or secrets.token_urlsafe(12)}
    users.update((clock, secrets.token_urlsafe(12)) for clock in clock_ids)
    viewers = secrets.token_urlsafe(12)  # the spectators' bridge's: in its config only, never printed
    write_passwords(folder / "tileclock.passwd", {**users, VIEWERS: viewers})
    write_keys(folder / "tileclock.keys", {clock: secrets.token_hex(32) for clock in clock_ids})
    write_setup(folder, viewers)
    return users


#: the director's page's password, hashed (`tileclock hall --page-password-file`)
PAGE_PASSWORD_FILE = "tileclock-page.passwd"


def write_page_password(path):
    """Make the director's page a password, write its hash to `path` (0600), and return it (printed
    once: the file never holds the password itself)."""
    password = secrets.token_urlsafe(12)
    write_private(path, hash_password(password) + "\n")
    return password


def write_keys(path, keys):
    """Write the clocks' command keys (clock id -> 64 hex digits) for `tileclock hall --keys`, 0600."""
    head = "# the clocks' command keys: tileclock hall --keys FILE; each clock's in its [hall] key\n"
    write_private(path, head + "".join(f"{clock} {key}\n" for clock, key in keys.items()))


def read_keys_file(path):
    """The keys `write_keys` wrote, as clock id -> key text."""
    keys = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            clock, key = line.split()
            keys[clock] = key
    return keys
