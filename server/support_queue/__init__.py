"""Support Queue: an agent triages SaaS support tickets, graded per component.

environment.py plays an episode over tasks.py's tickets; grader.py grades each action
(coverage in text.py and echo.py, unsafe replies in safety.py over templates.py,
clauses.py and named.py); variants.py generates seeded variants from scenarios.py,
proof.py proves them against rules.py; heuristic.py is the baseline policy.
"""
