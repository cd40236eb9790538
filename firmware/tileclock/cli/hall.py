"""`tileclock hall` as a command: its arguments checked (hall_checks.py), then the feed, the page
and any serial ports opened and run until interrupted (the feed itself is director/hall/feed.py)."""

import os
import ssl
from urllib.parse import urlsplit

from ..director.hall.feed import HallFeed
from ..director.hall.tls import PageTlsError
from .errors import UsageError, given_by_the_user, why
from .hall_checks import (
    PLAIN_PORT,
    TLS_PORT,
    ca_beside_keys,
    director_password,
    hall_pairings,
    hall_round,
    page_password,
    page_tls,
    phone_url,
    reach,
    read_keys_option,
    room_plan,
)


def run_hall(args, out, draw_panel=None):
    """`tileclock hall`: the broker's records (and any serial ports') into one store, and the page
    (`draw_panel`: see `HallPage`). A mistake in its arguments (a file, a port, a broker nobody
    answers for, a refused password) is a UsageError naming the argument, before anything runs."""
    from ..director.follow.port import check_port

    password = director_password(args)
    if not args.tls_ca and args.port is None:
        args.tls_ca = ca_beside_keys(args.keys)  # hall-setup's folder: its broker speaks TLS only
    guessed_plain = args.port is None and not args.tls_ca  # no TLS asked, no port: hall-setup's has none
    if args.port is None:  # hall-setup's broker listens with TLS on 8883 (docs/hall.md)
        args.port = TLS_PORT if args.tls_ca else PLAIN_PORT
    if args.tls_ca and not os.path.isfile(args.tls_ca):
        raise UsageError(
            f"--tls-ca {args.tls_ca}: {'a folder' if os.path.isdir(args.tls_ca) else 'no such file'}"
        )
    keys = read_keys_option(args.keys)
    args.places = room_plan(getattr(args, "plan", None))
    for port in args.serial or []:
        with given_by_the_user():
            check_port(port)
    tsh_dir = getattr(args, "tsh_dir", None)  # TSH's folder: its config.tsh, and its queue
    config = os.path.join(tsh_dir, "config.tsh") if tsh_dir else args.tsh_config
    pairings = hall_pairings(args.tsh, config, args.pairings, args.tables)
    try:
        args.round = hall_round(pairings, getattr(args, "round", None))
    except UsageError:
        pairings.close()  # (a refusal has pairings: without them no round is refused)
        raise
    args.password_hash = page_password(args.page_password_file)
    reach(args.broker, args.port, args.tls_ca, guessed_plain=guessed_plain)
    # the page's certificate last: a broker nobody answers for is the first thing said
    args.page_tls, args.plain_doors = page_tls(args.page_tls, args.tls_ca, args.keys, args.plain_http)
    host, _, port = args.phones.rpartition(":")
    players_tls = bool(args.page_tls) and "players" not in args.plain_doors
    phone = phone_url(args.phone_url, host, port, tls=players_tls)
    if phone and players_tls and phone.lower().startswith("http://"):  # a link no phone could open
        raise UsageError(
            f"--phone-url {args.phone_url}: the players' door speaks HTTPS: give https://... "
            "(or --plain-http players to serve it in the clear)"
        )
    return serve_hall(args, password, out, draw_panel, keys=keys, pairings=pairings, phone=phone)


class OpenHall:
    """The hall's parts, wired and started: `feed` (the broker's records), `scores` (the score
    entries' `ScoreBook`), `links` (the score links sent to the clocks, or None without a phone
    address) and `page` (the director's page)."""

    def __init__(self, feed, scores, links, page, tsh_queue=None):
        self.feed, self.scores, self.links, self.page = feed, scores, links, page
        self.tsh_queue = tsh_queue  # a HallQueue with --tsh-dir, else None

    def close(self):
        """Stop the TSH queue's passes, the page, then the feed."""
        if self.tsh_queue is not None:
            self.tsh_queue.close()
        self.page.close()
        self.feed.close()


def open_hall(
    broker,
    port,
    password,
    out,
    web,
    allowed=None,
    draw_panel=None,
    *,
    tls_ca=None,
    keys=None,
    pairings=None,
    phone=None,
    phones=None,
    password_hash=None,
    tsh_dir=None,
    page_tls=None,
    plain=(),
):
    """The hall's feed on the broker at `broker`:`port`, its records into `out`, the score entries
    beside them, and its page on `web` (HOST:PORT) for browsers calling it `allowed` (None: this
    laptop's own names); `tileclock hall` and `hall-demo` both open it here. `tls_ca` and `keys`
    are HallFeed's; `pairings` (a HallPairings) names the players on the score forms and on a
    call's banner; with `phone` (the address phones reach the page by) score links are sent to
    the clocks. `phones` (HOST:PORT) is the players' door, serving the score form only;
    `password_hash` the director's login (where `web` is not loopback). The feed is started
    before the page; if the page cannot listen there, the feed is closed again and the OSError
    raised. With `tsh_dir` (TSH's folder) each settled table is queued into TSH's remote queue
    (`hall_queue.HallQueue`). `page_tls` (certificate, key) serves both doors over HTTPS but the
    ones `plain` names ("director", "players"; HallPage's). The page needs the director extra."""
    from ..director.event.entries import ScoreBook
    from ..director.event.score_links import ScoreLinks, phone_base
    from ..director.pages.web import HallPage

    # a call's banner names the players at its table (from the pairings' last copy: never a file read)
    players = pairings.names if pairings is not None else None
    feed = HallFeed(broker, port, password, out, tls_ca=tls_ca, keys=keys, players=players).start()
    try:
        scores = ScoreBook(os.path.join(out, "scores"))  # the score entries, beside the records
        links = None
        if phone:
            links = ScoreLinks(scores, phone_base(phone), feed.command)  # the page's New phone links too
            # the links send through the feed, so they are made after it and subscribed to it
            feed.subscribe(links.stored)  # each game's end: its score link to the clock
        host, _, page_port = web.rpartition(":")
        door = None
        phone_hosts = None
        if phones:
            phone_host, _, phone_port = phones.rpartition(":")
            door = (phone_host or "0.0.0.0", int(phone_port))
            if allowed or phone:  # the phones call the page by the address their links name
                from ..director.pages.guard import own_hosts

                phone_hosts = [
                    *(allowed or own_hosts(door[0])),
                    *([urlsplit(phone).hostname] if phone else []),
                ]
        page = HallPage(
            feed, host or "127.0.0.1", int(page_port), allowed, draw_panel, scores, pairings, links,
            phones=door, phone_hosts=phone_hosts, password_hash=password_hash, tls=page_tls, plain=plain,
        )  # fmt: skip  # the page's arguments, then the doors
        page.start()
    except BaseException:
        feed.close()
        raise
    tsh_queue = None
    if tsh_dir:
        from ..director.event.hall_queue import HallQueue

        tsh_queue = HallQueue(tsh_dir, out, scores, audit=getattr(page, "audit", None)).start()
        page.tsh_queue = tsh_queue  # the Scores page shows each table's state in TSH
    return OpenHall(feed, scores, links, page, tsh_queue)


def serve_hall(args, password, out, draw_panel=None, keys=None, pairings=None, phone=None):
    """`tileclock hall` once its arguments are checked (`keys`, `pairings` and `phone` read from
    them): until interrupted."""
    from ..director.follow.collect import ClockFeed

    try:
        from ..director.pages.web import HallPage  # noqa: F401  # open_hall's, asked for here
    except ImportError:
        raise UsageError(
            "the hall's page needs the director extra: pip install 'tileclock[director]'"
        ) from None
    allowed = args.allow_host
    try:
        hall = open_hall(
            args.broker, args.port, password, args.out, args.web, allowed, draw_panel,
            tls_ca=args.tls_ca, keys=keys, pairings=pairings, phone=phone, phones=args.phones,
            password_hash=getattr(args, "password_hash", None), tsh_dir=getattr(args, "tsh_dir", None),
            page_tls=args.page_tls, plain=args.plain_doors,
        )  # fmt: skip  # the feed's arguments, then the rest
        hall.page.given_round = getattr(args, "round", None)  # offered when TSH's is not known
        hall.page.plan = getattr(args, "places", None)  # the map's room (--plan)
    except ssl.SSLError as error:  # the broker's CA file, read as the feed is made
        raise UsageError(f"--tls-ca {args.tls_ca}: {error.reason or error}") from None
    except PageTlsError as error:  # the page's certificate or key
        raise UsageError(f"--page-tls: {error}") from None
    except OSError as error:
        if error.filename:  # the records folder's scores/, not the page's address: said as it is
            raise
        raise UsageError(
            f"--web {args.web} or --phones {args.phones}: cannot serve the page there: {why(error)}"
        ) from None
    feed, scores, page = hall.feed, hall.scores, hall.page
    feed.connection.wait_first()
    if feed.connection.refused is not None:
        hall.close()
        raise UsageError(
            f"the broker at {args.broker}:{args.port} refused the director: {feed.connection.refused} "
            "(check --password-file, $TILECLOCK_HALL_PASSWORD or --password)"
        )
    serial = [ClockFeed(port, feed.store) for port in args.serial or []]
    if scores.problem:
        out.write(f"tileclock hall: error: {os.path.join(args.out, 'scores', scores.problem)}\n")
    out.write(f"tileclock hall: records into {args.out}; the page is at {page.address}\n")
    offered = page.next_round()
    if offered is not None:
        from_tsh = page.pairings is not None and page.pairings.next_round is not None
        whence = "TSH's next unscored round, from its files" if from_tsh else "--round"
        out.write(f"tileclock hall: the page offers round {offered} ({whence})\n")
    out.write(f"tileclock hall: the players' door (the score form only) is at {page.phone_address}\n")
    for line in page_tls_said(args.page_tls, args.plain_doors, page):
        out.write(f"tileclock hall: {line}\n")
    if page.sessions.login:  # the director's door is open beyond this laptop: a login first
        out.write(
            "tileclock hall: the director's page asks for a login: the page's password"
            + (
                " (--page-password-file)"
                if page.sessions.password_hash
                else " (none given: --page-password-file)"
            )
            + f", or this link, good for one browser once: {page.one_time_link()}\n"
        )
    if phone:
        out.write(f"tileclock hall: score codes on the panels after each game, for phones at {phone}\n")
    else:
        out.write("tileclock hall: no score codes on the panels (give --phone-url https://ADDRESS:PORT)\n")
    if feed.connection.in_the_clear:
        out.write(f"tileclock hall: {feed.connection.in_the_clear}\n")
    if not feed.connection.connected.is_set():
        out.write(f"tileclock hall: {feed.connection.down}; still trying\n")
    out.flush()
    said, said_notices, said_pairings = None, feed.store.noticed, None
    try:
        while True:
            feed.step(0.05 if serial else 0.2)
            for port_feed in serial:
                port_feed.poll()
            said_notices = _new_notices(feed.store, said_notices, out)
            said_pairings = _pairings_news(pairings, said_pairings, out)
            alert = feed.disk.error and feed.disk.error[0]
            if alert != said:  # a disk fault named once when it starts, once when it ends
                out.write(f"tileclock hall: {feed.disk.text or 'disk: writing again'}\n")
                out.flush()
                said = alert
    except KeyboardInterrupt:
        pass
    finally:
        if hall.tsh_queue is not None:
            hall.tsh_queue.close()
        page.close()
        for port_feed in serial:
            port_feed.close()
        feed.close()
    return 0


def page_tls_said(tls, plain, page):
    """The console's lines on the page's HTTPS: the CA's fingerprint to check a browser's
    warning against (both doors' certificate is signed by it), and each door `plain` serves in
    plain HTTP, in capitals (`page.in_the_clear` is the page header's, for the doors beyond
    loopback)."""
    from ..director.hall.tls import CA_CERT, fingerprint

    said = []
    if tls:
        ca = os.path.join(os.path.dirname(tls[0]), CA_CERT)
        print_ = fingerprint(ca) if os.path.isfile(ca) else "(no tileclock-ca.pem beside it)"
        said.append(f"the page over HTTPS, its certificate {tls[0]}; the hall's CA, SHA-256 {print_}")
    doors = {"director": (page.door, "the director's page"), "players": (page.phones, "the players' door")}
    for name in plain:
        door, words = doors[name]
        if door is None:
            continue
        where = (
            "on this laptop only"
            if door.host.startswith("127.") or door.host in ("localhost", "::1")
            else "on the Wi-Fi"
        )
        said.append(f"NOT ENCRYPTED (--plain-http): {words} is plain HTTP at {door.address}, {where}")
    return said


def _pairings_news(pairings, said, out):
    """Say the pairings' problem once when it starts or changes, and once when it is over (the
    detail, naming the file, is the director's: a phone is only told the names may be stale)."""
    problem = pairings.problem if pairings is not None else None
    if problem != said:
        out.write(f"tileclock hall: {problem or 'the pairings are read again: up to date'}\n")
        out.flush()
    return problem


def _new_notices(store, seen, out):
    """Print the store's notices since `seen` (a two clocks with one id, a skipped run...); returns
    how many it has said."""
    if store.noticed < seen:
        seen = 0  # the store was read back from disk (a disk fault): its count started again
    for _, text in list(store.notices)[-(store.noticed - seen) :] if store.noticed > seen else []:
        out.write(f"tileclock hall: {text}\n")
    out.flush()
    return store.noticed
