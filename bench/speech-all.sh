#!/usr/bin/env bash
# Every speech figure of issue 16 in one run (`make bench-speech-all`; about 2.5 hours on 2 cores), each step's
# table gathered into bench/out/speech-all/report.md under the item it answers (generated here and not kept in git;
# bench/README.md, "The first whole run, 2026-12-06", keeps one run's figures with the targets they answer):
#   1. bench/speech.sh: the speech-to-intent benchmark, dev and test halves, all SNRs, Hark beside PocketSphinx
#      5.1.1, and the clean out-of-domain false acceptance (items 1 and 2, whole files);
#   2. bench/speech_endpointed.py: orders and the reported out-of-domain sentences (flite kal, eSpeak NG en-us)
#      through the endpointer's cut, clean, 12 and 6 dB (items 2 and 5);
#   3. bench/speech_ood_noise.py: the out-of-domain sentences in kitchen noise as whole files (item 2);
#   4. bench/speech_latency.py: result delay after the endpoint and real-time factor, clean, 12 and 6 dB (item 3);
#   5. scripts/wake-eval.sh: the wake phrase on the wake benchmark's halves (item 4).
# A step that fails is named in the report and the run goes on; the exit status is 1 if any failed.
# --quick: a smoke run of the same steps on a few clips (dev half at 6 dB, 3 latency clips, no wake step), to
# check the plumbing, not to quote.
# Needs: swift build -c release; bash scripts/setup-bench.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    *) echo "speech-all: unknown argument '$arg' (only --quick)" >&2; exit 64 ;;
  esac
done
out=bench/out/speech-all
mkdir -p "$out"
report=$out/report.md
status=0
{
  echo "# Issue 16, every speech figure in one run"
  echo
  echo "Started $(date -u '+%Y-%m-%d %H:%M UTC') at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
       "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores$([ $quick = 1 ] && echo ', QUICK (smoke run: not for quoting)')."
} > "$report"

# step TITLE COMMAND...: runs COMMAND, its standard output (the tables) into the report, its log to the console.
step() {
  local title=$1; shift
  echo "speech-all: $title: $*" >&2
  { echo; echo "## $title"; echo; echo "\`$*\`"; echo; } >> "$report"
  local started=$SECONDS
  "$@" > "$out/step.out"
  local rc=$?
  cat "$out/step.out" >> "$report"
  if [ $rc != 0 ]; then
    status=1
    echo "**Failed** (exit status $rc): see the console log." >> "$report"
  fi
  { echo; echo "($((SECONDS - started)) s)"; } >> "$report"
}

if [ $quick = 1 ]; then
  step "Items 1 and 2: speech to intent, whole files" python3 bench/speech.py --half dev --snr 6 --ood-voices kal
  step "Items 2 and 5: through the endpointer" python3 bench/speech_endpointed.py --snr 6 --pre 0.3 --check 3 --ood kal --no-whole
  step "Item 2: out-of-domain speech in kitchen noise, whole files" python3 bench/speech_ood_noise.py --snr 6 --modes on
  step "Item 3: result delay and real-time factor" python3 bench/speech_latency.py --clips 3 --snr 6 --modes silence
else
  step "Items 1 and 2: speech to intent, whole files" bash bench/speech.sh
  step "Items 2 and 5: through the endpointer" python3 bench/speech_endpointed.py --snr clean 12 6 --pre 0.3 --ood kal,en-us
  step "Item 2: out-of-domain speech in kitchen noise, whole files" python3 bench/speech_ood_noise.py --snr 6 12 --modes on
  step "Item 3: result delay and real-time factor" python3 bench/speech_latency.py --clips 30 --snr clean 12 6 --modes silence
  # wake-eval.sh writes its tables to a file, not to standard output: its report is taken only when this run made
  # it, so a failed step cannot bring in an earlier run's tables.
  step "Item 4: the wake phrase" bash -c 'bash scripts/wake-eval.sh && cat "${WAKE_EVAL_OUT:-bench/out/wake}/report.md"'
fi
rm -f "$out/step.out"
echo "speech-all: wrote $report" >&2
exit $status
