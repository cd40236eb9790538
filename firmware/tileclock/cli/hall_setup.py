"""`tileclock hall-setup`: the hall's broker config, ACL, passwords, TLS and time settings, and the
cards' settings files (docs/hall.md, docs/build-guide.md "Thirty cards into a hall")."""

import os

from .errors import UsageError, given_by_the_user
from .paths import folder_to_make


def cmd_hall_setup(args):
    """Write the hall's broker config, ACL and passwords."""
    from ..director.hall.setup import (
        CARD_ID,
        PAGE_PASSWORD_FILE,
        parse_boards,
        read_keys_file,
        setup,
        write_cards,
        write_page_password,
    )
    from ..director.hall.timeserver import clock_conf, hall_conf

    if not args.folder:  # '' would write here, then look for the keys at /tileclock.keys
        raise UsageError("hall-setup: give the folder to write them in (. for this one)")
    folder_to_make(args.folder, "hall-setup")
    if args.page_cert:  # only the page's certificate, from the CA already there
        from ..director.hall.tls import make_page_tls

        made = make_page_tls(args.folder, args.name, [args.address] if args.address else [])
        print(
            f"wrote {', '.join(str(path) for path in made.values())}: the page's HTTPS, signed by the CA "
            f"in {args.folder} (tileclock hall finds them beside tileclock-ca.pem); nothing else changed"
        )
        return 0
    boards, base = [], ""
    if args.cards is not None or args.boards is not None or args.card_base is not None:
        if not (args.cards and args.boards and args.address):
            raise UsageError(
                "hall-setup --cards DIR --boards 1-30 --address HOST: the three together (the cards "
                "name the hall by --address)"
            )
        folder_to_make(args.cards, "--cards")
        boards = parse_boards(args.boards)  # in words, before anything is written
        base = read_card_base(args.card_base) if args.card_base else ""
        twice = set(args.clock) & {CARD_ID.format(board) for board in boards}
        if twice:
            raise UsageError(f"--clock {min(twice)}: --boards gives that id to a card already")
    clock_ids = [*args.clock, *(CARD_ID.format(board) for board in boards)]
    with given_by_the_user():  # --time-allow and --address, in words
        times = {"chrony-hall.conf": hall_conf(args.time_allow)}
        if args.address:
            times["chrony-clock.conf"] = clock_conf(args.address)
    plain = 1883 if args.plain else None
    addresses = [args.address] if args.address else []
    # a BrokerError or a TlsError is the user's: one line (errors.py)
    users = setup(args.folder, clock_ids, names=args.name, addresses=addresses, plain_port=plain)
    page_password = write_page_password(os.path.join(args.folder, PAGE_PASSWORD_FILE))
    for name, text in times.items():
        with open(os.path.join(args.folder, name), "w", encoding="utf-8") as file:
            file.write(text)
    keys = read_keys_file(os.path.join(args.folder, "tileclock.keys"))
    if boards:
        with open(os.path.join(args.folder, "tileclock-ca.pem"), "rb") as file:
            ca_pem = file.read()
        write_cards(args.cards, boards, args.address, users, keys, ca_pem, base, check=_card_check)
    print(
        f"wrote tileclock.conf, tileclock.acl, tileclock.passwd and tileclock.keys in {args.folder}, the "
        "broker's TLS (tileclock-ca.pem, the hall's CA; tileclock-broker.pem and .key, the broker's; "
        "tileclock-page.pem and .key, the page's HTTPS; "
        "tileclock-ca.key, kept 0600 to sign a new one), and the spectators' broker "
        '(tileclock-viewers.conf, .acl: `tileclock spectators` serves its pages; docs/hall.md, "Spectators"); '
        "the passwords and the clocks' command keys:"
    )
    carded = {CARD_ID.format(board) for board in boards}
    for name, password in users.items():
        if name not in carded:  # a card's are in its settings file, never typed
            print(f"  {name} = {password}" + (f"   key = {keys[name]}" if name in keys else ""))
    if boards:
        print(
            f"  {CARD_ID.format(boards[0])} to {CARD_ID.format(boards[-1])} ({len(boards)} clocks): in "
            f"{args.cards}/board-N/tileclock-settings.txt, with the hall's address, CA and time server; "
            "copy each to its card's firmware partition (TILEBOOT) and boot it once "
            '(docs/build-guide.md, "Thirty cards into a hall")'
        )
    others = "every other clock" if boards else "every clock"
    print(
        ("the cards hold theirs; " if boards else "")
        + f"give {others.replace('every', 'each')} its own in its [hall] section (password and key, "
        f"docs/hall.md), run the hall with --keys {args.folder}/tileclock.keys; keep them out of sight"
    )
    print(
        "the broker listens with TLS on 8883"
        + (" and IN THE CLEAR on 1883 (--plain)" if plain else " only")
        + ("; the cards carry the CA" if boards else "")
        + f"; give {others} {args.folder}/tileclock-ca.pem (hall_ca in its settings file) and run the "
        f"hall with --port 8883 --tls-ca {args.folder}/tileclock-ca.pem"
    )
    print(
        f"the director's page, where it is served beyond this laptop (--web not loopback): its password "
        f"is {page_password} (kept hashed in {args.folder}/{PAGE_PASSWORD_FILE}: tileclock hall "
        "--page-password-file it)"
    )
    if not clock_ids:
        print("no --clock given: `tileclock doctor` on each clock prints its id (the `clock id` line)")
    print(
        f"the hall's time: {args.folder}/chrony-hall.conf goes in this laptop's /etc/chrony/conf.d/ "
        "(then: sudo systemctl restart chrony)"
        + (
            f"; {args.folder}/chrony-clock.conf in each clock's /etc/chrony/conf.d/tileclock.conf"
            if args.address
            else "; each clock's is written by its installer from its [hall] broker (or give --address)"
        )
        + ("; the cards' chrony follows their time_server line, written at first boot" if boards else "")
    )
    return 0


def read_card_base(path):
    """The lines every card shares (`hall-setup --card-base`: Wi-Fi, rules, panels...), checked by
    the card's own parser and holding none of the lines hall-setup writes for each card; a
    BrokerError naming the file otherwise."""
    from ..device.image.settings_lines import SettingsError, parse_settings
    from ..director.hall.broker import BrokerError
    from ..director.hall.setup import CARD_KEYS

    try:
        with open(path, "rb") as file:
            data = file.read(1024 * 1024)
    except OSError as error:
        raise BrokerError(f"--card-base {path}: {error.strerror}") from None
    try:
        base = parse_settings(data)
    except SettingsError as error:
        raise BrokerError(f"--card-base {path}: {error}") from None
    taken = [key for key in CARD_KEYS if getattr(base, key) is not None]
    if taken:
        raise BrokerError(
            f"--card-base {path}: sets {', '.join(taken)}, which hall-setup writes for each card"
        )
    text = data.decode("utf-8-sig")
    return text if text.endswith("\n") or not text else text + "\n"


def _card_check(text):
    """A card's settings file as hall-setup wrote it, read by the card's own parser: a BrokerError
    (never written) if the card would refuse it."""
    from ..device.image.settings_lines import SettingsError, parse_settings
    from ..director.hall.broker import BrokerError

    try:
        parse_settings(text.encode())
    except SettingsError as error:
        raise BrokerError(f"a card hall-setup made would be refused by the card: {error}") from None
