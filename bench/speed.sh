#!/usr/bin/env bash
# Parse-speed benchmark on one core: Hark (home.json, car-dashboard.json) against hassil and rhasspy-nlu.
# Needs the release binary (swift build -c release) and the peer venvs (scripts/setup-bench.sh);
# a missing peer is reported as unavailable, not fatal. Options go to bench/speed.py (--repeat, --car-sample).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/speed.py "$@"
