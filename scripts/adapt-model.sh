#!/usr/bin/env bash
# Adapt PocketSphinx's en-us model to the speech-to-intent benchmark's speakers, microphones and kitchen noise
# (MAP adaptation of the Gaussian means only), from the benchmark's DEV half. Downloads nothing; needs the
# Debian packages sphinxtrain, sphinxbase-utils, pocketsphinx, pocketsphinx-en-us, sox, python3-numpy and
# python3-yaml. See docs/model-adaptation.md.
#
# usage: scripts/adapt-model.sh [--noise kitchen|general] [--evaluate]
#          build the adapted model from all dev clips (0-7)  (~3-5 min)
#   --noise general   mix the dev clips with general noise (scripts/adapt/general_noise.py: generated noise,
#                     clatter and babble made from other speech), never the kitchen recording: the model
#                     a default may be (en-us-general); kitchen (the default) adapts to the benchmark's own
#                     noise recording (en-us-kitchen), an experiment that measures that recording
#   --evaluate        kitchen only: the within-dev check with pocketsphinx_batch (adapt on dev clips 0-3,
#                     decode dev clips 4-7 at clean and every SNR) and unrelated audio (~25 min on 1 busy
#                     core); the general model is checked through hark by scripts/adapt/hark_eval.py
#   --held-out        also adapt a model on dev clips 0-3 only (en-us-NOISE-0123), for hark_eval.py to decode
#                     clips 4-7 with; --held-out-only: that model alone (for trials)
#   --moderate        with --noise general: the moderate-noise means instead (Models/en-us-moderate.means): the
#                     same recipe at 15, 18 and 21 dB with 2 noise draws per clip and SNR (en-us-moderate)
#   --held-out-digits D   adapt the held-out model on the dev clips whose names start with one of D instead
#                     (4567: the second fold, for hark_eval.py --digits 0123; the model is en-us-NOISE-D)
# env:   ADAPT_DIR (cache, default .build/adapt), HARK_BENCHMARKS (default: shared/benchmarks searched upward),
#        ADAPT_SNRS (default "6 9") and GENERAL_COPIES (default 4) for trials, MODERATE_SNRS (default "15 18 21")
#        and MODERATE_COPIES (default 2) with --moderate; the shipped files use the defaults
#
# Result: $ADAPT_DIR/en-us-kitchen/ — a complete model directory (the stock files plus adapted `means`);
# decode with `-hmm $ADAPT_DIR/en-us-kitchen`, or keep the stock model and add `-mean $ADAPT_DIR/en-us-kitchen/means`.
# The test half (clips 8-f) is never read.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HELP="$ROOT/scripts/adapt"
OUT=${ADAPT_DIR:-$ROOT/.build/adapt}
STOCK=/usr/share/pocketsphinx/model/en-us/en-us
DICT=/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict
ST=/usr/lib/sphinxtrain
ADAPT_SEED=7          # never the benchmark's 20240601: adaptation must not see the evaluation noise segments
ADAPT_SNRS=${ADAPT_SNRS:-6 9}  # noisy conditions only: adding clean/high-SNR copies pulled the means back (docs)
GENERAL_BANK_SEED=11  # general_noise.py's defaults, named here so the recipe is in one place
GENERAL_MIX_SEED=12
GENERAL_COPIES=${GENERAL_COPIES:-4}  # noise draws per clip and SNR, each of a randomly chosen type (2 and 3+6 dB: docs)
EVALUATE=no
HELD_OUT=no
HELD_OUT_DIGITS=0123
NOISE=kitchen
MODERATE=no
while [ $# -gt 0 ]; do
  case "$1" in
    --evaluate) EVALUATE=yes ;;
    --held-out) HELD_OUT=yes ;;
    --held-out-only) HELD_OUT=only ;;
    --moderate) MODERATE=yes ;;
    --held-out-digits) shift; HELD_OUT_DIGITS=${1:-}
      case "$HELD_OUT_DIGITS" in 0123|4567) ;; *) echo "adapt-model.sh: --held-out-digits takes 0123 or 4567, not '$HELD_OUT_DIGITS'" >&2; exit 2 ;; esac ;;
    --noise)
      [ $# -ge 2 ] || { echo "adapt-model.sh: --noise needs kitchen or general" >&2; exit 2; }
      case "$2" in kitchen|general) NOISE=$2 ;; *) echo "adapt-model.sh: --noise '$2': use kitchen or general" >&2; exit 2 ;; esac
      shift ;;
    *) echo "adapt-model.sh: unknown argument '$1' (use --noise kitchen|general, --held-out, --held-out-only, --held-out-digits 0123|4567, --moderate, --evaluate)" >&2; exit 2 ;;
  esac
  shift
done
# NAME names the mixes, the work and the model: kitchen, general or moderate.
NAME=$NOISE
SHIPPED=noisy
if [ "$MODERATE" = yes ]; then
  [ "$NOISE" = general ] || { echo "adapt-model.sh: --moderate needs --noise general" >&2; exit 2; }
  NAME=moderate
  SHIPPED=moderate
  ADAPT_SNRS=${MODERATE_SNRS:-15 18 21}  # the moderate-noise decoder's range (docs/speech.md, "Moderate noise")
  GENERAL_COPIES=${MODERATE_COPIES:-2}
fi
if [ "$NOISE" = general ] && [ "$EVALUATE" = yes ]; then
  echo "adapt-model.sh: --evaluate is the kitchen recipe's check; evaluate the general model with scripts/adapt/hark_eval.py" >&2
  exit 2
fi

for tool in "$ST/bw" "$ST/map_adapt" "$(command -v sphinx_fe || echo sphinx_fe)" \
            "$(command -v pocketsphinx_batch || echo pocketsphinx_batch)" \
            "$(command -v pocketsphinx_mdef_convert || echo pocketsphinx_mdef_convert)" \
            "$(command -v sphinx_jsgf2fsg || echo sphinx_jsgf2fsg)" "$(command -v sox || echo sox)"; do
  if [ ! -x "$tool" ]; then
    echo "adapt-model.sh: $tool is missing; install with:" >&2
    echo "  apt-get install -y sphinxtrain sphinxbase-utils pocketsphinx pocketsphinx-en-us sox python3-numpy python3-yaml" >&2
    exit 69
  fi
done
[ -f "$STOCK/mdef" ] || { echo "adapt-model.sh: $STOCK: no acoustic model (apt-get install pocketsphinx-en-us)" >&2; exit 69; }
python3 -c "import numpy, yaml" 2>/dev/null || { echo "adapt-model.sh: python3-numpy and python3-yaml are needed" >&2; exit 69; }
BENCH=$(python3 -c "import sys; sys.path.insert(0, '$HELP'); import domain; print(domain.speech_dir())")
mkdir -p "$OUT"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*"; }

# 1. A working copy of the stock model in SphinxTrain's form: text mdef, and mixture_weights (Debian ships only
#    the 8-bit `sendump`; bw and map_adapt need float weights).
if [ ! -f "$OUT/base/mixture_weights" ]; then
  say "base model copy"
  mkdir -p "$OUT/base"
  cp "$STOCK"/{mdef,means,variances,transition_matrices,noisedict,feat.params} "$OUT/base/"
  pocketsphinx_mdef_convert -text "$STOCK/mdef" "$OUT/base/mdef.txt" >/dev/null 2>&1
  python3 "$HELP/sendump2mixw.py" "$STOCK/sendump" "$OUT/base/mixture_weights" >/dev/null
fi

# 2. Adaptation audio: clean dev clips and noisy copies. Kitchen: the benchmark's mixer with our own seed.
#    General: the same mixing rule with general_noise.py's bank, GENERAL_COPIES draws per clip and SNR.
if [ "$NOISE" = kitchen ]; then
  MIX="$OUT/mix-seed$ADAPT_SEED"
  CONDS=$(for snr in $ADAPT_SNRS; do printf '%sdb ' "$snr"; done)
  if [ ! -f "$MIX/.done" ]; then
    say "mixing dev clips, seed $ADAPT_SEED, SNRs $ADAPT_SNRS"
    python3 "$BENCH/mix.py" "$MIX" --half dev --seed $ADAPT_SEED --snr $ADAPT_SNRS >/dev/null
    touch "$MIX/.done"
  fi
else
  MIX="$OUT/mix-$NAME"
  CONDS=$(for snr in $ADAPT_SNRS; do for c in $(seq 1 $GENERAL_COPIES); do printf '%sdb-%s ' "$snr" "$(echo abcdefgh | cut -c"$c")"; done; done)
  if [ ! -f "$OUT/noise-bank/.done" ]; then
    say "general noise bank, seed $GENERAL_BANK_SEED"
    python3 "$HELP/general_noise.py" bank "$OUT/noise-bank" --seed $GENERAL_BANK_SEED
    touch "$OUT/noise-bank/.done"
  fi
  if [ ! -f "$MIX/.done" ]; then
    say "mixing dev clips with general noise, seed $GENERAL_MIX_SEED, SNRs $ADAPT_SNRS, $GENERAL_COPIES copies"
    python3 "$HELP/general_noise.py" mix --bank "$OUT/noise-bank" --out "$MIX" --snr $ADAPT_SNRS \
      --copies $GENERAL_COPIES --seed $GENERAL_MIX_SEED
    touch "$MIX/.done"
  fi
fi

# 3. Word transcripts: each clean clip decoded against a grammar that forces its labelled slot values.
if [ ! -f "$OUT/dev.lsn" ]; then
  say "forced transcripts of the clean dev clips"
  python3 "$HELP/transcripts.py" --wavdir "$MIX/clean" --digits 01234567 --work "$OUT" \
    --out-lsn "$OUT/dev.lsn.tmp" --out-ctl "$OUT/dev.ctl.tmp"
  mv "$OUT/dev.ctl.tmp" "$OUT/dev.ctl"; mv "$OUT/dev.lsn.tmp" "$OUT/dev.lsn"
fi

# 4. Features with the model's own front-end parameters.
for c in $CONDS; do
  if [ ! -f "$OUT/mfc/$c/.done" ]; then
    say "features $c"
    mkdir -p "$OUT/mfc/$c"
    sphinx_fe -argfile "$STOCK/feat.params" -samprate 16000 -c "$OUT/dev.ctl" -di "$MIX/$c" \
      -do "$OUT/mfc/$c" -ei wav -eo mfc -mswav yes >"$OUT/mfc/$c.log" 2>&1
    touch "$OUT/mfc/$c/.done"
  fi
done

# 5. Baum-Welch statistics over the chosen clips, then MAP. Only the means are kept: re-estimated variances and
#    mixture weights made 6 dB decoding worse (docs/model-adaptation.md).
adapt() {  # adapt DIGITS MODEL_DIR
  local digits=$1 model=$2 work="$OUT/work-$NAME-$1"
  [ -f "$model/means" ] && return 0
  say "bw over dev clips [$digits]: $CONDS"
  mkdir -p "$work/accum"
  : >"$work/ctl"; : >"$work/lsn"
  for c in $CONDS; do
    grep "^[$digits]" "$OUT/dev.ctl" | sed "s|^|$c/|" >>"$work/ctl"
    grep "([$digits][^)]*)\$" "$OUT/dev.lsn" >>"$work/lsn"
  done
  "$ST/bw" -moddeffn "$OUT/base/mdef.txt" -ts2cbfn .ptm. -meanfn "$OUT/base/means" -varfn "$OUT/base/variances" \
    -mixwfn "$OUT/base/mixture_weights" -tmatfn "$OUT/base/transition_matrices" -fdictfn "$OUT/base/noisedict" \
    -feat 1s_c_d_dd -svspec 0-12/13-25/26-38 -cmn batch -agc none -dictfn "$DICT" \
    -ctlfn "$work/ctl" -lsnfn "$work/lsn" -cepdir "$OUT/mfc" -accumdir "$work/accum" -timing no >"$work/bw.log" 2>&1 \
    || { echo "adapt-model.sh: bw failed, see $work/bw.log" >&2; exit 1; }
  say "map_adapt"
  "$ST/map_adapt" -moddeffn "$OUT/base/mdef.txt" -ts2cbfn .ptm. -meanfn "$OUT/base/means" \
    -varfn "$OUT/base/variances" -mixwfn "$OUT/base/mixture_weights" -tmatfn "$OUT/base/transition_matrices" \
    -accumdir "$work/accum" -mapmeanfn "$work/map_means" -mapvarfn "$work/map_variances" \
    -mapmixwfn "$work/map_mixture_weights" -maptmatfn "$work/map_transition_matrices" >"$work/map.log" 2>&1 \
    || { echo "adapt-model.sh: map_adapt failed, see $work/map.log" >&2; exit 1; }
  mkdir -p "$model.tmp"
  cp "$STOCK"/{mdef,variances,sendump,transition_matrices,noisedict,feat.params} "$model.tmp/"
  cp "$work/map_means" "$model.tmp/means"
  rm -rf "$model"; mv "$model.tmp" "$model"
}

if [ "$HELD_OUT" = only ]; then
  adapt $HELD_OUT_DIGITS "$OUT/en-us-$NAME-$HELD_OUT_DIGITS"
  say "held-out model (dev clips [$HELD_OUT_DIGITS] only): $OUT/en-us-$NAME-$HELD_OUT_DIGITS"
  exit 0
fi
adapt 01234567 "$OUT/en-us-$NAME"
say "adapted model: $OUT/en-us-$NAME  (sha256 of means: $(sha256sum "$OUT/en-us-$NAME/means" | cut -c1-16))"
if [ "$NOISE" = general ]; then
  # The shipped copy is Models/en-us-noisy.means (--moderate: en-us-moderate.means); say whether this build reproduced it.
  if [ "$(sha256sum <"$OUT/en-us-$NAME/means" | cut -d' ' -f1)" = "$(cut -d' ' -f1 "$ROOT/Models/adaptation/en-us-$SHIPPED.sha256")" ]; then
    say "the same bytes as the shipped Models/en-us-$SHIPPED.means"
  else
    say "differs from the shipped Models/en-us-$SHIPPED.means (Models/adaptation/en-us-$SHIPPED.sha256)"
  fi
fi
if [ "$HELD_OUT" = yes ]; then
  adapt $HELD_OUT_DIGITS "$OUT/en-us-$NAME-$HELD_OUT_DIGITS"
  say "held-out model (dev clips [$HELD_OUT_DIGITS] only): $OUT/en-us-$NAME-$HELD_OUT_DIGITS"
fi

[ "$EVALUATE" = yes ] || exit 0

# 6. Within-dev evaluation: adapt on dev clips 0-3 only, decode dev clips 4-7 mixed with the benchmark's seed.
adapt 0123 "$OUT/en-us-$NOISE-0123"
if [ ! -f "$OUT/mix-eval/.done" ]; then
  say "mixing dev clips with the benchmark seed 20240601"
  python3 "$BENCH/mix.py" "$OUT/mix-eval" --half dev >/dev/null
  touch "$OUT/mix-eval/.done"
fi
python3 -c "import sys; sys.path.insert(0, '$HELP'); import domain; c, a, s = domain.load_domain(); \
open('$OUT/barista.jsgf', 'w').write(domain.grammar(c, a, s))"
mkdir -p "$OUT/runs"
for cond in clean 6db 9db 12db 15db 18db 21db 24db; do
  for m in stock adapted; do
    hmm=$STOCK; [ $m = adapted ] && hmm="$OUT/en-us-kitchen-0123"
    r="$OUT/runs/$m-$cond.jsonl"
    [ -s "$r" ] || python3 "$HELP/decode.py" --wavdir "$OUT/mix-eval/$cond" --digits 4567 --out "$r" \
      --jsgf "$OUT/barista.jsgf" --hmm "$hmm" >/dev/null
  done
done
python3 "$HELP/table.py" "$OUT/runs"
say "unrelated audio (rhasspy-en commands, recorded read speech)"
mkdir -p "$OUT/other"
python3 "$HELP/other_audio.py" --work "$OUT/other" --tag stock
python3 "$HELP/other_audio.py" --work "$OUT/other" --tag adapted-all-dev --hmm "$OUT/en-us-kitchen"
say "done"
