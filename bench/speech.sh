#!/usr/bin/env bash
# Speech-to-intent benchmark: Hark (`hark recognize`, Intents/barista.json) against plain PocketSphinx 5.1.1
# (PyPI, bench/peers/barista.jsgf) on the 619 spoken coffee orders in kitchen noise (6…24 dB + clean), the
# out-of-domain false-acceptance test on synthesised speech, and the text path's slot accuracy.
# Needs: swift build -c release; bash scripts/setup-bench.sh (sox, flite, espeak-ng, numpy, the peer's venv).
# Writes bench/out/speech/report.md and speech.json. Options go to bench/speech.py:
#   --half dev|test|all (default all; dev/test/all are scored from it)  --seed N (default 20240601)
#   --snr 6 9 …  --engines hark,pocketsphinx  --jobs 2  --no-ood  --ood-voices slt,en-us  --no-text  --reuse
# A missing engine (no `hark recognize` in the build, no peer venv) is reported and skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/speech.py "$@"
