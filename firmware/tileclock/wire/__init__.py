"""The wire: what crosses between a clock and the director, and what lies on disk.

The record and command formats, line framing and CRC, the hall's topics, the journal's segment
format and clock-id labels. Beside `clock/` on the ground floor: it imports nothing of the package
above it, and `clock/`, `device/` and `director/` all import it (docs/architecture.md).
"""
