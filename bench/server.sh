#!/usr/bin/env bash
# The companion server's benchmark (bench/README.md, "server.sh"): Watson /message throughput and latency
# under 50 keep-alive clients next to hassil behind aiohttp, hark run's memory with 20 simulated browsers,
# and push-to-talk latency; about 3 minutes on 2 cores. Needs the release binary (swift build -c release).
# Installs what it lacks: wrk and flite (apt), bench/.venv-server with hassil and aiohttp (pip).
# Options go to bench/server.py (--duration, --warmup, --connections, --browsers, --turns, --keep).
set -euo pipefail
cd "$(dirname "$0")/.."

HARK=${HARK:-.build/release/hark}
if [ ! -x "$HARK" ]; then
    echo "server.sh: $HARK is missing: run swift build -c release first" >&2
    exit 66
fi

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v flite >/dev/null || need_apt+=(flite)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "server.sh: apt-get install ${need_apt[*]}" >&2
    apt-get -o DPkg::Lock::Timeout=600 install -y "${need_apt[@]}" >&2 \
        || { apt-get -o DPkg::Lock::Timeout=600 update >&2 && apt-get -o DPkg::Lock::Timeout=600 install -y "${need_apt[@]}" >&2; }
fi

# Its own venv: the peer server and the simulated browsers both need aiohttp, which the other peers' venvs lack.
VENV=bench/.venv-server
if ! "$VENV/bin/python" -c 'import hassil, aiohttp' 2>/dev/null; then
    echo "server.sh: creating $VENV: pip install hassil>=3,<4 aiohttp" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'hassil>=3,<4' 'aiohttp>=3.9,<4' >&2
fi

HARK=$(realpath "$HARK") exec "$VENV/bin/python" bench/server.py "$@"
