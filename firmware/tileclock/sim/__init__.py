"""The simulator: the whole device on simulated parts, driven by a script or a terminal."""
