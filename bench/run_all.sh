#!/usr/bin/env bash
# Reproduce every figure of BENCHMARKS.md: installs wrk (HTTP load) and gcc (to build
# bench/wsload.c, the WebSocket load generator of figure 3) on Debian if missing, then runs
# all sections with the project's venv. Pass --quick for a short smoke run, or
# --only http ws ... for some sections. Results: bench/results/latest.{json,md}.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi
ulimit -n 20000 2>/dev/null || true   # 1,000 WebSocket sessions need descriptors on both ends
exec .venv/bin/python -m bench.run "$@"
