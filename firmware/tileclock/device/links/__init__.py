"""The clock's links to the director: the serial line (`serial.py`) and the hall's broker (`hall.py`,
with its paho client, connection grace, retained state, public state, acknowledged seq and sealed
commands beside it), each sending from the journal by cursor; `resends.py` what a resend still owes."""
