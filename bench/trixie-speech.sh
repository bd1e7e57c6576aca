#!/usr/bin/env bash
# Does Hark built on Debian 13 hear what Hark built on Debian 12 hears? Trixie ships the same PocketSphinx
# upstream version (5prealpha; docs/debian13.md) but other Debian revisions of sphinxbase (1-21+b1 against 1-16),
# eSpeak NG 1.52 (its letter-to-sound rules pronounce words the dictionaries lack) and another compiler. This
# decodes the first N test-half clips of the speech-to-intent benchmark, clean and at 6 dB (the mixes
# bench/speech.sh made, seed 20240601), with barista.json, once with this host's build and once with the trixie
# build inside the trixie root, and compares every transcript, margin and accept decision.
# usage: bash bench/trixie-speech.sh [N]      (N default 100; needs root, the trixie root and both builds:
#        HOST_HARK (default .build/release/hark), TRIXIE_HARK (default .build/deb/bin/hark-trixie-amd64))
# writes: bench/out/trixie-speech/{bookworm,trixie}-{clean,6db}.jsonl; prints the comparison
set -euo pipefail
source "$(dirname "$0")/../scripts/trixie/lib.sh"
N=${1:-100}
HOST_HARK=${HOST_HARK:-$REPO/.build/release/hark}
TRIXIE_HARK=${TRIXIE_HARK:-$REPO/.build/deb/bin/hark-trixie-amd64}
MIX=$REPO/bench/out/speech/mix/seed-20240601
OUT=$REPO/bench/out/trixie-speech
[ -x "$HOST_HARK" ] || die "no host build at $HOST_HARK (make release)"
[ -x "$TRIXIE_HARK" ] || die "no trixie build at $TRIXIE_HARK (make deb)"
[ -d "$ROOT/usr/lib" ] || die "no trixie root at $ROOT (make trixie-test)"
[ -f "$REPO/Intents/barista.json" ] || die "no Intents/barista.json (make intents)"
for c in clean 6db; do [ -d "$MIX/$c" ] || die "no $MIX/$c: run bash bench/speech.sh first (it makes the mixes)"; done
mkdir -p "$OUT"

# The repository, read-only, at /src-speech in the root (the mixes under it), the trixie binary in the root.
mkdir -p "$ROOT/src-speech"
enter_mounts
mount --bind "$REPO" "$ROOT/src-speech"; MOUNTED+=("$ROOT/src-speech")
mount -o remount,bind,ro "$ROOT/src-speech"
install -m 755 "$TRIXIE_HARK" "$ROOT/usr/local/bin/hark-speech"

for c in clean 6db; do
    # The test half: names starting 8-f (bench/speechlib.py's in_half), in name order.
    mapfile -t names < <(cd "$MIX/$c" && ls | grep -E '^[89a-f].*\.wav$' | sort | head -n "$N")
    say "$c: ${#names[@]} clips, Debian 12 build and Debian 13 build side by side"
    (cd "$MIX/$c" && "$HOST_HARK" recognize --workspace "$REPO/Intents/barista.json" --json "${names[@]}" >"$OUT/bookworm-$c.jsonl") &
    # sh -c: the directory is $0, the clip names are "$@".
    (chroot "$ROOT" sh -c 'cd "$0" && exec hark-speech recognize --workspace /src-speech/Intents/barista.json --json "$@"' \
        "/src-speech/bench/out/speech/mix/seed-20240601/$c" "${names[@]}" >"$OUT/trixie-$c.jsonl") &
    wait
done

python3 - "$OUT" <<'EOF'
import json, os, sys
out = sys.argv[1]
for c in ("clean", "6db"):
    a = {json.loads(l)["file"]: json.loads(l) for l in open(os.path.join(out, f"bookworm-{c}.jsonl"))}
    b = {json.loads(l)["file"]: json.loads(l) for l in open(os.path.join(out, f"trixie-{c}.jsonl"))}
    same_text = sum(1 for f in a if f in b and a[f]["transcript"] == b[f]["transcript"])
    same_accept = sum(1 for f in a if f in b and a[f]["accepted"] == b[f]["accepted"])
    margins = [abs(a[f].get("acoustic_margin", 0) - b[f].get("acoustic_margin", 0)) for f in a if f in b]
    differ = [(f, a[f]["transcript"], b[f]["transcript"]) for f in a if f in b and a[f]["transcript"] != b[f]["transcript"]]
    print(f"{c}: {len(a)} clips (Debian 12) / {len(b)} (Debian 13); same transcript {same_text}, same decision {same_accept}, "
          f"largest margin difference {max(margins) if margins else 0:.4f}; accepted {sum(r['accepted'] for r in a.values())} / {sum(r['accepted'] for r in b.values())}")
    for d in differ[:5]:
        print("   differs:", d)
EOF
