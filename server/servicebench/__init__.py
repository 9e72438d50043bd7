"""ServiceBench: an agent resolves customer requests by calling three in-process services.

environment.py plays an episode; tasks.py, rewards.py (with reward_table.py, milestones.py,
calls.py and outcome.py) grade it; variants.py generates seeded variants (families.py plants
each family's situation in world.py's drafts), and proof.py proves them with oracle.py (the
optimal policy) and refund_readings.py.
"""
