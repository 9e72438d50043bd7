"""Support Queue: an agent triages SaaS support tickets, graded per component.

environment.py plays an episode over tasks.py's tickets; grader.py grades each action's
labels and hands its summary and reply to text/ (`text.grade_texts`: coverage of the
ticket's facts, echo of the ticket, the unsafe-reply verdict); variants.py generates
seeded variants from scenarios.py, proof.py proves them against rules.py (the labelling
rules); heuristic.py is the baseline policy.
"""
