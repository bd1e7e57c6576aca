#!/usr/bin/env bash
# Create the Python virtualenvs for the benchmark peers (bench/speed.sh). pip only; never part of make test.
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

rm -f bench/.venv-hassil.failed bench/.venv-rhasspy.failed
make_venv bench/.venv-hassil hassil 'hassil>=3,<4'
make_venv bench/.venv-rhasspy rhasspynlu 'rhasspy-nlu==0.4.0' 'numpy<1.24'
exit $status
