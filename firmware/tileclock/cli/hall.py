"""`tileclock hall` as a command: its arguments checked, then the feed, the page and any serial
ports run until interrupted (the feed itself is director/follow/hall.py)."""

import getpass
import os
import socket
import sys
import time
from urllib.parse import urlsplit

from ..director.hall.feed import FIRST_CONNECT_S, HallFeed
from ..wire.seal import read_keys


def run_hall(args, out, draw_panel=None):
    """`tileclock hall`: the broker's records (and any serial ports') into one store, and the page
    (`draw_panel`: see `HallPage`). A mistake in its arguments (a file, a port, a broker nobody
    answers for, a refused password) is a ValueError naming the argument, before anything runs."""
    from ..director.follow.port import check_port

    password = director_password(args)
    if args.tls_ca and not os.path.isfile(args.tls_ca):
        raise ValueError(
            f"--tls-ca {args.tls_ca}: {'a folder' if os.path.isdir(args.tls_ca) else 'no such file'}"
        )
    args.keys_read = None
    if getattr(args, "keys", None):
        try:
            with open(args.keys, encoding="utf-8") as file:
                args.keys_read = read_keys(file.read())
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ValueError(f"--keys {args.keys}: {_why(error)}") from None
    for port in args.serial or []:
        check_port(port)
    args.pairings_read = hall_pairings(args)
    reach(args.broker, args.port)
    return serve_hall(args, password, out, draw_panel)


#: where `tileclock hall` finds the director's password when no file is given
PASSWORD_VARIABLE = "TILECLOCK_HALL_PASSWORD"


def director_password(args, environ=os.environ, stdin=sys.stdin, ask=getpass.getpass):
    """The director's password from --password-file, else $TILECLOCK_HALL_PASSWORD, else asked for
    (`--password` alone, on a terminal). Never from the command line, where every user of the machine
    reads it (/proc/PID/cmdline): `--password VALUE` still works, with a warning."""
    if args.password_file:
        try:
            with open(args.password_file, encoding="utf-8") as file:
                return file.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"--password-file {args.password_file}: {_why(error)}") from None
    if args.password is True:  # `--password` alone: ask
        if not stdin.isatty():
            raise ValueError(
                f"--password: no terminal to ask on: use --password-file FILE or ${PASSWORD_VARIABLE}"
            )
        return ask("the director's password on the broker: ")
    if args.password is not None:
        print(
            "tileclock: warning: a password on the command line is visible to every user of this machine "
            f"(ps, /proc): use --password-file FILE, ${PASSWORD_VARIABLE}, or --password alone to be asked",
            file=sys.stderr,
        )
        return args.password
    return environ.get(PASSWORD_VARIABLE)


def serve_hall(args, password, out, draw_panel=None):
    """`tileclock hall` once its arguments are checked: until interrupted."""
    from ..director.event.entries import ScoreBook
    from ..director.event.score_links import ScoreLinks, phone_base
    from ..director.follow.collect import ClockFeed

    try:
        from ..director.pages.web import HallPage
    except ImportError:
        raise ValueError(
            "the hall's page needs the director extra: pip install 'tileclock[director]'"
        ) from None

    keys = getattr(args, "keys_read", None)
    host, _, port = args.web.rpartition(":")
    phone = phone_url(args, host, port)
    allowed = getattr(args, "allow_host", None)
    if phone and allowed:  # the phones call the page by the address their links name
        allowed = [*allowed, urlsplit(phone).hostname]
    feed = HallFeed(args.broker, args.port, password, args.out, tls_ca=args.tls_ca, keys=keys).start()
    if getattr(args, "pairings_read", None):
        from ..director.event.players import TablePlayers

        feed.players = TablePlayers(args).names  # a call's banner names the players at its table
    try:
        scores = ScoreBook(os.path.join(args.out, "scores"))  # the score entries, beside the records
        pairings = getattr(args, "pairings_read", None)
        page = HallPage(feed, host or "127.0.0.1", int(port), allowed, draw_panel, scores, pairings).start()
    except OSError as error:
        feed.close()
        raise ValueError(f"--web {args.web}: cannot serve the page there: {_why(error)}") from None
    deadline = time.monotonic() + FIRST_CONNECT_S
    while not feed.connected.wait(0.05) and feed.refused is None and time.monotonic() < deadline:
        pass
    if feed.refused is not None:
        page.close()
        feed.close()
        raise ValueError(
            f"the broker at {args.broker}:{args.port} refused the director: {feed.refused} "
            "(check --password-file, $TILECLOCK_HALL_PASSWORD or --password)"
        )
    serial = [ClockFeed(port, feed.store) for port in args.serial or []]
    if scores.problem:
        out.write(f"tileclock hall: error: {os.path.join(args.out, 'scores', scores.problem)}\n")
    out.write(f"tileclock hall: records into {args.out}; the page is at {page.address}\n")
    if phone:
        links = page.links = ScoreLinks(
            scores, phone_base(phone), feed.command
        )  # the page's New phone links too
        feed.subscribe(links.stored)  # each game's end: its score link to the clock
        out.write(f"tileclock hall: score codes on the panels after each game, for phones at {phone}\n")
    else:
        out.write("tileclock hall: no score codes on the panels (give --phone-url http://ADDRESS:PORT)\n")
    if not feed.connected.is_set():
        out.write(f"tileclock hall: {feed.down}; still trying\n")
    out.flush()
    said, said_notices = None, feed.store.noticed
    try:
        while True:
            feed.step(0.05 if serial else 0.2)
            for port_feed in serial:
                port_feed.poll()
            said_notices = _new_notices(feed.store, said_notices, out)
            alert = feed.disk.error and feed.disk.error[0]
            if alert != said:  # a disk fault named once when it starts, once when it ends
                out.write(f"tileclock hall: {feed.disk.text or 'disk: writing again'}\n")
                out.flush()
                said = alert
    except KeyboardInterrupt:
        pass
    finally:
        page.close()
        for port_feed in serial:
            port_feed.close()
        feed.close()
    return 0


def hall_pairings(args):
    """The pairings `--tsh`, `--config` or `--pairings` name (with `--tables`), for the players'
    names on the score forms, or None; a ValueError naming the option if they cannot be read."""
    tsh, config, csv = (getattr(args, name, None) for name in ("tsh", "tsh_config", "pairings"))
    if not (tsh or config or csv):
        if getattr(args, "tables", None):
            raise ValueError("--tables: give the pairings too (--tsh FILES or --config config.tsh)")
        return None
    from ..director.event.hall_pairings import HallPairings

    option = "--tsh" if tsh else "--config" if config else "--pairings"
    try:
        return HallPairings(tsh, config, csv, getattr(args, "tables", None))
    except OSError as error:
        raise ValueError(f"{option}: {error.filename or ''}: {_why(error)}") from None
    except ValueError as error:
        raise ValueError(f"{option}: {error}") from None


def phone_url(args, host, port):
    """The address phones reach the page by (the start of the score links): `--phone-url`, else
    `--web`'s own address when it is one a phone can reach (not loopback, not every interface)."""
    given = getattr(args, "phone_url", None)
    if given:
        from ..director.event.score_links import phone_base

        phone_base(given)  # a ValueError naming --phone-url, before anything runs
        return given.rstrip("/")
    if host and host not in ("0.0.0.0", "::", "localhost") and not host.startswith("127."):
        return f"http://{host}:{port}"
    return None


def reach(host, port, timeout_s=5.0):
    """Refuse (ValueError naming --broker and --port) a broker nobody answers for: a host name that
    does not resolve, a port nothing listens on. Once running, a broker gone away is waited for."""
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except socket.gaierror as error:
        raise ValueError(f"--broker {host}: no such host ({error.strerror})") from None
    except ConnectionRefusedError:
        raise ValueError(
            f"--broker {host} --port {port}: nothing answers there (is mosquitto running there, on that port?)"
        ) from None
    except OSError as error:
        raise ValueError(f"--broker {host} --port {port}: {_why(error)}") from None


def _why(error):
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def _new_notices(store, seen, out):
    """Print the store's notices since `seen` (a two clocks with one id, a skipped run...); returns
    how many it has said."""
    if store.noticed < seen:
        seen = 0  # the store was read back from disk (a disk fault): its count started again
    for _, text in list(store.notices)[-(store.noticed - seen) :] if store.noticed > seen else []:
        out.write(f"tileclock hall: {text}\n")
    out.flush()
    return store.noticed
