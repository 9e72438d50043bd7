"""Benchmarks of the server beside the OpenEnv reference server and a bare FastAPI route.

Run everything with `bench/run_all.sh` (or `python -m bench.run`); see BENCHMARKS.md.
Nothing here is a test: timings depend on the machine, so only ratios from one
run are meaningful.
"""
