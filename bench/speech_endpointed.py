#!/usr/bin/env python3
"""Endpointed utterances against whole files in noise (issue 16 item 5; docs/speech.md, "Endpointed utterances in noise").

The speech benchmark decodes whole files; `hark run` decodes what its endpointer cuts: the utterance from 0.3 s
before the detected speech to 0.3 s after its last speech (`Endpointer`, `UtteranceListener`). This script measures
what that costs and how much of it comes back with more of the room kept before the speech:

1. mixes the speech-to-intent benchmark's dev clips `4…`–`7…` (159 orders) with its kitchen noise by its own mixer
   and seed (20240601), and with any `--noise NAME=WAV` (16 kHz mono) by the same rule at seed 5;
2. finds each clip's cut with a Python copy of `HarkAudio/Endpointer.swift` (its defaults: 10 ms frames, levels
   averaged over 50 ms, the quietest level of the last 2 s as the floor, start 12 dB above it for 0.1 s, continue
   8 dB above it and, once 50 ms of it were voiced, within 0.2 s of a voiced frame, end after 0.8 s below), first
   checked against `hark recognize --stream --unpaced` on `--check` clips (the decoded length must agree to 10 ms);
3. decodes, with `hark recognize --json` and Hark's defaults, the whole file and the cut with 0.3 s (today), 1.0 s and
   1.5 s of the room before the speech (as much as the file has), always ending 0.3 s after the last speech;
4. scores each by the benchmark's rule (score.py: intent and every slot right; a rejection is wrong).

With `--ood VOICES` it also measures the other side, out-of-domain speech: bench/data/ood-sentences.txt (128
sentences that are neither orders nor home commands) synthesised as bench/speech.py does (`flite`/`espeak-ng`, 0.5 s
of silence either side), given 1.0 s more silence before and 0.5 s more after (room for the cuts to differ), mixed
with the kitchen noise at each `--snr` by the upstream rule at seed 99 (speech_ood_noise.py's), cut the same ways and
decoded against barista.json and home.json; it prints how many each accepts (score.py's rule: an intent, not marked
rejected) and keeps hark's lines in bench/out/endpointed/ood/<snr>-<cut>-<workspace>.jsonl.

usage: python3 bench/speech_endpointed.py [--snr 6 12] [--noise pink=BANK/pink.wav ...] [--pre 0.3 1.0 1.5]
                                          [--check 20] [--hark PATH] [--ood kal,slt] [--no-orders] [--no-whole]
                                          [--hark-args "ARGS"] [--tag NAME] [--ood-set reported|tuning] [--ood-noise WAV]
                                          [--voicing on|off] [--min-voiced S]
       (BANK from `python3 scripts/adapt/general_noise.py bank BANK --seed 11`)
writes bench/out/endpointed/ (mixes, cuts, one JSONL per decoded set) and prints the table.
needs: a release build of hark; numpy and sox (bash scripts/setup-bench.sh)
"""
import argparse
from concurrent.futures import ThreadPoolExecutor
import glob
import json
import os
import shlex
import subprocess
import sys
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "adapt"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import domain  # noqa: E402
import harklib  # noqa: E402
import hark_eval  # noqa: E402
import speech  # noqa: E402
import speechlib  # noqa: E402

OUT = os.path.join(ROOT, "bench", "out", "endpointed")
RATE = 16000
# The out-of-domain sentence sets (--ood-set), in bench/data.
OOD_SETS = {"reported": "ood-sentences.txt", "tuning": "ood-tuning-sentences.txt", "near": "near-command-tuning.txt"}
# The endpointer's voicing rule (Endpointer.Configuration.voicedHold; 0 with --voicing off), endpoint()'s default.
VOICED_HOLD = 0.2
# The voicing strength a frame needs to count as voiced (Endpointer.Configuration.voicingThreshold).
VOICING_THRESHOLD = 0.65
# Voiced audio an utterance needs, else it is dismissed (Endpointer.Configuration.minimumVoiced; 0 with --min-voiced 0).
MINIMUM_VOICED = 0.1
# A pitch that holds is a tone (Endpointer.Configuration.steadyPitchShare, steadyPitchStep, steadyPitchPairs; None: off).
STEADY_PITCH_SHARE = 0.5
STEADY_PITCH_STEP = 0.003
STEADY_PITCH_PAIRS = 10


def has_voice(voiced_frames, needed, pairs, steady, share):
    """Endpointer.hasVoice: enough voiced frames, and a pitch that does not hold (a tone's does); no minimum keeps all."""
    if needed == 0:
        return True
    if voiced_frames < needed:
        return False
    return share is None or pairs < STEADY_PITCH_PAIRS or steady < share * pairs


def read(path):
    """A 16 kHz mono 16-bit WAV's samples, at their integer values."""
    return speechlib.read_wav_float(path) * 32768.0


def write(path, samples):
    """Integer-valued samples as a 16 kHz mono 16-bit WAV (the cuts keep the mixes' exact samples)."""
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.clip(np.round(samples), -32768, 32767).astype("<i2").tobytes())


def biquad(kind, frequency):
    """VoicingDetector.Biquad: an RBJ-cookbook second-order section with Q = 1/sqrt(2), as (b, a)."""
    omega = 2 * np.pi * frequency / RATE
    alpha, c = np.sin(omega) / (2 * np.sqrt(0.5)), np.cos(omega)
    b0 = (1 + c) / 2 if kind == "high" else (1 - c) / 2
    b1 = -(1 + c) if kind == "high" else 1 - c
    return np.array([b0, b1, b0]) / (1 + alpha), np.array([1, -2 * c / (1 + alpha), (1 - alpha) / (1 + alpha)])


def voicing(x, periods=False):
    """Per 10 ms frame, VoicingDetector.strength() after that frame: 100 Hz high-pass and 900 Hz low-pass, every
    second sample kept, the highest local peak over lags 16-160 of the normalised correlation of the oldest 20 ms
    of the last 321 kept samples with the audio a lag later (-1 when no lag is a peak). With `periods`, also
    VoicingDetector.measure()'s period: the first highest peak's lag refined by the parabola through its neighbours
    (0 without a peak)."""
    from scipy.signal import lfilter  # only the endpointer's copy needs it
    y = x / 32768.0
    for kind, frequency in (("high", 100), ("low", 900)):
        b, a = biquad(kind, frequency)
        y = lfilter(b, a, y)
    y = y[::2]
    window, shortest, longest = 160, 16, 160
    width = window + longest + 1
    count = len(x) // 160
    padded = np.concatenate([np.zeros(width), y])
    ends = np.arange(1, count + 1) * 80 + width
    history = padded[ends[:, None] - width + np.arange(width)[None, :]]
    head = history[:, :window]
    lags = np.arange(shortest - 1, longest + 2)
    product = np.stack([(head * history[:, lag: lag + window]).sum(1) for lag in lags], 1)
    cumulative = np.concatenate([np.zeros((count, 1)), np.cumsum(history * history, 1)], 1)
    energy = (head * head).sum(1)[:, None] * (cumulative[:, lags + window] - cumulative[:, lags])
    value = np.where(energy > 0, product / np.sqrt(np.maximum(energy, 1e-30)), 0.0)
    peak = (value[:, 1:-1] >= value[:, :-2]) & (value[:, 1:-1] >= value[:, 2:])
    peaks = np.where(peak, value[:, 1:-1], -1.0)
    strength = np.where((head * head).sum(1) > 0, peaks.max(1), -1.0)
    if not periods:
        return strength
    i = peaks.argmax(1)
    rows = np.arange(count)
    before, at, after = value[rows, i], value[rows, i + 1], value[rows, i + 2]
    curvature = before - 2 * at + after
    safe = np.where(np.abs(curvature) > 1e-9, curvature, 1.0)
    period = lags[i + 1] + np.where(np.abs(curvature) > 1e-9, 0.5 * (before - after) / safe, 0.0)
    return strength, np.where(strength > -1.0, period, 0.0)


def utterances(x, start_threshold=12.0, continue_threshold=8.0, trailing=0.8, maximum=10.0, minimum_speech=0.1,
               padding=0.3, window=2.0, minimum_level=-70.0, voiced_hold=None, voiced_to_arm=0.05,
               voicing_threshold=VOICING_THRESHOLD):
    """Every utterance Endpointer finds in `x` (int16 scale) when it goes on listening after each, its noise floor kept
    (as after a dismissal or `reset()`), in 10 ms frames: yields (first frame of the padded utterance, frame after its
    last speech, voiced frames, pairs of consecutive voiced frames, those whose pitch held); the last may be cut off by
    the end of the input. `voiced_hold` None: VOICED_HOLD (0: no voicing rule, nothing voiced)."""
    voiced_hold = VOICED_HOLD if voiced_hold is None else voiced_hold
    frames = x[: len(x) // 160 * 160].reshape(-1, 160)
    power = 10 ** (np.maximum(-100, 10 * np.log10(np.maximum((frames ** 2).mean(1), 1e-18) / 32768 ** 2)) / 10)
    strength, period = voicing(x, periods=True) if voiced_hold > 0 else (None, None)
    hold, arm = int(round(voiced_hold * 100)), max(1, int(round(voiced_to_arm * 100)))
    recent, floor, candidate, count, start, end, silent = [], None, None, 0, None, None, 0
    voiced_frames, last_voiced, last_period, pairs, steady = 0, -10 ** 9, 0.0, 0, 0
    for i in range(len(frames)):
        level = max(-100.0, 10 * np.log10(power[max(0, i - 4): i + 1].mean()))
        judged = floor if floor is not None else level
        recent.append(level)
        if len(recent) > int(window * 100):
            recent.pop(0)
        floor = min(recent)
        loud = level >= minimum_level
        starts, continues = loud and level >= judged + start_threshold, loud and level >= judged + continue_threshold
        voiced = continues and strength is not None and strength[i] >= voicing_threshold
        if voiced:
            if last_voiced == i - 1 and last_period > 0 and period[i] > 0:
                pairs += 1
                steady += abs(np.log(period[i] / last_period)) < STEADY_PITCH_STEP
            last_period = period[i]
            last_voiced = i
        if start is None:
            if starts or (continues and candidate is not None):
                candidate = i if candidate is None else candidate
                count += 1
                voiced_frames += voiced
            else:
                candidate, count, voiced_frames, pairs, steady = None, 0, 0, 0, 0
            if candidate is not None and count >= int(minimum_speech * 100):
                start, end, silent = max(0, candidate - int(padding * 100)), i + 1, 0
        else:
            voiced_frames += voiced
            armed = strength is not None and voiced_frames >= arm
            if continues and (not armed or i - last_voiced < hold):
                silent, end = 0, i + 1
            else:
                silent += 1
            if silent >= int(round(trailing * 100)) or i + 1 - start >= int(maximum * 100):
                yield int(start), int(end), int(voiced_frames), pairs, int(steady)
                candidate, count, start, end, silent, voiced_frames, pairs, steady = None, 0, None, None, 0, 0, 0, 0
    if start is not None:
        yield int(start), int(end), int(voiced_frames), pairs, int(steady)


def endpoint(x, minimum_voiced=None, steady_share="default", **settings):
    """(first frame of the padded utterance, frame after its last speech) in 10 ms frames, as Endpointer finds them: the
    first of `utterances(x, **settings)` with a voice (`has_voice`: those without are dismissed and the search goes on);
    None when it hears no speech. `minimum_voiced` None: MINIMUM_VOICED; `steady_share` "default": STEADY_PITCH_SHARE
    (neither applies without the voicing rule)."""
    voiced_hold = settings.get("voiced_hold")
    voicing_on = (VOICED_HOLD if voiced_hold is None else voiced_hold) > 0
    minimum_voiced = MINIMUM_VOICED if minimum_voiced is None else minimum_voiced
    needed = int(round(minimum_voiced * 100)) if voicing_on else 0
    share = (STEADY_PITCH_SHARE if steady_share == "default" else steady_share) if voicing_on else None
    return next(((start, end) for start, end, voiced, pairs, steady in utterances(x, **settings)
                 if has_voice(voiced, needed, pairs, steady, share)), None)


def mix_other(clean_dir, noise_path, out_dir, snr):
    """The benchmark's rule, with its own mix.py's functions: max 2048-sample frame energy of speech over noise =
    10^(SNR/10), peak 0.5."""
    mixer = speechlib.upstream_mixer()
    noise = speechlib.read_wav_float(noise_path)
    rng = np.random.default_rng(5)
    os.makedirs(out_dir, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(clean_dir, "*.wav"))):
        speech = speechlib.read_wav_float(path)
        if speech.size >= noise.size:
            sys.exit(f"speech_endpointed: {noise_path} is shorter than {path}")
        start = int(rng.integers(0, noise.size - speech.size))
        segment = noise[start: start + speech.size]
        mixed = speech + np.sqrt(mixer.max_frame_energy(speech) / (mixer.max_frame_energy(segment) * 10 ** (snr / 10))) * segment
        mixer.write_wav(os.path.join(out_dir, os.path.basename(path)), mixed / (2 * np.max(np.abs(mixed))))


def cut(x, pre):
    """The endpointer's cut of `x` with `pre` seconds of the room before the speech (as much as there is), ending 0.3 s
    after its last speech; the whole of `x` when it finds no speech."""
    found = endpoint(x, padding=pre) or (0, len(x) // 160)
    # An utterance cut at the longest length (10 s) keeps no more than that, like UtteranceListener.
    return x[found[0] * 160: min(len(x), int((found[1] / 100 + 0.3) * RATE), found[0] * 160 + 10 * RATE)]


def out_of_domain(args):
    """Out-of-domain sentences in kitchen noise through the same cuts: how many each workspace accepts."""
    tuning = args.ood_set != "reported"
    sentences = speech.ood_sentences(os.path.join(ROOT, "bench", "data", OOD_SETS[args.ood_set]))
    if args.ood_set != "reported":
        # A tuning set must stay apart from the reported one, and from every example; a counterexample is a
        # non-command like the rest (speech_rejection_snr.py's rule: home.json has since taken four of the tuning
        # sentences as counterexamples).
        reported = {harklib.normalise(s) for s in speech.ood_sentences()}
        problems = speech.ood_problems(sentences, counterexamples=False) + [f"{s!r} is in the reported set" for s in sentences
                                                     if harklib.normalise(s) in reported]
        if problems:
            sys.exit("speech_endpointed: " + "; ".join(problems))
    set_dir = {"reported": "ood", "tuning": "ood-tuning", "near": "ood-near"}[args.ood_set]
    voices = [fv for fv in speech.available_voices() if fv[1] in args.ood.split(",")]
    if not voices:
        sys.exit(f"speech_endpointed: none of --ood {args.ood} is installed (bash scripts/setup-bench.sh)")
    files = speech.synthesise(sentences, os.path.join(ROOT, "bench", "out", "speech", set_dir), voices)
    mixer = speechlib.upstream_mixer()
    noise = (speechlib.read_wav_float(args.ood_noise) if args.ood_noise
             else mixer.read_flac(os.path.join(domain.speech_dir(), "noise", "kitchen.flac")))
    ood_out = os.path.join(OUT, set_dir)
    table = {}
    for snr in args.snr:
        rng = np.random.default_rng(99)
        sets = {} if args.no_whole else {"whole file": []}
        sets.update({f"{pre:g} s before": [] for pre in args.pre})
        for (family, voice), wavs in files.items():
            for path in wavs:
                speech_part = np.concatenate([np.zeros(RATE), speechlib.read_wav_float(path), np.zeros(RATE // 2)])
                if snr == "clean":
                    mixed = speech_part
                else:
                    start = int(rng.integers(0, noise.size - speech_part.size))
                    segment = noise[start: start + speech_part.size]
                    scale = np.sqrt(mixer.max_frame_energy(speech_part) / (mixer.max_frame_energy(segment) * 10 ** (float(snr) / 10)))
                    mixed = speech_part + scale * segment
                x = mixed * 0.5 / max(np.abs(mixed).max(), 1e-9) * 32768.0
                name = f"{family}-{voice}-{os.path.basename(path)}"
                for label in sets:
                    folder = os.path.join(ood_out, f"{snr}-{label.replace(' ', '-')}")
                    os.makedirs(folder, exist_ok=True)
                    target = os.path.join(folder, name)
                    write(target, x if label == "whole file" else cut(x, float(label.split()[0])))
                    sets[label].append(target)
        for label, chosen in sets.items():
            for ws in ("barista", "home"):
                parts = [chosen[i::args.jobs] for i in range(args.jobs)]

                def run(part, ws=ws):
                    cmd = [args.hark, "recognize", "--workspace", os.path.join(ROOT, "Intents", f"{ws}.json"), "--json"] + args.hark_args
                    out = subprocess.run(cmd + part, capture_output=True, text=True)
                    if out.returncode != 0:
                        sys.exit(f"speech_endpointed: {' '.join(cmd)} … failed: {out.stderr[-2000:]}")
                    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]

                with ThreadPoolExecutor(args.jobs) as pool:
                    rows = [row for part in pool.map(run, parts) for row in part]
                with open(os.path.join(ood_out, f"{snr}-{label.replace(' ', '-')}-{ws}{args.tag}.jsonl"), "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
                table[(snr, label, ws)] = (sum(1 for r in rows if speech.accepted(r)), len(rows))
                print(f"speech_endpointed: ood {snr}, {label}, {ws}: {table[(snr, label, ws)][0]}/{len(rows)} accepted",
                      file=sys.stderr)
    labels = [f"{p:g} s before" for p in args.pre] + ([] if args.no_whole else ["whole file"])
    print("| out-of-domain, accepted | " + " | ".join(f"{ws} {'clean' if snr == 'clean' else snr + ' dB'}" for snr in args.snr for ws in ("barista", "home")) + " |")
    print("|---" * (2 * len(args.snr) + 1) + "|")
    for label in labels:
        print(f"| {label} | " + " | ".join(f"{table[(snr, label, ws)][0]}/{table[(snr, label, ws)][1]}"
                                          for snr in args.snr for ws in ("barista", "home")) + " |")


def main():
    global VOICED_HOLD, MINIMUM_VOICED
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snr", nargs="+", default=["6", "12"], help="kitchen SNRs (and clean with 'clean')")
    ap.add_argument("--noise", action="append", default=[], metavar="NAME=WAV", help="another noise, mixed at 6 dB")
    ap.add_argument("--pre", type=float, nargs="+", default=[0.3, 1.0, 1.5])
    ap.add_argument("--check", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--hark", default=os.path.join(ROOT, ".build", "release", "hark"))
    ap.add_argument("--ood", help="voices (e.g. kal,slt,en-us) for the out-of-domain part")
    ap.add_argument("--ood-set", choices=sorted(OOD_SETS), default="reported",
                    help="out-of-domain sentences: bench/data/ood-sentences.txt (reported), ood-tuning-sentences.txt "
                         "(tuning: for choosing rejection points; use it with --ood slt,rms and --ood-noise) or "
                         "near-command-tuning.txt (near: requests that open like a command, for tuning in clean speech)")
    ap.add_argument("--ood-noise", metavar="WAV", help="out-of-domain part: mix with this 16 kHz noise instead of the kitchen "
                    "recording (e.g. bench/out/speech/rejection-snr/noise/tuning-7.wav, speech_rejection_snr.py's)")
    ap.add_argument("--no-orders", action="store_true", help="skip the orders (with --ood: only out-of-domain speech)")
    ap.add_argument("--no-whole", action="store_true", help="out-of-domain: decode the cuts only, not the whole files")
    ap.add_argument("--hark-args", default="", help="more arguments for every `hark recognize`, e.g. \"--margin-room all\"")
    ap.add_argument("--tag", default="", help="appended to the names of the JSONL files, to keep runs with other --hark-args apart")
    ap.add_argument("--voicing", choices=["on", "off"], default="on",
                    help="the endpointer's voicing rule (off: the level alone, as before 2026-12-06)")
    ap.add_argument("--min-voiced", type=float, default=MINIMUM_VOICED,
                    help="voiced seconds an utterance needs, else the endpointer dismisses it (0: keep every one, as before "
                         "2026-12-06's evening; docs/speech.md, \"An utterance needs a voice\")")
    args = ap.parse_args()
    if args.voicing == "off":
        VOICED_HOLD = 0.0
    MINIMUM_VOICED = args.min_voiced
    args.hark_args = shlex.split(args.hark_args)
    if not os.access(args.hark, os.X_OK):
        sys.exit(f"speech_endpointed: no hark at {args.hark} (swift build -c release)")
    if args.ood:
        out_of_domain(args)
    if args.no_orders:
        return
    mix = os.path.join(OUT, "mix-20240601")
    if not os.path.exists(os.path.join(mix, ".done")):
        subprocess.run([sys.executable, os.path.join(domain.speech_dir(), "mix.py"), mix, "--half", "dev", "--snr", "6", "9",
                        "12"], check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(mix, ".done"), "w").close()
    conditions = [(f"kitchen {s}" if s != "clean" else "clean", os.path.join(mix, "clean" if s == "clean" else f"{s}db"))
                  for s in args.snr]
    for spec in args.noise:
        name, _, path = spec.partition("=")
        folder = os.path.join(OUT, f"mix-{name}-6db")
        if not os.path.exists(os.path.join(folder, ".done")):
            clean = os.path.join(OUT, "clean-4567")
            os.makedirs(clean, exist_ok=True)
            for p in glob.glob(os.path.join(mix, "clean", "[4567]*.wav")):
                if not os.path.exists(os.path.join(clean, os.path.basename(p))):
                    os.symlink(p, os.path.join(clean, os.path.basename(p)))
            mix_other(clean, path, folder, 6)
            open(os.path.join(folder, ".done"), "w").close()
        conditions.append((f"{name} 6", folder))

    labels, score = domain.labels(), hark_eval.score_module()
    # The Python endpointer must cut where the Swift one does.
    first = conditions[0][1]
    probe = sorted(glob.glob(os.path.join(first, "[4567]*.wav")))[: args.check]
    streamed = hark_eval.recognise_with(args.hark, ["--stream", "--unpaced", "--voicing", args.voicing, "--min-voiced",
                                                    f"{args.min_voiced:g}"], probe, args.jobs)
    for path in probe:
        samples = read(path)
        row = streamed[os.path.basename(path)[:-4]]
        # The cut itself (0.3 s after the last speech, or the input's end when that comes sooner); 0 without speech.
        mine = 0 if endpoint(samples) is None else len(cut(samples, 0.3)) / RATE
        if abs(mine - (row.get("audio_seconds") or 0)) > 0.011:
            sys.exit(f"speech_endpointed: {path}: the Python endpointer's cut ({mine:.2f} s) differs from hark's "
                     f"({row.get('audio_seconds')} s); update endpoint() to match HarkAudio/Endpointer.swift")
    print(f"speech_endpointed: the Python endpointer matches hark's cuts on {len(probe)} clips", file=sys.stderr)

    table = {}
    for name, folder in conditions:
        files = sorted(glob.glob(os.path.join(folder, "[4567]*.wav")))
        sets = {"whole file": files}
        for pre in args.pre:
            out = os.path.join(OUT, "cuts", f"{name.replace(' ', '-')}-pre{pre:g}")
            os.makedirs(out, exist_ok=True)
            cut_files = []
            for path in files:
                target = os.path.join(out, os.path.basename(path))
                write(target, cut(read(path), pre))
                cut_files.append(target)
            sets[f"{pre:g} s before"] = cut_files
        for label, chosen in sets.items():
            cache = os.path.join(OUT, "runs", f"{name.replace(' ', '-')}-{label.replace(' ', '-')}{args.tag}.jsonl")
            rows = hark_eval.cached(cache, lambda: hark_eval.scored(
                hark_eval.recognise_with(args.hark, args.hark_args, chosen, args.jobs), labels, score), reuse=False)
            table[(name, label)] = sum(r["right"] for r in rows.values())
            print(f"speech_endpointed: {name}, {label}: {table[(name, label)]}/{len(files)}", file=sys.stderr)
    labels_order = [f"{p:g} s before" for p in args.pre] + ["whole file"]
    print("| room kept before the speech | " + " | ".join(n for n, _ in conditions) + " |")
    print("|---" * (len(conditions) + 1) + "|")
    for label in labels_order:
        print(f"| {label} | " + " | ".join(str(table[(n, label)]) for n, _ in conditions) + " |")


if __name__ == "__main__":
    main()
