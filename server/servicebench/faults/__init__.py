"""Faults: services that fail as real ones do, and how the oracle, the grader and the docs meet them."""
