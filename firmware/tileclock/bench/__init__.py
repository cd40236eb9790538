"""Measurements: exactness, wake-ups, CPU, latency, bus bytes, start-up and memory."""
