"""ServiceBench: an agent resolves customer requests by calling in-process services.

environment.py plays an episode and grading/ grades it (rewards, milestones, call identity,
effects, the outcome check). tasks.py and catalogue.py hold the task cards and the families;
variants.py generates the seed tasks' variants (families.py plants each situation in world.py's
drafts) and requests/ the request families'; proof.py proves every variant with oracle.py (the
optimal policy) and refund_readings.py. faults/ makes the services fail as real ones do.
"""
