"""The director's page's password, as hall-setup keeps it (`tileclock-page.passwd`, 0600): never
the password itself, a PBKDF2 hash of it (docs/hall.md, "The two doors")."""

import hashlib
import hmac
import secrets

#: PBKDF2's rounds: a tenth of a second a try on a laptop, and wrong tries are rationed (doors.py)
ROUNDS = 200_000


def hash_password(password, salt=None):
    """`password` as the page's password file keeps it: `pbkdf2_sha256$ROUNDS$SALT$HASH` (hex)."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, ROUNDS)
    return f"pbkdf2_sha256${ROUNDS}${salt.hex()}${digest.hex()}"


def is_password_hash(text):
    """Whether `text` reads as `hash_password`'s (a password file the hall can use)."""
    parts = text.strip().split("$")
    return (
        len(parts) == 4
        and parts[0] == "pbkdf2_sha256"
        and parts[1].isdigit()
        and all(len(p) >= 32 and all(c in "0123456789abcdef" for c in p) for p in parts[2:])
    )


def password_matches(stored, password):
    """Whether `password` is the one `stored` (`hash_password`'s text) was made of."""
    try:
        kind, rounds, salt, digest = stored.strip().split("$")
        if kind != "pbkdf2_sha256":
            return False
        made = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), int(rounds))
    except ValueError:
        return False
    return hmac.compare_digest(made.hex(), digest)
