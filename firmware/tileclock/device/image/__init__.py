"""The card image's boot: its settings file (`settings.py`), doctor's verdict on the panels
(`verdict.py`), and the one program that runs both (`boot.py`)."""
