"""Following clocks: each clock's records over a serial line (collect) or the broker, taken in order
and kept on disk (`session.py`, `store.py`, `clocklog.py`); the hall that uses them is `director/hall/`."""
