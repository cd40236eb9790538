"""A clock's retained states in paho's hands: one a topic, the newest waiting (hall_retained.py).
The whole path through a held link and a real mosquitto is tests/test_hall_chaos.py's."""

from tileclock.device.links.hall_retained import NewestInFlight

STATE, PUBLIC = "tileclock/c1/state", "tileclock/c1/public"


def test_only_the_newest_waits_and_goes_at_the_acknowledgement():
    gate = NewestInFlight()
    assert gate.offer(STATE, "s1")
    gate.handed(STATE, 7)
    assert not gate.offer(STATE, "s2")
    assert not gate.offer(STATE, "s3")  # s2 is stale: only s3 is worth sending
    assert gate.offer(PUBLIC, "p1")  # another topic has its own turn
    gate.handed(PUBLIC, 8)
    assert gate.acknowledged(8) is None  # nothing waits behind p1: its topic is free
    assert gate.offer(PUBLIC, "p2")
    assert gate.acknowledged(7) == (STATE, "s3")
    gate.handed(STATE, 9)
    assert gate.acknowledged(9) is None
    assert gate.offer(STATE, "s4")


def test_an_acknowledgement_of_another_message_sends_nothing():
    gate = NewestInFlight()
    assert gate.offer(STATE, "s1")
    gate.handed(STATE, 7)
    assert not gate.offer(STATE, "s2")
    assert gate.acknowledged(3) is None  # a status or an answer, or one from before a reconnection
    assert gate.acknowledged(7) == (STATE, "s2")


def test_one_acknowledged_before_its_id_was_known_lets_the_next_go():
    gate = NewestInFlight()
    assert gate.offer(STATE, "s1")
    assert not gate.offer(STATE, "s2")  # offered while s1's publish call was under way
    assert gate.not_handed(STATE, "s1", refused=False) == "s2"
    assert gate.not_handed(STATE, "s2", refused=False) is None
    assert gate.offer(STATE, "s3")


def test_one_paho_refused_goes_again_at_the_next_pump_unless_a_newer_one_waits():
    gate = NewestInFlight()
    assert gate.offer(STATE, "s1")
    assert gate.not_handed(STATE, "s1", refused=True) is None
    assert gate.free() == [(STATE, "s1")]  # taken for its turn: marked in flight again
    assert gate.free() == []
    assert not gate.offer(STATE, "s2")
    assert gate.not_handed(STATE, "s1", refused=True) is None
    assert gate.free() == [(STATE, "s2")]  # the newer one, not the refused one
