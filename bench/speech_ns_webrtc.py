#!/usr/bin/env python3
"""WebRTC noise suppression (Debian's libwebrtc-audio-processing 0.3) as a front end before `hark recognize`:
does it raise command acceptance on the dev half? (issue 16 item 1; bench-only, Hark does not link it)

usage: python3 bench/speech_ns_webrtc.py [--out bench/out/ns-webrtc] [--snr clean 6 9 12]
                                         [--levels low moderate high veryhigh] [--digits 4567] [--jobs 2]
                                         [--hark PATH] [--high-pass] [--hark-args "..."] [--fresh]
Needs numpy, sox, g++, pkg-config and libwebrtc-audio-processing-dev (scripts/setup-bench.sh), Intents/barista.json
(make intents) and a built hark (default .build/release/hark). It compiles bench/ns_webrtc.cc into --out itself.

The clips are those of scripts/adapt/hark_eval.py: dev clips 4…–7… of the speech-to-intent benchmark (159), mixed
with the benchmark's kitchen noise by its own mixer (mix.py --half dev, seed 20240601) into --out/mix-20240601.
Each clip of each condition goes through bench/ns_webrtc.cc at each --level (only the noise suppressor on; a fresh
instance per clip), then the unprocessed and the processed clips are decoded with `hark recognize --workspace
Intents/barista.json --json` and Hark's defaults (so Models/en-us-noisy.means for utterances it estimates below
20 dB SNR), the files split over --jobs processes (hark_eval.recognise_with). Scoring is the upstream rule
(hark_eval.scored: score.py's result_of and norm): intent and every labelled slot right; rejected or no
result is an error. Prints the accepted share per condition and front end, the mean over the noisy SNRs (clean
excluded, as hark_eval.py), clips fixed/broken against unprocessed, the share of clips Hark decoded with its
noisy-speech settings (suppression raises the SNR it estimates), and the processing cost: ns_webrtc's CPU
seconds (user + system of the whole process, with reading and writing files; and inside its frame loop only)
per second of audio. Decodes are cached in --out/runs (dropped when hark, the mix or the processed audio is
newer, or with --fresh). Writes --out/ns-webrtc.json.
Decision rule (issue 16: "keep it only if it helps on dev"): a level helps if it raises the mean over the SNRs and
the 6 dB share without lowering the clean share.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

import numpy as np  # the medians below; the benchmark's mixer needs it too, so a missing numpy fails here, early

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "bench", "ns_webrtc.cc")
sys.path.insert(0, os.path.join(ROOT, "scripts", "adapt"))
import domain  # noqa: E402
import hark_eval  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "bench"))
import aec  # noqa: E402  (its WebRTC builder and child_cpu)

SEED = 20240601
WORKSPACE = os.path.join(ROOT, "Intents", "barista.json")


def die(message):
    sys.exit(f"speech_ns_webrtc: {message}")


def build(out_dir):
    """bench/ns_webrtc.cc compiled into out_dir, by bench/aec.py's builder (the same flags as aec_webrtc.cc)."""
    return aec.build_webrtc(out_dir, SOURCE, "speech_ns_webrtc")


def mix_clips(out_dir, snrs):
    """The benchmark's own mixer into out_dir/mix-20240601 (dev half); returns that folder."""
    mix = os.path.join(out_dir, f"mix-{SEED}")
    noisy = sorted({float(s) for s in snrs if s != "clean"})
    stamp = os.path.join(mix, ".done")
    if os.path.exists(stamp) and all(os.path.isdir(os.path.join(mix, f"{s:g}db")) for s in noisy):
        return mix
    command = [sys.executable, os.path.join(domain.speech_dir(), "mix.py"), mix, "--half", "dev", "--seed", str(SEED)]
    if noisy:
        command += ["--snr"] + [f"{s:g}" for s in noisy]
    print(f"speech_ns_webrtc: mixing: {' '.join(command)}", file=sys.stderr)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    open(stamp, "w").close()
    return mix


def suppress(binary, level, pairs, list_path, high_pass):
    """Runs ns_webrtc once over all (in, out) pairs; returns (process CPU s, frame-loop CPU s, audio s)."""
    with open(list_path, "w") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in pairs)
    command = [binary, "--level", level, "--stats", "--list", list_path] + (["--high-pass"] if high_pass else [])
    before = aec.child_cpu()
    out = subprocess.run(command, capture_output=True, text=True)
    cpu = aec.child_cpu() - before
    if out.returncode != 0:
        die(f"{' '.join(command)} failed ({out.returncode}): {out.stderr.strip()}")
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    return cpu, stats["process_cpu_seconds"], stats["audio_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "ns-webrtc"))
    ap.add_argument("--snr", nargs="+", default=["clean", "6", "9", "12"])
    ap.add_argument("--levels", nargs="+", default=["low", "moderate", "high", "veryhigh"],
                    choices=["low", "moderate", "high", "veryhigh"])
    ap.add_argument("--digits", default="4567")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--hark", default=os.path.join(ROOT, ".build", "release", "hark"))
    ap.add_argument("--high-pass", action="store_true", help="also enable WebRTC's high-pass filter")
    ap.add_argument("--hark-args", default="", help="extra `hark recognize` arguments for every decode (a diagnostic; "
                                                    "the runs are cached apart)")
    ap.add_argument("--fresh", action="store_true", help="decode again even when a cached run exists")
    args = ap.parse_args()
    if not os.access(args.hark, os.X_OK):
        die(f"{args.hark}: no hark binary (swift build -c release, or --hark PATH)")
    if not os.path.isfile(WORKSPACE):
        die(f"{WORKSPACE}: missing (make intents)")
    for condition in args.snr:
        if condition != "clean":
            try:
                float(condition)
            except ValueError:
                die(f"--snr {condition!r}: expected clean or a number of dB")
    extra = shlex.split(args.hark_args)
    os.makedirs(args.out, exist_ok=True)
    binary = build(args.out)
    mix = mix_clips(args.out, args.snr)
    clips = domain.clips(args.digits)  # refuses test-half digits
    labels = domain.labels()
    score = hark_eval.score_module()
    suffix = "" if not (args.high_pass or extra) else "-" + "-".join(
        (["hp"] if args.high_pass else []) + ["".join(c if c.isalnum() else "_" for c in args.hark_args)] * bool(extra))

    # 1. Noise suppression of every clip, per condition and level (sequential: it is cheap).
    variants = ["unprocessed"] + args.levels
    folders = {}
    cost = {level: {"process_cpu_s": 0.0, "loop_cpu_s": 0.0, "audio_s": 0.0} for level in args.levels}
    for condition in args.snr:
        source = os.path.join(mix, "clean" if condition == "clean" else f"{float(condition):g}db")
        missing = [c for c in clips if not os.path.isfile(os.path.join(source, c + ".wav"))]
        if missing:
            die(f"{source}: {len(missing)} clips missing (e.g. {missing[0]}.wav): delete {mix} to mix again")
        folders[("unprocessed", condition)] = source
        for level in args.levels:
            target = os.path.join(args.out, "processed" + ("-hp" if args.high_pass else ""), level,
                                  "clean" if condition == "clean" else f"{float(condition):g}db")
            os.makedirs(target, exist_ok=True)
            pairs = [(os.path.join(source, c + ".wav"), os.path.join(target, c + ".wav")) for c in clips]
            stamp = os.path.join(target, ".done")
            if not (os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(binary)):
                cpu, loop, audio = suppress(binary, level, pairs, os.path.join(target, "pairs.tsv"), args.high_pass)
                for key, value in (("process_cpu_s", cpu), ("loop_cpu_s", loop), ("audio_s", audio)):
                    cost[level][key] += value
                open(stamp, "w").close()
            folders[(level, condition)] = target
    if not any(c["audio_s"] for c in cost.values()):
        # Everything was processed in an earlier run: measure the cost again on the 6 dB (else first) condition.
        condition = "6" if "6" in args.snr else args.snr[0]
        source = folders[("unprocessed", condition)]
        scratch = os.path.join(args.out, "cost-scratch")
        os.makedirs(scratch, exist_ok=True)
        for level in args.levels:
            pairs = [(os.path.join(source, c + ".wav"), os.path.join(scratch, c + ".wav")) for c in clips]
            cpu, loop, audio = suppress(binary, level, pairs, os.path.join(scratch, "pairs.tsv"), args.high_pass)
            cost[level] = {"process_cpu_s": cpu, "loop_cpu_s": loop, "audio_s": audio}

    # 2. Decoding (cached per variant and condition).
    results = {}
    started = time.time()
    for condition in args.snr:
        for variant in variants:
            folder = folders[(variant, condition)]
            files = [os.path.join(folder, c + ".wav") for c in clips]
            cache = os.path.join(args.out, "runs" + suffix, f"{variant}-{condition}.jsonl")
            newest = max([os.path.getmtime(args.hark), os.path.getmtime(os.path.join(mix, ".done"))]
                         + ([os.path.getmtime(os.path.join(folder, ".done"))] if variant != "unprocessed" else []))
            reuse = not args.fresh and os.path.exists(cache) and os.path.getmtime(cache) >= newest
            decode = lambda: hark_eval.scored(hark_eval.recognise_with(args.hark, extra, files, args.jobs), labels, score)  # noqa: E731
            rows = hark_eval.cached(cache, decode, reuse)
            if len(rows) != len(files):
                print(f"speech_ns_webrtc: warning: {variant} {condition}: {len(files) - len(rows)} of {len(files)} "
                      f"clips have no result (counted as errors)", file=sys.stderr)
            results[(variant, condition)] = rows
            right = sum(r["right"] for r in rows.values())
            print(f"speech_ns_webrtc: {condition} {variant}: {right}/{len(files)} ({time.time() - started:.0f} s)",
                  file=sys.stderr)

    # 3. Tables.
    n = len(clips)
    noisy = [c for c in args.snr if c != "clean"]
    share = {(v, c): sum(r["right"] for r in results[(v, c)].values()) / n for v in variants for c in args.snr}
    mean = {v: (sum(share[(v, c)] for c in noisy) / len(noisy) if noisy else float("nan")) for v in variants}
    head = [("clean" if c == "clean" else f"{c} dB") for c in args.snr]
    print(f"\nAccepted share, dev clips {args.digits[0]}…–{args.digits[-1]}… ({n}), kitchen noise, seed {SEED}, "
          f"Intents/barista.json, Hark's defaults{(' + ' + args.hark_args) if extra else ''}; mean over "
          f"{', '.join(noisy)} dB:\n")
    print("| front end | " + " | ".join(head) + " | mean |")
    print("|---" * (len(head) + 2) + "|")
    for v in variants:
        name = v if v == "unprocessed" else f"WebRTC NS {v}" + (" + high-pass" if args.high_pass else "")
        print(f"| {name} | " + " | ".join(f"{share[(v, c)]:.3f}" for c in args.snr) + f" | {mean[v]:.3f} |")
    changes = {}
    for v in args.levels:
        cells = []
        for c in args.snr:
            a, b = results[("unprocessed", c)], results[(v, c)]
            fixed = sum(1 for k in clips if b.get(k, {}).get("right") and not a.get(k, {}).get("right"))
            broken = sum(1 for k in clips if a.get(k, {}).get("right") and not b.get(k, {}).get("right"))
            changes[f"{v} {c}"] = {"fixed": fixed, "broken": broken}
            cells.append(f"+{fixed}/−{broken}")
        print(f"| {v}: fixed/broken vs unprocessed | " + " | ".join(cells) + " | |")
    noisy_share = {(v, c): sum(bool(r.get("noisy_decoding")) for r in results[(v, c)].values()) / n
                   for v in variants for c in args.snr}
    median_snr = {(v, c): float(np.median([r["snr_db"] for r in results[(v, c)].values() if r.get("snr_db") is not None]
                                          or [float("nan")])) for v in variants for c in args.snr}
    print("\nShare decoded with Hark's noisy-speech settings (estimated SNR below 20 dB) / median estimated SNR dB:\n")
    print("| front end | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for v in variants:
        print(f"| {v} | " + " | ".join(f"{noisy_share[(v, c)]:.2f} / {median_snr[(v, c)]:.0f}" for c in args.snr) + " |")
    print("\nProcessing cost of ns_webrtc (CPU seconds per audio second; whole process incl. file I/O / frame loop only):\n")
    for level in args.levels:
        c = cost[level]
        print(f"- {level}: {c['process_cpu_s'] / c['audio_s']:.4f} / {c['loop_cpu_s'] / c['audio_s']:.4f} "
              f"over {c['audio_s']:.0f} s of audio")
    keep = [v for v in args.levels if "clean" in args.snr and "6" in args.snr and mean[v] > mean["unprocessed"]
            and share[(v, "6")] > share[("unprocessed", "6")] and share[(v, "clean")] >= share[("unprocessed", "clean")]]
    print("\nDecision (raises the mean and the 6 dB share without lowering clean): "
          + (f"helps at {', '.join(keep)}" if keep else "no level helps: do not use"))

    report = {
        "clips": n, "digits": args.digits, "seed": SEED, "snr": args.snr, "levels": args.levels,
        "high_pass": args.high_pass, "hark_args": args.hark_args, "hark": args.hark,
        "workspace": "Intents/barista.json",
        "accepted": {f"{v} {c}": {"right": round(share[(v, c)] * n), "share": round(share[(v, c)], 4)}
                     for v in variants for c in args.snr},
        "mean_of_snrs": {v: round(mean[v], 4) for v in variants},
        "fixed_broken_vs_unprocessed": changes,
        "noisy_decoding_share": {f"{v} {c}": round(noisy_share[(v, c)], 3) for v in variants for c in args.snr},
        "median_estimated_snr_db": {f"{v} {c}": median_snr[(v, c)] for v in variants for c in args.snr},
        "cost": {level: {**{k: round(x, 4) for k, x in cost[level].items()},
                         "process_cpu_per_audio_s": round(cost[level]["process_cpu_s"] / cost[level]["audio_s"], 5),
                         "loop_cpu_per_audio_s": round(cost[level]["loop_cpu_s"] / cost[level]["audio_s"], 5)}
                 for level in args.levels},
        "helps": keep,
    }
    path = os.path.join(args.out, f"ns-webrtc{suffix}.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"speech_ns_webrtc: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
