"""The pure clock: stamped edges in, records out. Imports nothing outside this package."""
