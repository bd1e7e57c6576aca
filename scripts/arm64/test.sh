#!/usr/bin/env bash
# The proof that the arm64 `hark` (scripts/arm64/build.sh) works: run under qemu-user (qemu-aarch64-static, the
# arm64 sysroot as its library prefix: no binfmt and no arm64 root needed), next to this machine's x86 `hark` on
# the same inputs, it must
#   1. start and print its usage,
#   2. parse a sentence exactly as the x86 build does (`hark parse --json`),
#   3. recognise a recorded WAV (flite's voice, not the synthesiser's) through PocketSphinx to the same
#      transcript, intents and acceptance,
#   4. speak with eSpeak NG into a WAV that it then recognises as what it said,
#   5. run the appliance loop headless on a three-command recording (`hark run --simulate --input … --fast
#      --events`) with the same events as x86 (scripts/arm64/compare-events.py; not the times).
# Any difference fails. Writes into .build/arm64/test (made afresh each run). HARK_X86 names the x86 binary
# (default .build/release/hark), HARK_ARM64 the arm64 one (default .build/arm64/hark).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${ARM64_DIR:-$REPO/.build/arm64}
SYSROOT=$OUT/sysroot
X86=${HARK_X86:-$REPO/.build/release/hark}
ARM=${HARK_ARM64:-$OUT/hark}
WORK=$OUT/test

say() { echo "arm64-test: $*" >&2; }
die() { echo "arm64-test: FAIL: $*" >&2; exit 1; }

command -v qemu-aarch64-static >/dev/null || die "no qemu-aarch64-static: run scripts/setup.sh (qemu-user-static)"
command -v flite >/dev/null || die "no flite: run scripts/setup.sh"
[ -f "$SYSROOT/.hark-sysroot" ] || die "no arm64 sysroot at $SYSROOT: run scripts/arm64/sysroot.sh (or make arm64)"
[ -x "$ARM" ] || die "no arm64 hark at $ARM: run scripts/arm64/build.sh (or make arm64)"
[ -x "$X86" ] || die "no x86 hark at $X86: swift build -c release (or set HARK_X86)"
[ "$(LC_ALL=C readelf -h "$ARM" | sed -n 's/^ *Machine: *//p')" = AArch64 ] || die "$ARM is not an AArch64 executable"

# Resource files (Intents/, Models/) are found from the working directory: run both from the repository.
cd "$REPO"
arm() { qemu-aarch64-static -L "$SYSROOT" "$ARM" "$@"; }
x86() { "$X86" "$@"; }
# Milliseconds since $1 (a `date +%s%N`).
since() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }

rm -rf --one-file-system "$WORK"
mkdir -p "$WORK"

# The recordings: flite's slt voice, 16 kHz mono, 1.5 s of silence around each sentence.
python3 - "$WORK" <<'EOF'
import subprocess, sys, wave
work = sys.argv[1]
sentences = ["turn on the light", "take a picture", "turn off the light"]
rate, gap = 16000, b"\0\0" * 24000
stream = gap
for i, s in enumerate(sentences):
    part = f"{work}/part{i}.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", s, "-o", part], check=True)
    with wave.open(part) as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (rate, 1, 2):
            sys.exit(f"flite wrote {part} at {w.getframerate()} Hz, {w.getnchannels()} ch, {8 * w.getsampwidth()} bit")
        stream += w.readframes(w.getnframes()) + gap
with wave.open(f"{work}/input.wav", "wb") as o:
    o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate); o.writeframes(stream)
EOF

# 1. It starts.
arm --help >"$WORK/help.txt" 2>&1 || die "hark --help exited $? under qemu: $(head -n 3 "$WORK/help.txt")"
grep -q '^USAGE: hark <command>' "$WORK/help.txt" || die "hark --help printed no usage: $(head -n 3 "$WORK/help.txt")"
say "1/5 starts: hark --help under qemu prints the usage ($(wc -l <"$WORK/help.txt") lines)"

# 2. The language engine.
sentence="could you switch the lamp on at 7 pm"
x86 parse --json "$sentence" >"$WORK/parse.x86.json" 2>"$WORK/parse.x86.err"
t0=$(date +%s%N)
arm parse --json "$sentence" >"$WORK/parse.arm64.json" 2>"$WORK/parse.err" || die "hark parse failed under qemu: $(cat "$WORK/parse.err")"
ms=$(since "$t0")
cmp -s "$WORK/parse.x86.json" "$WORK/parse.arm64.json" \
    || die "hark parse differs: $(diff "$WORK/parse.x86.json" "$WORK/parse.arm64.json" | head -n 10)"
say "2/5 parse: the same JSON as x86 ($(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("#" + d["intents"][0]["intent"], ", ".join("@%s:%s" % (e["entity"], e["value"]) for e in d["entities"]))' "$WORK/parse.arm64.json"); ${ms} ms under qemu)"

# 3. Recognition of a recording through PocketSphinx.
x86 recognize --json "$WORK/part0.wav" >"$WORK/recognize.x86.json" 2>"$WORK/recognize.x86.err"
arm recognize --json "$WORK/part0.wav" >"$WORK/recognize.arm64.json" 2>"$WORK/recognize.err" \
    || die "hark recognize failed under qemu: $(cat "$WORK/recognize.err")"
python3 - "$WORK/recognize.x86.json" "$WORK/recognize.arm64.json" <<'EOF' || die "hark recognize differs from x86"
import json, sys
x86, arm = (json.load(open(p)) for p in sys.argv[1:])
def key(r): return (r["transcript"], r["accepted"], [i["intent"] for i in r["intents"]], [(e["entity"], e["value"]) for e in r["entities"]])
if key(x86) != key(arm):
    sys.exit(f"  x86:   {key(x86)}\n  arm64: {key(arm)}")
if abs(x86["acoustic_confidence"] - arm["acoustic_confidence"]) > 0.01:
    sys.exit(f"  acoustic confidence {x86['acoustic_confidence']} (x86) != {arm['acoustic_confidence']} (arm64)")
if arm["transcript"] != "turn on the light" or not arm["accepted"]:
    sys.exit(f"  heard {arm['transcript']!r}, accepted {arm['accepted']}, for 'turn on the light'")
print(f"arm64-test: 3/5 recognize: {arm['transcript']!r}, #{arm['intents'][0]['intent']}, acoustic confidence "
      f"{arm['acoustic_confidence']} (x86 {x86['acoustic_confidence']}), as on x86; decode {arm['decode_ms']} ms "
      f"under qemu, {x86['decode_ms']} ms on x86, for {arm['audio_seconds']} s of audio", file=sys.stderr)
EOF

# 4. Synthesis: what it says, it hears.
arm say --output "$WORK/say.arm64.wav" "turn on the light" 2>"$WORK/say.err" || die "hark say failed under qemu: $(cat "$WORK/say.err")"
x86 say --output "$WORK/say.x86.wav" "turn on the light" 2>"$WORK/say.x86.err"
arm recognize --json "$WORK/say.arm64.wav" >"$WORK/say-heard.json" 2>>"$WORK/say.err" || die "hark recognize of its own speech failed: $(cat "$WORK/say.err")"
python3 - "$WORK/say-heard.json" "$WORK/say.x86.wav" "$WORK/say.arm64.wav" <<'EOF' || die "hark say's WAV is not what it was asked to say"
import json, sys, wave
heard = json.load(open(sys.argv[1]))
lengths = []
for p in sys.argv[2:]:
    with wave.open(p) as w:
        lengths.append(w.getnframes() / w.getframerate())
if heard["transcript"] != "turn on the light":
    sys.exit(f"  the arm64 build said 'turn on the light' and heard {heard['transcript']!r}")
same = open(sys.argv[2], "rb").read() == open(sys.argv[3], "rb").read()
print(f"arm64-test: 4/5 say: {lengths[1]:.2f} s of eSpeak NG speech (x86 {lengths[0]:.2f} s, "
      f"{'byte for byte the same' if same else 'not byte-identical'}), recognised as {heard['transcript']!r}", file=sys.stderr)
EOF

# 5. The appliance loop, headless.
run_args=(run --simulate --no-server --input "$WORK/input.wav" --fast --events --seed 1)
x86 "${run_args[@]}" --data "$WORK/data.x86" >"$WORK/events.x86.jsonl" 2>"$WORK/run.x86.err" \
    || die "x86 hark run failed: $(tail -n 3 "$WORK/run.x86.err")"
t0=$(date +%s%N)
arm "${run_args[@]}" --data "$WORK/data.arm64" >"$WORK/events.arm64.jsonl" 2>"$WORK/run.arm64.err" \
    || die "hark run failed under qemu: $(tail -n 3 "$WORK/run.arm64.err")"
ms=$(since "$t0")
python3 "$REPO/scripts/arm64/compare-events.py" "$WORK/events.x86.jsonl" "$WORK/events.arm64.jsonl" >&2 \
    || die "hark run's events differ between x86 and arm64 ($WORK/events.*.jsonl)"
replies=$(python3 -c 'import json,sys; print(" | ".join(e["text"] for e in map(json.loads, open(sys.argv[1])) if e["kind"] == "reply"))' "$WORK/events.arm64.jsonl")
[ "$replies" = "Light is on | Picture taken | Light is off" ] || die "hark run replied '$replies'"
say "5/5 run: replies $replies; ${ms} ms under qemu"
say "PASS: the arm64 hark ($(stat -c %s "$ARM") bytes) parses, recognises, speaks and runs the appliance loop as x86 does"
