#!/usr/bin/env python3
"""How much of a noise recording is voiced, by the endpointer's voicing measure: a lead for telling babble (voices,
a television) from other noise, which the acoustic rejection cannot (docs/speech.md, "Known weakness").

usage: python3 bench/voiced_share.py [--seconds S] [--window W ...] NOISE.wav|NOISE.flac ...
For each file (16 kHz mono; FLAC through sox), peak-normalised: the share of 10 ms frames whose VoicingDetector
strength (speech_endpointed.py's copy of HarkAudio's, 100-900 Hz periodicity) reaches the endpointer's 0.65, over
the whole file and per window of W seconds (5th, 50th and 95th percentile over the windows).
Needs numpy and scipy (bash scripts/setup-bench.sh).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speech_endpointed as se  # noqa: E402
import speechlib  # noqa: E402

def load(path):
    """The file's samples at integer scale; FLAC through the benchmark's own reader (sox), as the mixers read it."""
    if not path.endswith(".flac"):
        return speechlib.read_wav_float(path) * 32768.0
    try:
        return speechlib.upstream_mixer().read_flac(path) * 32768.0
    except subprocess.CalledProcessError as error:
        sys.exit(f"voiced_share: {path}: sox could not read it: {error.stderr.decode(errors='replace').strip()}")

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--seconds", type=float, default=300, help="read at most this much of each file")
    ap.add_argument("--window", type=float, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()
    for path in args.files:
        if not os.path.exists(path):
            sys.exit(f"voiced_share: {path}: no such file")
    print("| noise | voiced frames | " + " | ".join(f"{w:g} s windows: p5 / p50 / p95" for w in args.window) + " |")
    print("|---" * (2 + len(args.window)) + "|")
    for path in args.files:
        x = load(path)[: int(args.seconds * 16000)]
        if x.size < 16000:
            sys.exit(f"voiced_share: {path}: shorter than a second")
        x = x / max(np.abs(x).max(), 1e-9) * 16000
        voiced = se.voicing(x) >= se.VOICING_THRESHOLD
        cells = []
        for w in args.window:
            n = int(w * 100)
            share = voiced[: voiced.size // n * n].reshape(-1, n).mean(1)
            cells.append(" / ".join(f"{np.percentile(share, q):.2f}" for q in (5, 50, 95)) + f" (n={share.size})")
        print(f"| {os.path.basename(path)} | {voiced.mean():.3f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
