"""How ServiceBench steps and episodes are graded: call identity, effects, reward tables,
milestones and the outcome check."""
