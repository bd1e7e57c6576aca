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

3. with `--sounds`, sounds it was not chosen on: each recorded sound of Debian's sound-theme-freedesktop
   (/usr/share/sounds/freedesktop/stereo: clicks, a camera shutter, chimes, ring tones, and eight spoken channel names),
   peak-normalised to a third of full scale, 1 s into a quiet room (±100 of 32,768) with 1.5 s after: whether each
   starts an utterance and how much of it is voiced, and what `hark recognize --stream` makes of it against home.json
   and barista.json (a chime is pitched, so the voice rule keeps it; the acoustic rejection must turn it away).

usage: python3 bench/endpoint_noise.py --bank DIR [--minimum 0 0.05 0.1 0.15 0.2 0.25] [--orders 80] [--home 80]
                                      [--snr 6 12] [--jobs 2] [--json FILE] [--from-json FILE] [--sounds [DIR]] [--hark PATH]
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
import subprocess
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


def utterances(x):
    """Every utterance the endpointer finds in `x` (int16 scale), going on after each with its noise floor kept:
    [(first frame, frame after its last speech, voiced frames, voiced frame pairs, pairs whose pitch held)], by
    speech_endpointed.utterances (the Python copy of Endpointer that speech_endpointed.py checks against hark)."""
    return list(se.utterances(x))


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


def handed(found, frames, share=None):
    """The utterance the endpointer hands on first when it dismisses those with fewer than `frames` voiced frames and,
    with `share`, those whose pitch held over that share of their voiced frame pairs."""
    return next((f for f in found if se.has_voice(f[2], frames, f[3], f[4], share)), None)


def outcome(row, frames, share=None):
    """What the first utterance handed on is: "words" (it overlaps them), "burst" (it ends before them) or "lost"."""
    first = handed(row["found"], frames, share)
    words = row["words"]
    if first is None or first[0] > words[1]:
        return "lost"
    return "burst" if first[1] < words[0] else "words"


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
            {"lost": lost, "burst": burst, "words": right}[outcome(row, frames)][kind] += 1
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


def sounds(folder, minimum, hark):
    """Part 3: each recorded sound in `folder` (any format sox reads) alone in a quiet room: the endpointer's copy,
    then `hark recognize --stream` against home.json and barista.json (what the appliance would do with it)."""
    files = sorted(f for f in glob.glob(os.path.join(folder, "*")) if os.path.isfile(f))
    if not files:
        sys.exit(f"endpoint_noise: no sounds in {folder} (apt-get install sound-theme-freedesktop)")
    rng = np.random.default_rng(3)
    out_dir = os.path.join(OUT, "sounds")
    os.makedirs(out_dir, exist_ok=True)
    wavs = []
    rows = []
    for path in files:
        raw = subprocess.run(["sox", path, "-t", "raw", "-r", str(RATE), "-c", "1", "-e", "signed-integer", "-b", "16", "-"],
                             capture_output=True)
        if raw.returncode != 0:
            sys.exit(f"endpoint_noise: sox cannot read {path}: {raw.stderr.decode(errors='replace').strip()}")
        x = np.frombuffer(raw.stdout, dtype="<i2").astype(np.float64)
        x = x / max(np.abs(x).max(), 1.0) * 12000
        stream = np.round(np.concatenate([np.zeros(RATE), x, np.zeros(int(1.5 * RATE))]) + rng.uniform(-100, 100, x.size + int(2.5 * RATE)))
        name = os.path.splitext(os.path.basename(path))[0]
        wav = os.path.join(out_dir, name + ".wav")
        se.write(wav, stream)
        wavs.append(wav)
        found = utterances(stream)
        cells = ", ".join(f"{(f[1] - f[0]) / 100:.2f} / {f[2] / 100:.2f} / "
                          + ("-" if steady_share(f) is None else f"{steady_share(f):.2f}") for f in found) or "none"
        kept = sum(1 for f in found if se.has_voice(f[2], int(round(minimum * 100)), f[3], f[4], se.STEADY_PITCH_SHARE))
        rows.append([name, f"{x.size / RATE:.2f}", cells, f"{kept} of {len(found)}"])
    heard = {}
    for workspace in ("home", "barista"):
        run = subprocess.run([hark, "recognize", "--workspace", os.path.join(ROOT, "Intents", workspace + ".json"), "--json",
                              "--stream", "--unpaced"] + wavs, capture_output=True, text=True)
        for line in run.stdout.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                name = os.path.splitext(os.path.basename(row["file"]))[0]
                if "transcript" not in row:  # no utterance handed on: hark says why (no speech found)
                    heard[(name, workspace)] = "no speech"
                    continue
                heard[(name, workspace)] = f'"{row["transcript"]}"' + (" **accepted**" if row.get("accepted") else "")
    print(f"\n| sound ({folder}) | seconds | utterances: length / voiced s / steady-pitch share | handed on |"
          " `hark recognize --stream`: home.json | barista.json |")
    print("|---|---|---|---|---|---|")
    for name, seconds, cells, kept in rows:
        print(f"| {name} | {seconds} | {cells} | {kept} | {heard.get((name, 'home'), '?')} | {heard.get((name, 'barista'), '?')} |")
    for workspace in ("home", "barista"):
        accepted = sum(1 for (n, w), text in heard.items() if w == workspace and "accepted" in text)
        print(f"\n{workspace}.json accepts {accepted} of the {len(rows)} sounds as a command")
    print()


def steady_share(f):
    """An utterance's share of consecutive voiced frame pairs whose pitch held (None under STEADY_PITCH_PAIRS pairs)."""
    return f[4] / f[3] if f[3] >= se.STEADY_PITCH_PAIRS else None


def report_steadiness(record, shares, minimum):
    """Part 2 again with the minimum fixed and the steady-pitch rule at each share: speech kept, and the pitch's
    steadiness of the utterances that hold words."""
    frames = int(round(minimum * 100))
    print(f"\n| steady-pitch share (minimum voiced {minimum:g} s) | first utterance handed on holds the words: orders / home"
          " (of 1,040) | words never handed on: orders / home |")
    print("|---|---|---|")
    for share in shares:
        counts = {(kind, what): 0 for kind in ("order", "home") for what in ("words", "lost", "burst")}
        for row in record["speech"]:
            counts[(row["kind"], outcome(row, frames, share))] += 1
        label = "none" if share is None else f"{share:g}"
        print(f"| {label} | {counts[('order', 'words')]} / {counts[('home', 'words')]} | {counts[('order', 'lost')]} /"
              f" {counts[('home', 'lost')]} |")
    for kind in ("order", "home"):
        values = [steady_share(f) for row in record["speech"] if row["kind"] == kind for f in row["found"]
                  if f[0] <= row["words"][1] and f[1] >= row["words"][0] and steady_share(f) is not None]
        print(f"\n{kind}: steady-pitch share of utterances holding words, p50 / p99 / max: "
              f"{np.percentile(values, 50):.2f} / {np.percentile(values, 99):.2f} / {max(values):.2f} (n={len(values)})")


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
    ap.add_argument("--hark", default=os.path.join(ROOT, ".build", "release", "hark"))
    ap.add_argument("--sounds", nargs="*", metavar="DIR",
                    help="also part 3, on the sounds in these folders (none named: Debian's sound-theme-freedesktop)")
    ap.add_argument("--share", type=float, nargs="+", default=[0.4, 0.45, 0.5, 0.6, 0.7],
                    help="steady-pitch shares for the second table (none: no such rule, always shown)")
    args = ap.parse_args()
    args.share = [None] + args.share
    if args.sounds == []:
        args.sounds = ["/usr/share/sounds/freedesktop/stereo"]
    if args.sounds:
        if not os.access(args.hark, os.X_OK):
            sys.exit(f"endpoint_noise: no hark at {args.hark} (swift build -c release)")
        for folder in args.sounds:
            sounds(folder, se.MINIMUM_VOICED, args.hark)
    if args.from_json:
        record = json.load(open(args.from_json))
        report(record, args.minimum)
        return report_steadiness(record, args.share, se.MINIMUM_VOICED)
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
    report_steadiness(record, args.share, se.MINIMUM_VOICED)

if __name__ == "__main__":
    main()
