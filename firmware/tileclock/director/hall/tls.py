"""The hall broker's TLS: a small CA of the hall's own and the broker's certificate, made with
Debian's `openssl` (docs/hall.md, "Encrypted on the Wi-Fi").

The CA's certificate is what every clock and the director check the broker against (a clock's
`[hall] tls_ca`, `tileclock hall --tls-ca`); its key signs the broker's certificate once and is
kept 0600 beside it, for a new certificate when the laptop's address changes. The broker's
certificate names the laptop's host name, `localhost`, the loopback addresses and every `--name`
and `--address` given, so a client connecting by any of them can check it. The keys are EC
P-256: made in milliseconds, which the tests' brokers need, and what a Pi Zero's TLS handshake
does quickly.
"""

import ipaddress
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from ...wire.segments import replace_file

#: the files `make_tls` writes, by what they are
CA_CERT = "tileclock-ca.pem"
CA_KEY = "tileclock-ca.key"
BROKER_CERT = "tileclock-broker.pem"
BROKER_KEY = "tileclock-broker.key"
#: the hall page's certificate and key (both its doors' HTTPS: docs/hall.md, "The page over HTTPS")
PAGE_CERT = "tileclock-page.pem"
PAGE_KEY = "tileclock-page.key"
#: the CA's life: longer than any event, short enough that a lost laptop's CA dies out
CA_DAYS = 3650
BROKER_DAYS = 825
OPENSSL_HINT = "install Debian's openssl: sudo apt-get install openssl"


class TlsError(RuntimeError):
    """The certificates cannot be made; the message says why (the user's: one line, cli/errors.py)."""


class PageTlsError(ValueError):
    """The page's certificate or key cannot be read (the message names the files)."""


def broker_names(names=(), addresses=()):
    """The names and addresses the broker's certificate is for: `names` and `addresses` given,
    this laptop's host name (and `.local`), `localhost` and the loopback addresses; each once, as
    (DNS names, IP addresses)."""
    dns, ips = [], []
    host = socket.gethostname()
    for name in [*names, *addresses, host, f"{host}.local", "localhost", "127.0.0.1", "::1"]:
        try:
            ip = str(ipaddress.ip_address(name))
        except ValueError:
            if name and name not in dns:
                dns.append(name)
        else:
            if ip not in ips:
                ips.append(ip)
    return dns, ips


def _openssl(*arguments):
    tool = shutil.which("openssl")
    if tool is None:
        raise TlsError(f"openssl not found: {OPENSSL_HINT}")
    done = subprocess.run([tool, *arguments], capture_output=True, text=True, check=False)
    if done.returncode:
        said = done.stderr.strip().splitlines()
        raise TlsError(f"openssl {arguments[0]}: {said[-1] if said else f'exit {done.returncode}'}")


def make_tls(folder, names=(), addresses=()):
    """Write a new CA (`CA_CERT`, its key `CA_KEY`), the broker's certificate and key
    (`BROKER_CERT`, `BROKER_KEY`) and the page's (`PAGE_CERT`, `PAGE_KEY`), both for
    `broker_names(names, addresses)`, into `folder`; every key 0600 from the moment it exists.
    Returns the paths, by the names above."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    san, subject = _names(names, addresses)
    paths = {name: folder / name for name in (CA_CERT, CA_KEY, BROKER_CERT, BROKER_KEY, PAGE_CERT, PAGE_KEY)}
    # made in a folder of its own (mkdtemp's 0700: no other user reaches what openssl writes there,
    # whatever the umask), then renamed into place: a key is never written into a file already
    # there, whose mode or an open descriptor on it would let another user read it. (Not the
    # process's umask: the director's threads make files too.)
    with tempfile.TemporaryDirectory(dir=folder) as work:
        made = {name: Path(work) / name for name in paths}
        _openssl(
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            str(made[CA_KEY]),
            "-out",
            str(made[CA_CERT]),
            "-days",
            str(CA_DAYS),
            "-subj",
            f"/CN=tileclock hall CA {socket.gethostname()}",
            "-addext",
            "basicConstraints=critical,CA:TRUE,pathlen:0",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        )
        for cert, key in ((BROKER_CERT, BROKER_KEY), (PAGE_CERT, PAGE_KEY)):
            _sign(Path(work), made[cert], made[key], subject, made[CA_CERT], made[CA_KEY], san)
        for name in (CA_KEY, BROKER_KEY, PAGE_KEY):
            os.chmod(made[name], 0o600)  # before the rename: readable by their owner only
        for name in (CA_CERT, BROKER_CERT, PAGE_CERT):
            os.chmod(made[name], 0o644)  # public: every clock gets the CA's
        for name, path in made.items():
            os.replace(path, paths[name])
    return paths


def make_page_tls(folder, names=(), addresses=()):
    """Write only the page's certificate and key (`PAGE_CERT`, `PAGE_KEY`) into `folder`, signed
    by the CA already there (`CA_CERT`, `CA_KEY`) for `broker_names(names, addresses)`: for a
    folder hall-setup wrote before the page spoke HTTPS, its CA (on every clock) kept. Returns
    their paths; a TlsError naming the CA file that is missing."""
    folder = Path(folder)
    for name in (CA_CERT, CA_KEY):
        if not (folder / name).is_file():
            raise TlsError(
                f"{folder / name}: not there (hall-setup writes it; the page's certificate needs it)"
            )
    san, subject = _names(names, addresses)
    with tempfile.TemporaryDirectory(dir=folder) as work:
        made = {name: Path(work) / name for name in (PAGE_CERT, PAGE_KEY)}
        _sign(Path(work), made[PAGE_CERT], made[PAGE_KEY], subject, folder / CA_CERT, folder / CA_KEY, san)
        os.chmod(made[PAGE_KEY], 0o600)
        os.chmod(made[PAGE_CERT], 0o644)
        for name, path in made.items():
            os.replace(path, folder / name)
    return {name: folder / name for name in (PAGE_CERT, PAGE_KEY)}


def _names(names, addresses):
    """(subjectAltName's value, the subject) of a server certificate for `broker_names(names,
    addresses)`; a TlsError for a name that is no host name."""
    dns, ips = broker_names(names, addresses)
    for name in dns:  # a name that could carry another option into openssl's -extfile
        if not all(part.isalnum() or part in "-._" for part in name):
            raise TlsError(f"--name {name!r}: a host name is letters, digits, - . and _")
    san = ",".join([*(f"DNS:{name}" for name in dns), *(f"IP:{ip}" for ip in ips)])
    return san, f"/CN={dns[0] if dns else ips[0]}"


def _sign(work, cert, key, subject, ca_cert, ca_key, san):
    """A new EC P-256 key at `key` and its certificate at `cert` for `subject`, signed by the CA
    (`ca_cert`, `ca_key`) for the names `san` (a server's: serverAuth)."""
    extensions = work / f"{cert.name}.ext"
    extensions.write_text(
        f"subjectAltName={san}\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        encoding="utf-8",
    )
    request = work / f"{cert.name}.csr"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl("req", "-new", *ec, "-keyout", str(key), "-out", str(request), "-subj", subject)
    _openssl(
        "x509", "-req", "-in", str(request), "-CA", str(ca_cert), "-CAkey", str(ca_key),
        "-set_serial", f"0x{secrets.token_hex(16)}", "-out", str(cert), "-days", str(BROKER_DAYS),
        "-sha256", "-extfile", str(extensions),
    )  # fmt: skip  # openssl's options, in pairs


def fingerprint(pem_path):
    """The SHA-256 fingerprint of the certificate in `pem_path`, as browsers show it
    (`AB:CD:...`): what a director or a player compares with the one the hall printed."""
    import hashlib
    import ssl

    der = ssl.PEM_cert_to_DER_cert(Path(pem_path).read_text(encoding="ascii"))
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[n : n + 2] for n in range(0, len(digest), 2))


#: `local_tls`'s files (name -> bytes), made once per process
_LOCAL: dict[str, bytes] = {}


def local_tls(folder):
    """A CA and a broker certificate for this laptop's loopback names, for a private broker
    (`LocalBroker`: hall-demo, the tests) and the page's in `folder`: made once per process (`make_tls`, some
    60 ms of openssl) and the same four files written into every folder after. Returns the paths
    as `make_tls` does."""
    folder = Path(folder)
    if not _LOCAL:
        made = make_tls(folder)
        _LOCAL.update((name, path.read_bytes()) for name, path in made.items())
        return made
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, data in _LOCAL.items():
        path = paths[name] = folder / name
        # made afresh and renamed over: a key is never written into a file already there (whose
        # mode, 0644 say, it would keep)
        replace_file(str(path), data, 0o600 if name.endswith(".key") else 0o644)
    return paths
