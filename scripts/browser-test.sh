#!/usr/bin/env bash
# The companion page's browser test: headless Chromium (Debian's) driven by Playwright (PyPI), a fake
# microphone playing a WAV of "take a picture", against a running Hark server. See docs/web.md.
#
#   scripts/browser-test.sh                      # starts the real server (default --server-cmd) and tests it
#   scripts/browser-test.sh --mock               # the same test against tests/browser/mock_server.py
#   scripts/browser-test.sh --base-url URL --pair-cmd CMD   # a server that is already running
#
# Options:
#   --server-cmd CMD   how to start the server; it must print its port (alone on a line) or its URL on stdout.
#                      {data} is replaced by a fresh data directory. Default:
#                      .build/debug/hark serve --simulate --port 0 --print-port --data {data}
#   --base-url URL     test a server that is already running (no server is started)
#   --pair-cmd CMD     prints a fresh six-digit pairing code; {data} as above. Default: .build/debug/hark pair --data {data}
#   --mock             --server-cmd and --pair-cmd for the mock server (pairing code 123456)
#   --speech-wav FILE  the microphone's recording (default: "take a picture" from flite, else hark say or espeak-ng)
#   --no-install       do not install anything (chromium, the venv) even if missing
#   -- ARGS            passed to pytest (e.g. -- -k phone -x)
# Screenshots and logs go to .build/browser-artifacts/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)

venv=.build/browser-venv
artifacts=.build/browser-artifacts
server_cmd='.build/debug/hark serve --simulate --port 0 --print-port --data {data}'
pair_cmd='.build/debug/hark pair --data {data}'
base_url=''
speech_wav=''
install=1
pytest_args=()

die() { echo "browser-test: $*" >&2; exit 1; }

while (($#)); do
    case "$1" in
        --server-cmd) (($# >= 2)) || die "--server-cmd needs a command"; server_cmd=$2; shift 2 ;;
        --base-url) (($# >= 2)) || die "--base-url needs a URL"; base_url=${2%/}; shift 2 ;;
        --pair-cmd) (($# >= 2)) || die "--pair-cmd needs a command"; pair_cmd=$2; shift 2 ;;
        --speech-wav) (($# >= 2)) || die "--speech-wav needs a file"; speech_wav=$2; shift 2 ;;
        --mock)
            server_cmd="$venv/bin/python tests/browser/mock_server.py --port 0 --print-port --save-audio $artifacts/heard"
            pair_cmd='echo 123456'
            export HARK_MOCK=1  # tests of what only the real server has (rooms) skip themselves
            shift ;;
        --no-install) install=0; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; pytest_args=("$@"); break ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

mkdir -p "$artifacts"
rm -rf "$artifacts"/*.png "$artifacts/heard"

# --- what the test needs: Chromium and python3-venv from Debian, Playwright and pytest from PyPI ----------
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3) || die "no python3"
if ((install)); then
    missing=()
    [[ -x /usr/bin/chromium ]] || missing+=(chromium)
    "$python" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
    if ((${#missing[@]})); then
        echo "browser-test: installing ${missing[*]}" >&2
        apt-get update -qq
        apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
    fi
    if ! "$venv/bin/python" -c 'import playwright, pytest, aiohttp, openapi_spec_validator' 2>/dev/null; then
        echo "browser-test: preparing $venv (playwright, pytest, aiohttp, openapi-spec-validator)" >&2
        "$python" -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check playwright pytest aiohttp openapi-spec-validator
    fi
fi
[[ -x /usr/bin/chromium ]] || die "no /usr/bin/chromium (apt-get install chromium)"
[[ -x $venv/bin/python ]] || die "no $venv (run without --no-install)"

# --- the microphone's recording: "take a picture" with silence around it --------------------------------
if [[ -z $speech_wav ]]; then
    speech_wav=$artifacts/take-a-picture.wav
    raw=$artifacts/take-a-picture.raw.wav
    # flite first: eSpeak NG's "take a picture" decodes right but with an acoustic confidence under the
    # threshold (docs/speech.md), so the appliance would rightly answer "Sorry, I didn't catch that".
    if command -v flite >/dev/null; then
        flite -voice slt -t "take a picture" -o "$raw"; voice='flite (slt)'
    elif [[ -x .build/debug/hark ]] && .build/debug/hark say --output "$raw" take a picture 2>/dev/null; then
        voice='hark say'
    elif command -v espeak-ng >/dev/null; then
        espeak-ng -v en-us -w "$raw" "take a picture"; voice=espeak-ng
    else
        die "nothing to say \"take a picture\" with: build hark, or install espeak-ng or flite, or pass --speech-wav"
    fi
    # Chromium starts the file when the microphone opens; the page needs a moment to connect its capture.
    "$venv/bin/python" - "$raw" "$speech_wav" <<'EOF'
import sys, wave
with wave.open(sys.argv[1], "rb") as clip:
    params, frames = clip.getparams(), clip.readframes(clip.getnframes())
silence = lambda seconds: b"\0" * (int(params.framerate * seconds) * params.sampwidth * params.nchannels)
with wave.open(sys.argv[2], "wb") as out:
    out.setparams(params)
    out.writeframes(silence(0.6) + frames + silence(0.4))
EOF
    echo "browser-test: microphone clip from $voice: $speech_wav" >&2
fi
[[ -f $speech_wav ]] || die "no such file: $speech_wav"
speech_wav=$(realpath "$speech_wav")

# --- the server ---------------------------------------------------------------------------------------
data=$(mktemp -d /tmp/hark-browser-data.XXXXXX)
server_pid=''
cleanup() {
    if [[ -n $server_pid ]]; then
        kill -TERM -- "-$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$data"
}
trap cleanup EXIT
pair_cmd=${pair_cmd//\{data\}/$data}

if [[ -z $base_url ]]; then
    if [[ $server_cmd == .build/debug/hark* && ! -x .build/debug/hark ]]; then
        die "no .build/debug/hark: build it (swift build --product hark), or pass --mock or --server-cmd"
    fi
    command=${server_cmd//\{data\}/$data}
    echo "browser-test: starting: $command" >&2
    # Its own process group, so the cleanup ends the server and anything it started, and nothing else.
    setsid bash -c "exec $command" >"$artifacts/server.out" 2>"$artifacts/server.log" &
    server_pid=$!
    for _ in $(seq 1 600); do
        kill -0 "$server_pid" 2>/dev/null || { cat "$artifacts/server.log" >&2; die "the server exited before printing its port"; }
        line=$(grep -m1 -E '^[0-9]+$|https?://' "$artifacts/server.out" || true)
        if [[ $line =~ ^[0-9]+$ ]]; then base_url=http://127.0.0.1:$line; break; fi
        if [[ $line =~ (https?://[^[:space:]]+) ]]; then base_url=${BASH_REMATCH[1]%/}; break; fi
        sleep 0.1
    done
    [[ -n $base_url ]] || die "the server printed no port or URL within 60 s (see $artifacts/server.log)"
fi

"$venv/bin/python" - "$base_url" <<'EOF' || die "$base_url/ does not answer"
import ssl, sys, time, urllib.request
context = ssl._create_unverified_context()  # a LAN appliance's certificate is self-signed
for _ in range(100):
    try:
        with urllib.request.urlopen(sys.argv[1] + "/", timeout=2, context=context) as page:
            if page.status == 200:
                sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
EOF
echo "browser-test: testing $base_url" >&2

HARK_BASE_URL=$base_url HARK_PAIR_CMD=$pair_cmd HARK_SPEECH_WAV=$speech_wav \
HARK_ARTIFACTS=$repo/$artifacts HARK_CHROMIUM=/usr/bin/chromium \
    "$venv/bin/python" -m pytest -p no:cacheprovider tests/browser -v "${pytest_args[@]}"
