#!/usr/bin/env bash
# Rebuild Models/wake-verifier.json from nothing but Debian packages and the shared benchmarks' LibriVox-free
# parts (docs/wake-phrase.md, "The verifier"); about 70 minutes on 2 cores, most of it decoding.
#  1. the generated noise bank (scripts/adapt/general_noise.py, seed 11: pink, brown, fan, clatter are used);
#  2. training streams of 240 synthetic voices that the evaluation's test half never uses (make_train.py, five
#     batches: 24 chosen voices with every non-wake sentence, then 48 and 60 drawn at random with 45 each in the
#     bank's noises, then 60 more in babble of five training voices and that babble over clatter and fan, then 48
#     more in all six noises, three in four of their phrases run straight on into the command, with no pause);
#  3. every keyphrase hit on them at 1e-50 with its spectrogram (WakeEvaluation, record_features);
#  4. the networks (train_verifier.py, seed 7, every spectrogram frame), written to $OUT (default Models/wake-verifier.json).
# Work files go to bench/out/wake/train* (WAKE_TRAIN_OUT to change). Needs what scripts/wake-eval.sh needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-Models/wake-verifier.json}
work=${WAKE_TRAIN_OUT:-bench/out/wake}
swift=${SWIFT:-swift}
for tool in flite espeak-ng sox python3; do
  command -v "$tool" >/dev/null || { echo "make-verifier: $tool is not installed (make setup)" >&2; exit 69; }
done

bank=$work/noise-bank
[ -f "$bank/clatter.wav" ] || python3 scripts/adapt/general_noise.py bank "$bank" --seed 11
python3 scripts/wake/make_train.py "$work/train" --bank "$bank" --seed 31
python3 scripts/wake/make_train.py "$work/train2" --bank "$bank" --seed 31 --extra 48 --negatives 45 --only-extra
python3 scripts/wake/make_train.py "$work/train3" --bank "$bank" --seed 32 --extra 60 --negatives 45 --only-extra
python3 scripts/wake/make_train.py "$work/train5" --bank "$bank" --seed 34 --extra 60 --negatives 45 --only-extra --noise babble busy
python3 scripts/wake/make_train.py "$work/train6" --bank "$bank" --seed 35 --extra 48 --negatives 45 --only-extra \
  --noise brown clatter fan pink babble busy --run-on 0.75

$swift build -Xswiftc -warnings-as-errors --build-tests >&2
settings='{"phrase": "hey hark", "kws_threshold": 1e-50, "confirmation_threshold": -20, "confirmation_duration_weight": 20}'
data=()
for set in train train2 train3 train5 train6; do
  python3 scripts/wake/manifest.py "$work/$set/truth.json" "$work/$set/manifest.json" "$work/$set/results.jsonl" \
    --run "$set k50" train "$settings" --features
  # Two processes, half the streams each, then one results file.
  python3 - "$work/$set" <<'EOF'
import json, sys
folder = sys.argv[1]
manifest = json.load(open(f"{folder}/manifest.json"))
streams = manifest["runs"][0]["streams"]
for k in range(2):
    part = json.loads(json.dumps(manifest))
    part["output"] = f"{folder}/results-{k}.jsonl"
    # Streams alternate clean and noisy (one voice each): halve each kind, or one process gets every noisy stream.
    part["runs"][0]["streams"] = [s for i, s in enumerate(streams) if (i // 2) % 2 == k]
    json.dump(part, open(f"{folder}/manifest-{k}.json", "w"), indent=1)
EOF
  pids=()
  for k in 0 1; do
    HARK_WAKE_EVAL="$work/$set/manifest-$k.json" $swift test --skip-build --filter WakeEvaluation >&2 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  cat "$work/$set/results-0.jsonl" "$work/$set/results-1.jsonl" > "$work/$set/results.jsonl"
  data+=(--data "$work/$set/truth.json" "$work/$set/results.jsonl" "$set k50")
done
python3 scripts/wake/train_verifier.py "${data[@]}" --out "$out"
