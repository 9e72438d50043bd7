"""What a reset plays, below the episode base: seeds, splits, proven variants, and the errors
of a request an episode cannot serve.

seeds.py holds the canonical seed and each split's seed range; splits.py the Task API's
splits, (split, index) -> (family, seed); variants.py the one variant pipeline (draw, prove,
cache); episode_errors.py the errors every transport answers with their HTTP status (here,
at the bottom, because splits.py raises them too). Nothing here imports the rest of the server.
"""
