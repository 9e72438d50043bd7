#!/usr/bin/env bash
# Reproduce every figure of BENCHMARKS.md: installs wrk (Debian) if missing, then runs
# all sections with the project's venv. Pass --quick for a short smoke run, or
# --only http ws ... for some sections. Results: bench/results/latest.{json,md}.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq wrk
fi
ulimit -n 20000 2>/dev/null || true   # 1,000 WebSocket sessions need descriptors on both ends
exec .venv/bin/python -m bench.run "$@"
