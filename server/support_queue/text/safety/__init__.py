"""Whether a reply is unsafe: the rules (rules.py, over the tokens and clauses of clauses.py,
the frames of frames.py, the scope of scope.py, the templates of templates.py, the names of
named.py), the learned model (model.py), and their verdict (verdict.py)."""
