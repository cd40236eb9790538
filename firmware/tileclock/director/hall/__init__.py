"""The hall: the broker's records into the store (`feed.py`, over the director's
client on the broker, `connection.py`), what the page shows of each board
(`board.py`), the brokers and their files (`broker.py`, `viewers_broker.py`, `setup.py`), the time
server, and the director's actions from the page (`audit.py` writes the audit trail, `audit_read.py`
reads it back, `action_ids.py`, `round_control.py`)."""
