#!/usr/bin/env bash
# The rooms' live audio end to end: three scripted members (PyPI `websockets` and libopus through `opuslib`)
# against a real `hark serve`: mix-minus, leave events, 401/403/410, bad frames, a member that vanishes,
# 30% packet loss (tests/rooms/). See docs/rooms.md.
#
#   scripts/rooms-test.sh                 # installs what is missing, then runs the tests
#   scripts/rooms-test.sh --no-install    # fails instead of installing
#   scripts/rooms-test.sh -- -k loss -x   # arguments after -- go to pytest
#   scripts/rooms-test.sh --bench [-- --quick]   # bench/rooms.py instead (make bench-rooms), on .build/release/hark
#
# Needs .build/debug/hark (swift build), or HARK=path/to/hark.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.build/rooms-venv
install=1
bench=0
pytest_args=()
# The WebSocket client, Opus through ctypes (Debian's libopus0), arrays for the signal checks, the test runner.
pip_packages=("websockets==15.0.1" "opuslib==3.0.1" "numpy==2.2.6" "pytest")

die() { echo "rooms-test: $*" >&2; exit 1; }

while (($#)); do
    case "$1" in
        --no-install) install=0; shift ;;
        --bench) bench=1; shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; pytest_args=("$@"); break ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

# --- flite, libopus0 and python3-venv from Debian (scripts/setup.sh's list); the rest from PyPI
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3) || die "no python3"
if ((install)); then
    missing=()
    command -v flite >/dev/null || missing+=(flite)
    "$python" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
    "$python" -c 'import ctypes.util, sys; sys.exit(ctypes.util.find_library("opus") is None)' || missing+=(libopus0)
    if ((${#missing[@]})); then
        echo "rooms-test: installing ${missing[*]} (scripts/setup.sh)" >&2
        bash scripts/setup.sh </dev/null
    fi
    if ! "$venv/bin/python" -c 'import websockets, opuslib, numpy, pytest' 2>/dev/null; then
        echo "rooms-test: preparing $venv (${pip_packages[*]})" >&2
        "$python" -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check "${pip_packages[@]}"
    fi
fi
command -v flite >/dev/null || die "no flite (apt-get install flite, or run without --no-install)"
[[ -x $venv/bin/python ]] || die "no $venv (run without --no-install)"
if ((bench)); then hark=${HARK:-.build/release/hark}; else hark=${HARK:-.build/debug/hark}; fi
[[ -x $hark ]] || die "no $hark: build it first (swift build)"
hark=$(realpath "$hark")
python=$(pwd)/$venv/bin/python

if ((bench)); then
    HARK=$hark exec "$python" bench/rooms.py "${pytest_args[@]}"
fi
cd tests/rooms
HARK=$hark exec "$python" -m pytest -q -p no:cacheprovider "${pytest_args[@]}"
