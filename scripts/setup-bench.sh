#!/usr/bin/env bash
# Create the Python virtualenvs for the benchmark peers (bench/speed.sh, bench/speech.sh) and install the
# Debian tools the speech benchmark needs (sox to read FLAC and resample, flite and espeak-ng to synthesise the
# out-of-domain set, python3-numpy for the upstream mixer, python3-scipy for the filters of
# bench/speech_endpointed.py's copy of the endpointer) and those bench/aec.py needs to build its WebRTC echo
# canceller runner (g++, pkg-config, libwebrtc-audio-processing-dev). Never part of make test.
# Idempotent: a venv whose peer already imports is left alone. Each peer gets its own venv because
# rhasspy-nlu needs numpy<1.24 (its networkx uses numpy aliases removed in 1.24).
# A peer that fails to install is reported, not fatal: bench/speed.sh records it as unavailable.
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
status=0

# make_venv DIR IMPORT PIP_ARGS...
make_venv() {
    local dir=$1 module=$2; shift 2
    if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import $module" 2>/dev/null; then
        echo "setup-bench: $dir ready ($module)"
        return 0
    fi
    echo "setup-bench: creating $dir: pip install $*"
    rm -rf "$dir"
    if "$PYTHON" -m venv "$dir" \
        && "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@" \
        && "$dir/bin/python" -c "import $module"; then
        echo "setup-bench: $dir ready ($module)"
    else
        echo "setup-bench: warning: could not install $* into $dir; that peer will be reported as unavailable" >&2
        echo "pip install $* failed on $(date -u +%FT%TZ)" > "$dir.failed"
        status=1
    fi
}

# The speech benchmark's Debian tools; apt may be held by another install, so wait for its lock.
need_apt=()
command -v sox >/dev/null || need_apt+=(sox)
command -v flite >/dev/null || need_apt+=(flite)
command -v espeak-ng >/dev/null || need_apt+=(espeak-ng)
python3 -c 'import numpy' 2>/dev/null || need_apt+=(python3-numpy)
python3 -c 'import scipy.signal' 2>/dev/null || need_apt+=(python3-scipy)
command -v g++ >/dev/null || need_apt+=(g++)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
pkg-config --exists webrtc-audio-processing 2>/dev/null || need_apt+=(libwebrtc-audio-processing-dev)
# Recorded desktop sounds (clicks, a shutter, chimes, spoken channel names) for bench/endpoint_noise.py --sounds.
[ -d /usr/share/sounds/freedesktop/stereo ] || need_apt+=(sound-theme-freedesktop)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup-bench: apt-get install ${need_apt[*]}"
    if ! { apt-get -o DPkg::Lock::Timeout=600 install -y "${need_apt[@]}" \
           || { apt-get -o DPkg::Lock::Timeout=600 update && apt-get -o DPkg::Lock::Timeout=600 install -y "${need_apt[@]}"; }; }; then
        echo "setup-bench: warning: could not install ${need_apt[*]}; bench/speech.sh and bench/aec.py will skip or stop on what needs them" >&2
        status=1
    fi
fi

rm -f bench/.venv-hassil.failed bench/.venv-rhasspy.failed bench/.venv-pocketsphinx.failed
make_venv bench/.venv-hassil hassil 'hassil>=3,<4'
make_venv bench/.venv-rhasspy rhasspynlu 'rhasspy-nlu==0.4.0' 'numpy<1.24'
# The speech peer: plain PocketSphinx from PyPI (its wheel bundles the en-us model), see bench/speech_peer.py.
make_venv bench/.venv-pocketsphinx pocketsphinx 'pocketsphinx==5.1.1'
exit $status
