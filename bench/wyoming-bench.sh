#!/usr/bin/env bash
# wyoming-bench (PyPI, the third-party Wyoming benchmark tool) against `hark wyoming`, on a full corpus: every
# example sentence of Intents/home.json spoken by three flite voices (rms, awb, kal16), for speech to text in
# both of its paths (non-streaming and streaming), and its own texts for text to speech. `make wyoming-test`
# runs the same tool on five commands; this is the whole set. Report: bench/out/wyoming-bench/{stt,tts}.txt.
# usage: bash bench/wyoming-bench.sh [ROUNDS]   (default 2; needs a release build and scripts/wyoming-test.sh's venv)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
venv=.build/wyoming-venv
[ -x "$venv/bin/wyoming-bench" ] || { echo "wyoming-bench: run scripts/wyoming-test.sh first (it makes $venv)" >&2; exit 1; }
hark=${HARK:-.build/release/hark}
[ -x "$hark" ] || { echo "wyoming-bench: no $hark; run swift build -c release" >&2; exit 1; }
out=bench/out/wyoming-bench
corpus=$out/corpus
mkdir -p "$corpus"
# The corpus: home.json's examples, lower-cased words only (what a transcript has), one clip per voice.
python3 - "$corpus" <<'PY'
import json, os, re, subprocess, sys
corpus = sys.argv[1]
ws = json.load(open("Intents/home.json", encoding="utf-8"))
texts = sorted({" ".join(re.sub(r"[^a-z' ]", " ", e["text"].lower()).split()) for i in ws["intents"] for e in i["examples"]})
n = 0
for k, text in enumerate(texts):
    if not text:
        continue
    for voice in ("rms", "awb", "kal16"):
        stem = os.path.join(corpus, f"home_{k:03d}_{voice}")
        if not os.path.exists(stem + ".wav"):
            subprocess.run(["flite", "-voice", voice, "-t", text, "-o", stem + ".wav"], check=True)
        open(stem + ".txt", "w").write(text + "\n")
        n += 1
print(f"wyoming-bench: corpus of {n} clips ({len(texts)} sentences x 3 voices) in {corpus}", file=sys.stderr)
PY
data=$(mktemp -d)
"$hark" wyoming --simulate --data "$data" --uri tcp://127.0.0.1:0 --print-port > "$out/port" 2> "$out/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.2; done
port=$(head -1 "$out/port" | grep -o '[0-9]*$')
[ -n "$port" ] || { echo "wyoming-bench: hark wyoming did not start: $(cat "$out/server.log")" >&2; exit 1; }
"$venv/bin/wyoming-bench" stt "127.0.0.1:$port" --corpus "$corpus" --rounds "$rounds" | tee "$out/stt.txt"
"$venv/bin/wyoming-bench" tts "127.0.0.1:$port" --rounds "$rounds" | tee "$out/tts.txt"
