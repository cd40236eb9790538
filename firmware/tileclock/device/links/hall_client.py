"""paho's client for the hall's broker, made and connected: the clock's login, TLS, its will, its
reconnect back-off (`reconnect_delays`) and keep-alive; and a broken connection in words, for the
fault the panels and the director see.

Made by a `HallLink` (hall.py), which hands it its callbacks and how many messages may be in
flight; this owns only the client's settings and what its last failed attempt was.
"""

import random
import ssl

import paho.mqtt.client as mqtt

from ...wire.topics import topic

#: paho's reconnect back-off: the first wait, drawn per clock in [MIN, MIN + SPREAD) s, then
#: doubling up to `BACKOFF_MAX_S` plus the same draw: a clock back on the network tries within
#: that (hall-bench --chaos: with 30 s, boards caught up 13 s to 21 s after a 20 s outage); 200
#: clocks at that cap, spread over 3 s, are 20 attempts a second at most, nothing to mosquitto
BACKOFF_MIN_S = 1.0
BACKOFF_SPREAD_S = 3.0
BACKOFF_MAX_S = 10.0


def reconnect_delays(rng=random):
    """This clock's reconnect back-off for paho (`reconnect_delay_set`'s min and max delays).

    paho doubles the delay from `min_delay` without jitter, so clocks that lost the broker at the
    same moment (an access point rebooted) would all try again at the same moments, for ever: a
    reconnection storm at each. A first wait drawn per clock spreads them; doubling keeps them
    apart."""
    spread = rng.random() * BACKOFF_SPREAD_S
    return {"min_delay": BACKOFF_MIN_S + spread, "max_delay": BACKOFF_MAX_S + spread}


def make_client(clock_id, hall, inflight):
    """paho's client for clock `clock_id` on broker `hall` (the config's [hall]), at most `inflight`
    messages in flight; its callbacks are its owner's to set."""
    client = HallClient(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=clock_id,
        clean_session=False,
        protocol=mqtt.MQTTv311,
    )
    client.username_pw_set(clock_id, hall.password or None)
    if hall.tls_ca:
        client.tls_set(ca_certs=hall.tls_ca)
    client.will_set(topic(clock_id, "status"), "offline", qos=1, retain=True)
    client.reconnect_delay_set(**reconnect_delays())
    client.max_inflight_messages_set(inflight)
    return client


def connect(client, hall):
    """Connect in the background (paho's thread keeps trying until it gets through)."""
    client.connect_async(hall.broker, hall.port, keepalive=hall.keepalive_s)
    client.loop_start()


class HallClient(mqtt.Client):
    """paho's client, keeping why its last connection attempt failed (`failed`): paho's own
    thread catches the error and says only that it failed."""

    failed: BaseException | None = None

    def reconnect(self):
        """paho's reconnect, its OSError (a TLS handshake's too) kept in `failed`."""
        try:
            return super().reconnect()
        except OSError as error:
            self.failed = error
            raise


def refused(hall, reason_code):
    """The broker refused the connection (`on_connect`'s failure), in words."""
    return f"broker {hall.broker}:{hall.port} refused: {reason_code}"


def lost(hall, reason_code):
    """The connection broke (`on_disconnect`), in words."""
    return f"broker {hall.broker}:{hall.port} lost: {reason_code}"


def cannot_connect(hall, error):
    """A connection attempt failed (`on_connect_fail`, `HallClient.failed`), in words."""
    return f"broker {hall.broker}:{hall.port}: {_why_not(error)}"


def _why_not(error):
    """A failed connection attempt in words: a certificate the hall's CA did not sign (or for
    another name) says so, for the fault the panels and the director see."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS: its certificate is not the hall's (tls_ca): {error.verify_message or error.reason}"
    if isinstance(error, ssl.SSLError):
        return f"TLS: {error.reason or error}"
    if isinstance(error, OSError):
        return f"cannot connect: {error.strerror or error}"
    return "cannot connect"
