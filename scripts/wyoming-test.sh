#!/usr/bin/env bash
# `hark wyoming` against the real Wyoming client: the `wyoming` package from PyPI (the one Home Assistant's
# Wyoming integration uses) drives every service's round trip, the streaming forms and the robustness cases
# (tests/wyoming/). See docs/wyoming.md.
#
#   scripts/wyoming-test.sh                 # installs what is missing, then runs the tests
#   scripts/wyoming-test.sh --no-install    # fails instead of installing
#   scripts/wyoming-test.sh -- -k wake -x   # arguments after -- go to pytest
#
# Needs .build/debug/hark (swift build), or HARK=path/to/hark.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.build/wyoming-venv
install=1
pytest_args=()
# The protocol version Hark implements (WyomingEvent.protocolVersion), the benchmark tool, the test runner.
pip_packages=("wyoming==1.10.2" "wyoming-bench==2026.10.0" "pytest")

die() { echo "wyoming-test: $*" >&2; exit 1; }

while (($#)); do
    case "$1" in
        --no-install) install=0; shift ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; pytest_args=("$@"); break ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

# --- what the tests need: flite and python3-venv from Debian (scripts/setup.sh's list), wyoming and pytest from PyPI
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3) || die "no python3"
if ((install)); then
    missing=()
    command -v flite >/dev/null || missing+=(flite)
    "$python" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
    if ((${#missing[@]})); then
        echo "wyoming-test: installing ${missing[*]} (scripts/setup.sh)" >&2
        bash scripts/setup.sh </dev/null
    fi
    if ! "$venv/bin/python" -c 'import wyoming, wyoming_bench, pytest' 2>/dev/null \
        || [[ $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("wyoming"))') != 1.10.2 ]]; then
        echo "wyoming-test: preparing $venv (${pip_packages[*]})" >&2
        "$python" -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check "${pip_packages[@]}"
    fi
fi
command -v flite >/dev/null || die "no flite (apt-get install flite, or run without --no-install)"
[[ -x $venv/bin/python ]] || die "no $venv (run without --no-install)"
hark=${HARK:-.build/debug/hark}
[[ -x $hark ]] || die "no $hark: build it first (swift build)"
hark=$(realpath "$hark")
python=$(pwd)/$venv/bin/python

cd tests/wyoming
HARK=$hark exec "$python" -m pytest -q -p no:cacheprovider "${pytest_args[@]}"
