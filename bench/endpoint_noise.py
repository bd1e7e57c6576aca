#!/usr/bin/env python3
"""Noise alone through the endpointer, and how much voice an utterance needs to count (issue 16 item 2; docs/speech.md,
"An utterance needs a voice").

A knock or a clatter in a kitchen rises 12 dB above the floor for a tenth of a second and starts an utterance; the
recogniser then hears the nearest short command in it ("hi", "latte") and may accept it. A voice's vowels have a
pitch, a knock has none, so `Endpointer.Configuration.minimumVoiced` dismisses an utterance with less voiced audio
than that and goes on listening. This script measures what that removes and what it costs, never on the benchmark's
kitchen recording:

1. noise alone: each noise of the general bank (`scripts/adapt/general_noise.py bank DIR --seed 11`: pink, brown,
   fan, clatter, LibriVox and flite babble; 60 s each) streamed through a Python copy of the endpointer that goes on
   after each utterance with its noise floor kept, as `UtteranceListener` does after `reset()`: utterances a minute
   and each one's voiced audio;
2. speech: the speech-to-intent benchmark's dev clips `0…`–`3…` (real speakers, their own pauses) and home.json's
   examples in flite's four voices (kal, slt, rms, awb, a quarter of the examples each: short commands such as
   "hi" are where a minimum could bite), each with 1.5 s of quiet before (room for a burst to come first) and 1.5 s
   after, mixed with every bank noise at 6 and 12 dB by the benchmark's rule (seed 5), and clean. An utterance
   *holds speech* when it overlaps the clip's words (where the clean clip is within 30 dB of its loudest 50 ms);
   for each candidate minimum: speech utterances dismissed, and noise-only utterances (before the words) kept.

usage: python3 bench/endpoint_noise.py --bank DIR [--minimum 0 0.05 0.1 0.15 0.2 0.25] [--orders 80] [--home 80]
                                      [--snr 6 12] [--jobs 2] [--json FILE] [--from-json FILE]
(DIR from `python3 scripts/adapt/general_noise.py bank DIR --seed 11`; about 2 minutes on 2 cores; the synthesised
home commands are kept in bench/out/endpoint-noise/.) `--json` keeps every utterance found, `--from-json` prints the
tables again from such a file.
needs: numpy, scipy, sox and flite (bash scripts/setup-bench.sh)
"""
import argparse
import concurrent.futures
import glob
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import speech_endpointed as se  # noqa: E402
import speech_rejection_snr as rs  # noqa: E402
import speechlib  # noqa: E402

RATE = 16000
OUT = os.path.join(ROOT, "bench", "out", "endpoint-noise")
VOICES = ("kal", "slt", "rms", "awb")
NOISES = ("pink", "brown", "fan", "clatter", "babble-librivox", "babble-flite")


def utterances(x, start_threshold=12.0, continue_threshold=8.0, trailing=0.8, maximum=10.0, minimum_speech=0.1,
               padding=0.3, window=2.0, minimum_level=-70.0, voiced_hold=se.VOICED_HOLD, voiced_to_arm=0.05):
    """Every utterance the endpointer finds in `x` (int16 scale) when it goes on listening after each, its noise floor
    kept: [(first frame of the padded utterance, frame after its last speech, voiced frames)]. The same frame rules as
    speech_endpointed.endpoint()."""
    frames = x[: len(x) // 160 * 160].reshape(-1, 160)
    power = 10 ** (np.maximum(-100, 10 * np.log10(np.maximum((frames ** 2).mean(1), 1e-18) / 32768 ** 2)) / 10)
    strength = se.voicing(x)
    hold, arm = int(round(voiced_hold * 100)), max(1, int(round(voiced_to_arm * 100)))
    found = []
    recent = []
    candidate, count, start, end, silent, voiced_frames, last_voiced = None, 0, None, None, 0, 0, -10 ** 9
    for i in range(len(frames)):
        level = max(-100.0, 10 * np.log10(power[max(0, i - 4): i + 1].mean()))
        judged = min(recent) if recent else level
        recent.append(level)
        if len(recent) > int(window * 100):
            recent.pop(0)
        loud = level >= minimum_level
        starts, continues = loud and level >= judged + start_threshold, loud and level >= judged + continue_threshold
        voiced = continues and strength[i] >= se.VOICING_THRESHOLD
        if voiced:
            last_voiced = i
        if start is None:
            if starts or (continues and candidate is not None):
                candidate = i if candidate is None else candidate
                count += 1
                voiced_frames += voiced
            else:
                candidate, count, voiced_frames = None, 0, 0
            if candidate is not None and count >= int(minimum_speech * 100):
                start, end, silent = max(0, candidate - int(padding * 100)), i + 1, 0
        else:
            voiced_frames += voiced
            armed = voiced_frames >= arm
            if continues and (not armed or i - last_voiced < hold):
                silent, end = 0, i + 1
            else:
                silent += 1
            if silent >= int(round(trailing * 100)) or i + 1 - start >= int(maximum * 100):
                found.append((int(start), int(end), int(voiced_frames)))
                candidate, count, start, end, silent, voiced_frames = None, 0, None, None, 0, 0
    if start is not None:
        found.append((int(start), int(end), int(voiced_frames)))
    return found


def words_span(clean):
    """(first, last) 10 ms frame of the clip's words: within 30 dB of its loudest 50 ms."""
    frames = clean[: len(clean) // 160 * 160].reshape(-1, 160)
    level = 10 * np.log10(np.maximum(np.convolve((frames ** 2).mean(1), np.ones(5) / 5, "same"), 1e-12))
    loud = np.nonzero(level >= level.max() - 30)[0]
    return int(loud[0]), int(loud[-1])


def speech_clips(orders, home):
    """[(kind, name, samples in -1…1)]: dev orders 0…-3… and flite home examples, 1.5 s of quiet before, 1.5 s after."""
    clips = []
    mixer = speechlib.upstream_mixer()
    ids = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(speechlib.speech_dir(), "clean", "*.flac")))
    for name in [i for i in ids if i[0] in "0123"][:orders]:
        x = mixer.read_flac(os.path.join(speechlib.speech_dir(), "clean", name + ".flac"))
        clips.append(("order", name, np.concatenate([np.zeros(int(1.5 * RATE)), x, np.zeros(int(1.5 * RATE))])))
    examples = rs.workspace_examples(os.path.join(ROOT, "Intents", "home.json"))
    step = max(1, len(examples) // max(1, home))
    for n, text in enumerate(examples[::step][:home]):
        voice = VOICES[n % len(VOICES)]
        path = rs.synthesise(text, voice, os.path.join(OUT, "home", f"{voice}-{n:03d}.wav"))
        x = speechlib.read_wav_float(path)  # 0.5 s of silence either side already
        clips.append(("home", f"{voice}: {text}", np.concatenate([np.zeros(RATE), x, np.zeros(RATE)])))
    return clips


def mixed(speech, noise, snr, rng, mixer):
    start = int(rng.integers(0, noise.size - speech.size))
    segment = noise[start: start + speech.size]
    out = speech + np.sqrt(mixer.max_frame_energy(speech) / (mixer.max_frame_energy(segment) * 10 ** (snr / 10))) * segment
    return out / (2 * np.max(np.abs(out)))


def handed(found, frames):
    """The utterance the endpointer hands on first when it dismisses those with fewer than `frames` voiced frames."""
    return next((f for f in found if f[2] >= frames), None)


def report(record, minimums):
    """The tables: for each minimum, what noise alone starts, and what the first utterance handed on holds."""
    noise_total = sum(len(v) for v in record["noise"].values())
    print("| noise alone (60 s) | utterances | voiced audio of each, s (sorted) |")
    print("|---|---|---|")
    for name, found in record["noise"].items():
        print(f"| {name} | {len(found)} | {' '.join(f'{v / 100:.2f}' for v in sorted(f[2] for f in found))} |")
    print()
    print(f"| minimum voiced audio | noise alone: utterances handed on (of {noise_total}) | first utterance handed on is"
          " a noise burst before the words: orders / home commands | the words are never handed on: orders / home |"
          " handed on, overlapping the words: orders / home |")
    print("|---|---|---|---|---|")
    for minimum in minimums:
        frames = int(round(minimum * 100))
        left = sum(1 for v in record["noise"].values() for f in v if f[2] >= frames)
        burst = {"order": 0, "home": 0}
        lost = {"order": 0, "home": 0}
        right = {"order": 0, "home": 0}
        total = {"order": 0, "home": 0}
        for row in record["speech"]:
            kind = row["kind"]
            total[kind] += 1
            first = handed(row["found"], frames)
            words = row["words"]
            if first is None or first[0] > words[1]:
                lost[kind] += 1
            elif first[1] < words[0]:
                burst[kind] += 1
            else:
                right[kind] += 1
        print(f"| {minimum:g} s | {left} | {burst['order']} / {burst['home']} | {lost['order']} / {lost['home']} |"
              f" {right['order']} of {total['order']} / {right['home']} of {total['home']} |")
    for kind in ("order", "home"):
        voiced = sorted(f[2] for row in record["speech"] if row["kind"] == kind
                        for f in row["found"] if f[0] <= row["words"][1] and f[1] >= row["words"][0])
        bursts = sorted(f[2] for row in record["speech"] if row["kind"] == kind for f in row["found"] if f[1] < row["words"][0])
        pct = lambda xs: " / ".join(f"{np.percentile(xs, q) / 100:.2f}" for q in (1, 5, 50)) if xs else "-"
        print(f"\n{kind}: voiced audio of utterances overlapping the words, p1 / p5 / p50 s: {pct(voiced)} (n={len(voiced)});"
              f" of noise bursts before the words: p50 / p95 / p99 "
              + (" / ".join(f"{np.percentile(bursts, q) / 100:.2f}" for q in (50, 95, 99)) if bursts else "-") + f" (n={len(bursts)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bank", required=True, help="general_noise.py's bank (seed 11)")
    ap.add_argument("--minimum", type=float, nargs="+", default=[0, 0.05, 0.1, 0.15, 0.2, 0.25])
    ap.add_argument("--orders", type=int, default=80)
    ap.add_argument("--home", type=int, default=80)
    ap.add_argument("--snr", type=float, nargs="+", default=[6, 12])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="also write every utterance found here")
    ap.add_argument("--from-json", help="only the tables, from an earlier run's --json")
    args = ap.parse_args()
    if args.from_json:
        return report(json.load(open(args.from_json)), args.minimum)
    noises = {}
    for name in NOISES:
        path = os.path.join(args.bank, name + ".wav")
        if not os.path.exists(path):
            sys.exit(f"endpoint_noise: {path}: missing (python3 scripts/adapt/general_noise.py bank {args.bank} --seed 11)")
        noises[name] = speechlib.read_wav_float(path)
    record = {"noise": {}, "speech": []}

    # 1. Noise alone, at the level a peak-normalised recording has (the endpointer judges levels against the floor).
    for name, noise in noises.items():
        record["noise"][name] = utterances(noise / np.abs(noise).max() * 16000)

    # 2. Speech in each noise (two processes: the frame loop is Python).
    mixer = speechlib.upstream_mixer()
    rng = np.random.default_rng(5)
    jobs = []
    for kind, name, clean in speech_clips(args.orders, args.home):
        words = words_span(clean)
        jobs.append((kind, name, None, "clean", words, clean))
        for noise_name, noise in noises.items():
            for snr in args.snr:
                jobs.append((kind, name, noise_name, f"{snr:g} dB", words, mixed(clean, noise, snr, rng, mixer)))
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        founds = list(pool.map(utterances, [job[5] * 32768 for job in jobs], chunksize=16))
    for (kind, name, noise_name, condition, words, _), found in zip(jobs, founds):
        record["speech"].append({"kind": kind, "clip": name, "condition": condition, "noise": noise_name,
                                 "words": list(words), "found": found})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f)
    report(record, args.minimum)

if __name__ == "__main__":
    main()
