"""Out-of-domain speech in kitchen noise: how often is a non-command accepted as a command when the kitchen is
loud? `bench/speech.sh` measures false acceptance on clean synthesised sentences; noise pulls every acoustic
margin towards zero, and noisy utterances are decoded with the noisy-speech settings (`--noisy-below`), so
this mixes the same sentences with the benchmark's kitchen noise by the upstream rule (mix.py: max 2048-sample
frame energy of speech over noise = 10^(SNR/10), mix normalised to a peak of 0.5) and runs `hark recognize` on
them, with the noisy-speech settings on (default) and off.

usage: python3 bench/speech_ood_noise.py [--voice flite-kal] [--snr 6 12] [--seed 99] [--modes on,off] [--hark PATH]
needs: bench/out/speech/ood/<voice>/*.wav (made by bench/speech.sh), numpy, sox
writes: bench/out/speech/ood-noise/<voice>/<snr>db/*.wav and <workspace>-<noisy|plain>-<snr>db.jsonl; prints a table
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import speechlib  # noqa: E402

WORKSPACES = {"barista": os.path.join(ROOT, "Intents", "barista.json"), "home": os.path.join(ROOT, "Intents", "home.json")}


def mix(voice_dir, out_dir, snrs, seed):
    upstream = speechlib.upstream_mixer()
    noise = upstream.read_flac(os.path.join(speechlib.speech_dir(), "noise", "kitchen.flac"))
    rng = np.random.default_rng(seed)
    names = sorted(f for f in os.listdir(voice_dir) if f.endswith(".wav"))
    for snr in snrs:
        os.makedirs(os.path.join(out_dir, f"{snr:g}db"), exist_ok=True)
    for name in names:
        speech = speechlib.read_wav_float(os.path.join(voice_dir, name))
        start = int(rng.integers(0, noise.size - speech.size))
        segment = noise[start: start + speech.size]
        for snr in snrs:
            scale = np.sqrt(upstream.max_frame_energy(speech) / (upstream.max_frame_energy(segment) * 10 ** (snr / 10.0)))
            mixed = speech + scale * segment
            mixed *= 0.5 / max(np.abs(mixed).max(), 1e-9)
            upstream.write_wav(os.path.join(out_dir, f"{snr:g}db", name), mixed)
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--voice", default="flite-kal")
    ap.add_argument("--snr", type=float, nargs="+", default=[6, 12])
    ap.add_argument("--seed", type=int, default=99, help="noise offsets (not the benchmark's 20240601)")
    ap.add_argument("--modes", default="on,off", help="noisy-speech settings to run: on, off or both (default)")
    ap.add_argument("--hark", default=os.environ.get("HARK", os.path.join(ROOT, ".build", "release", "hark")))
    args = ap.parse_args()
    voice_dir = os.path.join(ROOT, "bench", "out", "speech", "ood", args.voice)
    if not os.path.isdir(voice_dir):
        speechlib.die(f"{voice_dir}: no synthesised sentences; run bash bench/speech.sh first")
    out_dir = os.path.join(ROOT, "bench", "out", "speech", "ood-noise", args.voice)
    names = mix(voice_dir, out_dir, args.snr, args.seed)
    print(f"| workspace | noisy-speech settings | " + " | ".join(f"{s:g} dB" for s in args.snr) + " |")
    print("|---|---|" + "---|" * len(args.snr))
    for ws, path in WORKSPACES.items():
        for mode, flag in (("on (`--noisy-below 20`)", "20"), ("off", "off")):
            if mode.split()[0] not in args.modes.split(","):
                continue
            cells = []
            for snr in args.snr:
                files = [os.path.join(out_dir, f"{snr:g}db", n) for n in names]
                result = os.path.join(out_dir, f"{ws}-{'noisy' if flag != 'off' else 'plain'}-{snr:g}db.jsonl")
                with open(result, "w") as f:
                    subprocess.run([args.hark, "recognize", "--workspace", path, "--noisy-below", flag, "--json", *files],
                                   stdout=f, check=False)
                rows = [json.loads(l) for l in open(result) if l.startswith("{")]
                accepted = sum(1 for r in rows if r.get("accepted"))
                noisy = sum(1 for r in rows if r.get("noisy_decoding"))
                cells.append(f"{accepted}/{len(rows)} ({noisy} decoded as noisy)")
            print(f"| {ws} | {mode} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
