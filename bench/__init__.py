"""Benchmarks: they print figures; nothing here is a timed assertion."""
