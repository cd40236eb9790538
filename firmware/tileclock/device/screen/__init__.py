"""What the panels show: the clock face (`face.py`), its text and font (`text.py`), the hall's score
link as a QR code (`score_code.py` its state, `score_screen.py` its picture) and when the panels
idle (`idle.py`): pure functions of the clock's view, drawn as 1-bit images."""
