"""Following clocks: each clock's records over a serial line (collect) or the broker (the hall), kept in order and on disk."""
