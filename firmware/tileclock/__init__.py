"""tileclock: a tournament game clock for Scrabble-style word games on a Raspberry Pi."""

__version__ = "0.1.0"
