"""ServiceBench: an agent resolves customer requests by calling three in-process services.

environment.py plays an episode; tasks.py, rewards.py (with reward_table.py, calls.py and
outcome.py) grade it; variants.py generates seeded variants over world.py's drafts,
proof.py proves them with oracle.py (the optimal policy) and refund_readings.py.
"""
