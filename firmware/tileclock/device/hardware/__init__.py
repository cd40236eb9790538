"""Thin adapters between the pure clock and the real (or simulated) parts."""
