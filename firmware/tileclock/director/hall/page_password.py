"""The director's page's password, as hall-setup keeps it (`tileclock-page.passwd`, 0600): never
the password itself, a PBKDF2 hash of it (docs/hall.md, "The two doors")."""

import hashlib
import hmac
import secrets

from ...wire.labels import is_count

#: PBKDF2's rounds: a tenth of a second a try on a laptop, and wrong tries are rationed (doors.py)
ROUNDS = 200_000
#: the rounds a password file may name: a file of a billion would hold each login for hours
MAX_ROUNDS = 10 * ROUNDS
_HEX = frozenset("0123456789abcdef")


def hash_password(password, salt=None, rounds=ROUNDS):
    """`password` as the page's password file keeps it: `pbkdf2_sha256$ROUNDS$SALT$HASH` (hex);
    a login is checked with the rounds the file names (hall-setup's: `ROUNDS`)."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, rounds)
    return f"pbkdf2_sha256${rounds}${salt.hex()}${digest.hex()}"


def is_password_hash(text):
    """Whether `text` reads as `hash_password`'s (a password file the hall can use)."""
    parts = text.strip().split("$")
    return (
        len(parts) == 4
        and parts[0] == "pbkdf2_sha256"
        and is_count(parts[1])  # ASCII digits: `isdigit` takes "²"
        and 1 <= int(parts[1]) <= MAX_ROUNDS
        and all(32 <= len(p) <= 256 and set(p) <= _HEX for p in parts[2:])
    )


def password_matches(stored, password):
    """Whether `password` is the one `stored` (`hash_password`'s text) was made of."""
    if not is_password_hash(stored):  # (never hours of PBKDF2 for a file that names them)
        return False
    try:
        _, rounds, salt, digest = stored.strip().split("$")
        made = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), int(rounds))
    except ValueError:
        return False
    return hmac.compare_digest(made.hex(), digest)
