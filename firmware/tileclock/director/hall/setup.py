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


#: the clock id hall-setup --cards gives board N (its user name on the broker, its topics)
CARD_ID = "board-{}"
#: what hall-setup --cards writes on every card itself: not for --card-base to set
CARD_KEYS = (
    "board", "clock_id", "hall", "hall_port", "hall_password", "hall_key", "hall_ca", "hall_ca_cert", "time_server"
)  # fmt: skip  # laid out by hand, the way it reads best
#: boards hall-setup --cards writes a card for at most (a hall's boards, with room to spare)
MAX_BOARDS = 500


def parse_boards(text):
    """The board numbers `--boards` names ("1-30", "1-12,20,31-33"), in order; BrokerError in words."""
    boards = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not (low.isdigit() and (high.isdigit() if dash else True)):
            raise BrokerError(f"--boards {text!r}: board numbers and ranges, like 1-30 or 1-12,20")
        first, last = int(low), int(high) if dash else int(low)
        if not 1 <= first <= last or len(boards) + last - first >= MAX_BOARDS:
            raise BrokerError(f"--boards {text!r}: from 1 up, low to high, at most {MAX_BOARDS} boards")
        boards += range(first, last + 1)
    if len(set(boards)) != len(boards):
        raise BrokerError(f"--boards {text!r}: a board is named twice")
    return boards


def card_text(board, address, password, key, ca_pem, base=""):
    """Board `board`'s tileclock-settings.txt: `base`'s lines, then its id, the hall's address, its
    password and command key, the hall's CA (base64 of its PEM, one line) and time server."""
    import base64

    return (
        f"# tileclock: board {board}'s card, written by tileclock hall-setup --cards. Copy this file to\n"
        "# the card's firmware partition (TILEBOOT) as it is; the card reads it at its first boot and\n"
        "# wipes it there. It holds this clock's password and key: keep it out of sight.\n"
        + base
        + f"board = {board}\nclock_id = {CARD_ID.format(board)}\nhall = {address}\n"
        + f'hall_password = "{password}"\nhall_key = {key}\n'
        + f"hall_ca_cert = {base64.b64encode(ca_pem).decode('ascii')}\ntime_server = {address}\n"
    )


#: the card's settings file (device/image/settings.py's SETTINGS_NAME: the director imports no device code)
CARD_FILE = "tileclock-settings.txt"


def write_cards(cards, boards, address, users, keys, ca_pem, base="", check=None):
    """Write `cards`/board-N/tileclock-settings.txt (0600) for each of `boards`; `check(text)`
    (the card's own parser, handed down by the command) reads each back before it is kept and
    raises on one the card would refuse. Returns the folders written."""
    written = []
    for board in boards:
        clock = CARD_ID.format(board)
        text = card_text(board, address, users[clock], keys[clock], ca_pem, base)
        if check is not None:
            check(text)
        folder = Path(cards) / f"board-{board}"
        folder.mkdir(parents=True, exist_ok=True)
        write_private(folder / CARD_FILE, text)
        written.append(folder)
    return written
