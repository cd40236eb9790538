"""The director's commands waiting for the clock's loop (device/links/hall_commands.py): what the
broker may send a clock that is no command, and a flood, kept bounded."""

from tileclock.device.links.hall_commands import MAX_COMMANDS, CommandInbox
from tileclock.wire.protocol import with_crc


def test_a_command_waits_for_the_loop_in_order_and_is_read_once():
    inbox = CommandInbox()
    assert inbox.take(b"status", retained=False, hall_wide=False)
    assert inbox.take(b"round over", retained=False, hall_wide=True)
    assert len(inbox) == 2
    assert inbox.read_lines() == [b"status", b"round over"]
    assert inbox.read_lines() == [] and not inbox


def test_a_retained_an_empty_or_a_hall_wide_ack_is_no_command():
    inbox = CommandInbox()
    assert not inbox.take(b"round over", retained=True, hall_wide=True)  # stale by definition
    assert not inbox.take(b"", retained=False, hall_wide=False)
    ack = with_crc("ack 40").encode()
    assert not inbox.take(ack, retained=False, hall_wide=True)  # one clock's seq, sent to all
    assert inbox.take(ack, retained=False, hall_wide=False)  # on its own topic it is its own
    assert inbox.read_lines() == [ack]


def test_a_bad_line_goes_to_the_handler_which_answers_it():
    inbox = CommandInbox()
    garbage = bytes(range(256)) * 4
    assert inbox.take(garbage, retained=False, hall_wide=True)  # not an ack: the handler refuses it
    assert inbox.read_lines() == [garbage]


def test_a_flood_keeps_the_first_few_and_drops_the_rest():
    inbox = CommandInbox()
    taken = [inbox.take(b"status", retained=False, hall_wide=False) for _ in range(10 * MAX_COMMANDS)]
    assert taken.count(True) == MAX_COMMANDS
    assert len(inbox.read_lines()) == MAX_COMMANDS
    assert inbox.take(b"status", retained=False, hall_wide=False)  # room again once the loop read them
