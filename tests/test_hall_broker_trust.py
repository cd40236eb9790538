"""The hall's broker as generated (a real mosquitto): no credentials can push another client off,
the ACL draws no warning, and the director (only the director) can clear a clock's retained state."""

import paho.mqtt.client as mqtt

from conftest import BROKER_USERS
from support.hall_helpers import Listener, wait_for
from tileclock.director.hall.setup import acl_text, setup


def connect(broker, user, client_id):
    """A client signed in as `user`, asking for `client_id`; its disconnections are noted."""
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
    client.username_pw_set(user, BROKER_USERS[user])
    client.dropped = []
    client.on_disconnect = lambda c, u, f, reason, p: client.dropped.append(str(reason))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    wait_for(client.is_connected, what=f"{user} to connect")
    return client


def test_a_clocks_credentials_cannot_push_another_client_off(broker):
    victim = connect(broker, "c1", "c1")
    director = Listener(broker, client_id="tileclock-director", clean=False)
    thieves = [connect(broker, "c2", name) for name in ("c1", "tileclock-director", "director")]
    # each thief is given its own user name as client id: at most it replaces the one before it
    wait_for(lambda: sum(t.is_connected() for t in thieves) == 1, what="the thieves to replace each other")
    victim.publish("tileclock/c1/records", "still here", qos=1).wait_for_publish(5)
    wait_for(lambda: director.payloads("tileclock/c1/records") == [b"still here"], what="c1's message")
    assert victim.is_connected() and victim.dropped == []
    assert director.connected.is_set() and director.client.is_connected()
    for client in (victim, *thieves):
        client.disconnect()
        client.loop_stop()
    director.close()


def test_the_generated_acl_draws_no_warning_from_mosquitto(broker):
    log = (broker.folder / "mosquitto.log").read_text()
    warnings = [line for line in log.splitlines() if "arning" in line and "run as root" not in line]
    assert "Config loaded" in log or "running" in log
    assert warnings == []


def test_hall_setup_writes_each_clocks_topics_by_name(tmp_path):
    setup(tmp_path, ["b1", "b2"], director_password="x")
    acl = (tmp_path / "tileclock.acl").read_text()
    assert "pattern" not in acl.replace("# ", "")  # no line a warning could come from
    assert "user b2\ntopic write tileclock/b2/records" in acl
    assert "use_username_as_clientid true" in (tmp_path / "tileclock.conf").read_text()
    assert acl == acl_text(["b1", "b2"])


def test_the_director_alone_can_clear_a_clocks_retained_state(broker):
    clock = connect(broker, "c1", "c1")
    clock.publish("tileclock/c1/status", "online", qos=1, retain=True).wait_for_publish(5)
    clock.publish("tileclock/c1/state", '{"faults": "x"}', qos=1, retain=True).wait_for_publish(5)
    # another clock cannot clear it
    other = connect(broker, "c2", "c2")
    other.publish("tileclock/c1/state", b"", qos=1, retain=True).wait_for_publish(5)
    watcher = Listener(broker, subscribe="tileclock/c1/state")
    wait_for(
        lambda: watcher.payloads("tileclock/c1/state") == [b'{"faults": "x"}'], what="the retained state"
    )
    watcher.close()
    # the director can
    director = connect(broker, "director", "director")
    director.publish("tileclock/c1/state", b"", qos=1, retain=True).wait_for_publish(5)
    director.disconnect()
    director.loop_stop()
    watcher = Listener(broker, subscribe="tileclock/c1/+")
    # its retained status comes with whatever retained state is left
    wait_for(lambda: watcher.payloads("tileclock/c1/status") == [b"online"], what="the retained status")
    assert watcher.payloads("tileclock/c1/state") == []
    for client in (clock, other):
        client.disconnect()
        client.loop_stop()
    watcher.close()


KINDS = ("records", "state", "status", "answer", "public", "cmd")


def test_each_user_writes_and_reads_only_what_the_topics_table_says(broker):
    """docs/hall.md's topics table, user by user: a clock's credentials write nothing of another
    clock's (status, answer and public included) nor any command, the bridge's (`viewers`)
    nothing at all; `viewers` reads only the statuses and public states."""
    spy = Listener(broker)  # the director: it reads everything that gets through
    forgers = {"c2": connect(broker, "c2", "c2"), "viewers": connect(broker, "viewers", "viewers")}
    for user, client in forgers.items():
        for kind in KINDS:
            client.publish(f"tileclock/c1/{kind}", f"forged by {user}", qos=1).wait_for_publish(5)
        client.publish("tileclock/all/cmd", f"forged by {user}", qos=1).wait_for_publish(5)
        client.disconnect()  # (a second `viewers` below would push this one off: one client id)
        client.loop_stop()
    asked = [(f"tileclock/c1/{kind}", 1) for kind in KINDS] + [("tileclock/all/cmd", 1)]
    bridge = Listener(broker, user="viewers", client_id="viewers", subscribe=asked)  # each by name
    clock = connect(broker, "c1", "c1")
    for kind in KINDS[:5]:  # what a clock writes of its own, last: once the spy has it, all came
        clock.publish(f"tileclock/c1/{kind}", "own", qos=1).wait_for_publish(5)
    spy.client.publish("tileclock/c1/cmd", "own", qos=1).wait_for_publish(5)
    wait_for(lambda: len(spy.messages) == 6, what="c1's own messages and the director's command")
    assert sorted(name for name, _, _ in spy.messages) == sorted(f"tileclock/c1/{kind}" for kind in KINDS)
    assert all(payload == b"own" for _, payload, _ in spy.messages)
    wait_for(lambda: len(bridge.messages) >= 2, what="the bridge's statuses and public states")
    assert sorted(name for name, _, _ in bridge.messages) == ["tileclock/c1/public", "tileclock/c1/status"]
    clock.disconnect()
    clock.loop_stop()
    bridge.close()
    spy.close()
