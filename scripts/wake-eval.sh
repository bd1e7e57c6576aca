#!/usr/bin/env bash
# The wake-phrase measurement behind docs/wake-phrase.md (about 30 minutes on 2 cores):
#  1. dev half: every candidate phrase, keyphrase threshold loose (1e-40) and every hit kept with its
#     second-pass margin, so score.py can sweep both thresholds (choosing the phrase and thresholds);
#  2. test half (other voices, other sentences, the benchmark's test half, LibriVox): Models/wake.json
#     exactly as shipped (with Models/wake-verifier.json when it names it), the figures reported;
#  3. both halves' voices again with the phrase run straight into the command, no pause (make_eval.py --run-on),
#     with the shipped settings.
# The verifier's own training and the choice of its thresholds: scripts/wake/make-verifier.sh and
# docs/wake-phrase.md, "The verifier".
# Audio and results go to bench/out/wake (WAKE_EVAL_OUT to change); the tables to bench/out/wake/report.md.
# Needs flite, espeak-ng, sox, python3 with numpy (make setup / make bench-setup) and ../shared/benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${WAKE_EVAL_OUT:-$root/bench/out/wake}
swift=${SWIFT:-swift}

benchmarks=""
dir=$root
while [ "$dir" != "/" ]; do
  if [ -d "$dir/shared/benchmarks" ]; then benchmarks=$dir/shared/benchmarks; break; fi
  dir=$(dirname "$dir")
done
if [ -z "$benchmarks" ]; then echo "wake-eval: no shared/benchmarks in any folder above $root" >&2; exit 66; fi
for tool in flite espeak-ng sox python3; do
  command -v "$tool" >/dev/null || { echo "wake-eval: $tool is not installed (make setup)" >&2; exit 69; }
done
python3 -c 'import numpy' 2>/dev/null || { echo "wake-eval: python3 lacks numpy (pip install numpy)" >&2; exit 69; }

shipped=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps({k: v for k, v in s.items() if not k.startswith("_")}))' Models/wake.json)
phrase=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("phrase", "hey hark"))' "$shipped")
candidates=("hey hark" "okay hark" "hark" "hello hark")

mkdir -p "$out"
echo "wake-eval: making audio in $out (benchmarks: $benchmarks)" >&2
args=()
for p in "${candidates[@]}"; do args+=(--phrase "$p"); done
python3 scripts/wake/make_eval.py "$out/dev" --benchmarks "$benchmarks" --half dev "${args[@]}"
python3 scripts/wake/make_eval.py "$out/test" --benchmarks "$benchmarks" --half test --phrase "$phrase"
for half in dev test; do
  python3 scripts/wake/make_eval.py "$out/$half-runon" --benchmarks "$benchmarks" --half "$half" --phrase "$phrase" --run-on
  python3 scripts/wake/manifest.py "$out/$half-runon/truth.json" "$out/$half-runon/manifest.json" "$out/$half-runon/results.jsonl" \
    --run "$half-runon shipped" "$half" "$shipped"
done

runs=()
for p in "${candidates[@]}"; do
  runs+=(--run "dev $p" dev "{\"phrase\": \"$p\", \"kws_threshold\": 1e-40, \"confirmation_threshold\": -20}")
done
python3 scripts/wake/manifest.py "$out/dev/truth.json" "$out/dev/manifest.json" "$out/dev/results.jsonl" "${runs[@]}" \
  --run "dev shipped" dev "$shipped"
python3 scripts/wake/manifest.py "$out/test/truth.json" "$out/test/manifest.json" "$out/test/results.jsonl" \
  --run "test shipped" test "$shipped"

$swift build -Xswiftc -warnings-as-errors --build-tests >&2
for half in dev test dev-runon test-runon; do
  echo "wake-eval: decoding the $half streams" >&2
  HARK_WAKE_EVAL="$out/$half/manifest.json" $swift test --skip-build --filter WakeEvaluation >&2
done

# The shipped keyphrase threshold (log10), confirmation threshold and duration weight, WakeSettings' defaults when absent.
read -r kws margin weight < <(python3 -c 'import json,math,sys; s=json.loads(sys.argv[1]); print(math.log10(s.get("kws_threshold", 1e-40)), s.get("confirmation_threshold", 7.5), s.get("confirmation_duration_weight", 20))' "$shipped")
# With a verifier (`verifier` set), a hit must also reach its probability (score.py --verifier).
verifier=$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print("--verifier %s" % s.get("verifier_threshold", 0.5) if s.get("verifier") else "")' "$shipped")
{
  echo "# Wake-phrase evaluation ($(date -u +%Y-%m-%d), shipped settings: $shipped)"
  for p in "${candidates[@]}"; do
    echo; echo "## dev, \"$p\", both thresholds swept"; echo
    python3 scripts/wake/score.py "$out/dev/truth.json" "$out/dev/results.jsonl" --run "dev $p" \
      --kws -20 -25 -30 -35 -40 --margin -4 -3 -2.5 -2 --measure word_margin
    echo; echo "## dev, \"$p\", with the duration term (confirmation_duration_weight $weight)"; echo
    python3 scripts/wake/score.py "$out/dev/truth.json" "$out/dev/results.jsonl" --run "dev $p" \
      --kws -30 -35 -40 --margin 5 6 6.5 7 7.5 8 9 --measure word_margin --duration-weight "$weight"
  done
  for half in dev test dev-runon test-runon; do
    echo; echo "## $half, Models/wake.json as shipped"; echo
    python3 scripts/wake/score.py "$out/$half/truth.json" "$out/$half/results.jsonl" --run "$half shipped" \
      --kws "$kws" --margin "$margin" --at "$kws" "$margin" --false --measure word_margin --duration-weight "$weight" $verifier
  done
} > "$out/report.md"
echo "wake-eval: report in $out/report.md" >&2
