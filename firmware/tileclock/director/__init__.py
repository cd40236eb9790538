"""The director's tools: read records back, collect them from clocks, export and replay."""
