#!/usr/bin/env python3
"""Noise for adapting the acoustic model to noisy rooms in general, never the benchmark's kitchen recording.

Issue 16 asks for a default model built without the test half and without `noise/kitchen.flac` (the
evaluation's noise). This script makes the noise from sources that can be named and re-made anywhere:

* generated: pink (1/f) and brown (1/f^2) noise; a "fan": band-limited noise (80-3000 Hz) whose level wobbles
  slowly, with mains hum (50 Hz and its harmonics); "clatter": a low pink floor with short knocks and rings
  (noise bursts through two or three narrow resonances between 700 Hz and 6 kHz, decaying in 15-250 ms,
  about three a second, levels spread over 20 dB) and stretches of running water (band noise rising and
  falling over seconds);
* babble made from other speech: six talkers cut from the LibriVox read-speech clips in
  `../shared/benchmarks/recorded-speech` (public domain recordings), and four flite voices (kal, slt, rms,
  awb; Debian package flite) reading `bench/data/ood-tuning-sentences.txt`, summed in shuffled orders.

Every type is 60 s at 16 kHz, made from one seed, and stored as 16-bit WAV, so the bank is the same on every
machine. `mix` adds it to clips by the benchmark's own rule (upstream `mix.py`: noise scaled so that the
loudest 2048-sample frame of speech over the loudest frame of the noise segment is the SNR, then the sum
normalised to a peak of 0.5), drawing for each clip, SNR and copy a noise type and an offset from its seed.

usage: general_noise.py bank OUT_DIR [--seed 11]
       general_noise.py mix --bank DIR --out DIR --snr 6 9 --copies 2 [--seed 12] [--half dev]
writes OUT/clean/<id>.wav and OUT/<snr>db-<copy>/<id>.wav (copy a, b, ...), plus OUT/noise-of.tsv: which noise
type and offset each mixed file got.
"""
import argparse
import glob
import importlib.util
import os
import subprocess
import sys
import wave

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import domain  # noqa: E402

RATE = 16000
SECONDS = 60
TYPES = ["pink", "brown", "fan", "clatter", "babble-librivox", "babble-flite"]
# Recorded ambiences (experiment): HARK_REAL_NOISE=DIR with NAME.ogg files adds "real-NAME" types for the names listed
# in HARK_REAL_NOISE_TYPES (comma-separated).
REAL_DIR = os.environ.get("HARK_REAL_NOISE")
if REAL_DIR:
    TYPES = TYPES + ["real-" + n for n in os.environ.get("HARK_REAL_NOISE_TYPES", "").split(",") if n]


def upstream_mix():
    """The benchmark's mix.py as a module: its reader, writer and frame-energy rule are the ones used here."""
    path = os.path.join(domain.speech_dir(), "mix.py")
    spec = importlib.util.spec_from_file_location("upstream_mix", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_wav(path):
    with wave.open(path) as w:
        if w.getframerate() != RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"{path}: expected 16 kHz mono 16-bit WAV")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768.0


def read_any(path):
    """Any audio sox reads, as 16 kHz mono floats."""
    # -D: no dither. sox dithers whenever it resamples (flite kal speaks at 8 kHz), with a random generator,
    # and two runs then differed by 1-2 LSB: the bank must come out the same every time.
    raw = subprocess.run(["sox", "-D", path, "-t", "raw", "-r", str(RATE), "-c", "1", "-e", "signed", "-b", "16", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32768.0


def normalised(x):
    return x / max(np.abs(x).max(), 1e-12)


def coloured(n, rng, power):
    """White noise with its spectrum shaped as 1/f^power (power 1: pink, 2: brown)."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(spectrum.size, dtype=np.float64)
    spectrum[1:] /= f[1:] ** (power / 2)
    spectrum[0] = 0
    return normalised(np.fft.irfft(spectrum, n))


def band(n, rng, low, high):
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / RATE)
    spectrum[(f < low) | (f > high)] = 0
    return normalised(np.fft.irfft(spectrum, n))


def resonate(x, frequency, q):
    """A two-pole resonator (bandpass biquad) at `frequency` Hz."""
    w = 2 * np.pi * frequency / RATE
    alpha = np.sin(w) / (2 * q)
    b0, a0, a1, a2 = alpha, 1 + alpha, -2 * np.cos(w), 1 - alpha
    y = np.zeros_like(x)
    x1 = x2 = y1 = y2 = 0.0
    for i, v in enumerate(x):
        out = (b0 * v - b0 * x2 - a1 * y1 - a2 * y2) / a0
        x2, x1, y2, y1 = x1, v, y1, out
        y[i] = out
    return y


def fan(n, rng):
    t = np.arange(n) / RATE
    wobble = 1 + 0.3 * np.sin(2 * np.pi * 0.3 * t + rng.uniform(0, 2 * np.pi))
    hum = sum(np.sin(2 * np.pi * 50 * k * t + rng.uniform(0, 2 * np.pi)) / k for k in (1, 2, 3, 5))
    return normalised(band(n, rng, 80, 3000) * wobble + 0.15 * normalised(hum))


def clatter(n, rng):
    x = 0.03 * coloured(n, rng, 1)
    t = 0.0
    while True:
        t += rng.exponential(1 / 3)
        start = int(t * RATE)
        if start >= n:
            break
        length = int(rng.uniform(0.015, 0.25) * RATE * 4)
        burst = rng.standard_normal(length) * np.exp(-np.arange(length) / (length / 4))
        ring = sum(resonate(burst, rng.uniform(700, 6000), rng.uniform(8, 40)) for _ in range(int(rng.integers(2, 4))))
        ring = normalised(ring) * 10 ** (-rng.uniform(0, 20) / 20)
        end = min(n, start + length)
        x[start:end] += ring[: end - start]
    # Running water: band noise that swells and fades over a few seconds, twice a minute or so.
    for _ in range(2):
        length = int(rng.uniform(3, 8) * RATE)
        start = int(rng.integers(0, n - length))
        envelope = np.sin(np.linspace(0, np.pi, length)) ** 2
        x[start:start + length] += 0.3 * band(length, rng, 500, 4000) * envelope
    return normalised(x)


def babble(sources, talkers, n, rng):
    out = np.zeros(n)
    for _ in range(talkers):
        order = rng.permutation(len(sources))
        stream = np.concatenate([sources[i] for i in order])
        while stream.size < 2 * n:
            stream = np.concatenate([stream, stream])
        start = int(rng.integers(0, stream.size - n))
        out += normalised(stream[start:start + n])
    return normalised(out)


def flite_sentences(work):
    root = os.path.dirname(os.path.dirname(HERE))
    path = os.path.join(root, "bench", "data", "ood-tuning-sentences.txt")
    sentences = [line.strip() for line in open(path, encoding="utf-8") if line.strip() and not line.startswith("#")]
    clips = []
    os.makedirs(work, exist_ok=True)
    for index, sentence in enumerate(sentences):
        voice = ["kal", "slt", "rms", "awb"][index % 4]
        raw = os.path.join(work, f"{index:03d}-{voice}.wav")
        if not os.path.exists(raw):
            subprocess.run(["flite", "-voice", voice, "-t", sentence, "-o", raw + ".tmp.wav"], check=True)
            os.replace(raw + ".tmp.wav", raw)
        clips.append(read_any(raw))
    return clips


def make_bank(out, seed):
    os.makedirs(out, exist_ok=True)
    n = SECONDS * RATE
    mixer = upstream_mix()
    for index, kind in enumerate(TYPES):
        path = os.path.join(out, kind + ".wav")
        if os.path.exists(path):
            continue
        rng = np.random.default_rng([seed, index])
        if kind == "pink":
            x = coloured(n, rng, 1)
        elif kind == "brown":
            x = coloured(n, rng, 2)
        elif kind == "fan":
            x = fan(n, rng)
        elif kind == "clatter":
            x = clatter(n, rng)
        elif kind.startswith("real-"):
            recording = read_any(os.path.join(REAL_DIR, kind[5:] + ".ogg"))
            x = np.resize(recording, n)  # repeated end to start to fill the minute
        elif kind == "babble-librivox":
            files = sorted(glob.glob(os.path.join(domain.find_benchmarks(), "recorded-speech", "*.wav")))
            if not files:
                sys.exit("general_noise.py: no LibriVox clips in recorded-speech/")
            x = babble([read_any(f) for f in files], 6, n, rng)
        else:
            x = babble(flite_sentences(os.path.join(out, "flite")), 4, n, rng)
        mixer.write_wav(path + ".tmp", 0.5 * normalised(x))
        os.replace(path + ".tmp", path)
        print(f"general_noise: {path}", file=sys.stderr)


def mix(bank, out, snrs, copies, seed, half):
    mixer = upstream_mix()
    noises = {kind: read_wav(os.path.join(bank, kind + ".wav")) for kind in TYPES}
    clean_dir = os.path.join(domain.speech_dir(), "clean")
    names = sorted(f[:-5] for f in os.listdir(clean_dir) if f.endswith(".flac") and mixer.in_half(f, half))
    rng = np.random.default_rng(seed)
    letters = "abcdefgh"[:copies]
    os.makedirs(os.path.join(out, "clean"), exist_ok=True)
    for snr in snrs:
        for letter in letters:
            os.makedirs(os.path.join(out, f"{snr:g}db-{letter}"), exist_ok=True)
    rows = []
    for name in names:
        speech = mixer.read_flac(os.path.join(clean_dir, name + ".flac"))
        mixer.write_wav(os.path.join(out, "clean", name + ".wav"), speech)
        for snr in snrs:
            for letter in letters:
                kind = TYPES[int(rng.integers(0, len(TYPES)))]
                noise = noises[kind]
                if speech.size >= noise.size:
                    sys.exit(f"{name}: clip longer than the {kind} noise")
                start = int(rng.integers(0, noise.size - speech.size))
                segment = noise[start:start + speech.size]
                scale = np.sqrt(mixer.max_frame_energy(speech) / (mixer.max_frame_energy(segment) * 10 ** (snr / 10.0)))
                mixed = speech + scale * segment
                mixed /= 2.0 * np.max(np.abs(mixed))
                mixer.write_wav(os.path.join(out, f"{snr:g}db-{letter}", name + ".wav"), mixed)
                rows.append(f"{snr:g}db-{letter}/{name}\t{kind}\t{start}")
    with open(os.path.join(out, "noise-of.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    print(f"general_noise: {len(names)} clips x {len(snrs)} SNRs x {copies} copies -> {out}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bank")
    b.add_argument("out")
    b.add_argument("--seed", type=int, default=11)
    m = sub.add_parser("mix")
    m.add_argument("--bank", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--snr", type=float, nargs="+", default=[6, 9])
    m.add_argument("--copies", type=int, default=2)
    m.add_argument("--seed", type=int, default=12)
    m.add_argument("--half", choices=["dev"], default="dev")
    args = ap.parse_args()
    if args.command == "bank":
        make_bank(args.out, args.seed)
    else:
        if not 1 <= args.copies <= 8:
            sys.exit("general_noise.py: --copies must be 1-8")
        mix(args.bank, args.out, args.snr, args.copies, args.seed, args.half)


if __name__ == "__main__":
    main()
