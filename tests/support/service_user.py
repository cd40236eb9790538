"""A command run as the service user would run it: where the tests run as root (which writes
anywhere), root without the capabilities that override file permissions."""

import os

ROOT = os.geteuid() == 0


def as_service_user(command):
    """`command` run as a user that cannot write where its permissions say so: when root (which
    writes anywhere), root without the capabilities that override file permissions."""
    if not ROOT:
        return command
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", *command]
