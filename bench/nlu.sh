#!/usr/bin/env bash
# NLU benchmark (Snips intent accuracy + slot F1, out-of-scope rejection, paraphrase acceptance).
# Needs the release binary: swift build -c release. Options go to bench/nlu.py (--strict, --snips-train full).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/nlu.py "$@"
