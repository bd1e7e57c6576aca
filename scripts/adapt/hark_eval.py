#!/usr/bin/env python3
"""Within-dev check of acoustic models through `hark recognize`, as a user runs it.

Decodes dev clips 4…–7… of the speech-to-intent benchmark (held out from adaptation on clips 0…–3…) mixed
with the benchmark's kitchen noise by its own mixer and seed (20240601), with `hark recognize --workspace
Intents/barista.json --json` and each model given (the stock model when no --acoustic-model is passed),
and scores every clip by the upstream rule (score.py: intent and every labelled slot right; rejected counts
as an error). For a model adapted without the kitchen recording (`scripts/adapt-model.sh --noise general`)
this is a test on a kind of noise it never heard; for one adapted on the kitchen it is an upper bound.

usage: hark_eval.py --model stock= --model general=DIR [--snr clean 6 9 12 ...] [--jobs 2] [--hark PATH]
                    [--work DIR] [--digits 4567] [--whole-model]
By default each model's means go to the noisy-speech decoder only (`--noisy-means DIR/means`, as Hark uses
Models/en-us-noisy.means), and an empty DIR means `--noisy-means none`; --whole-model gives the model to both
decoders (`--acoustic-model DIR`) and an empty DIR is hark's default.
prints a table (accepted share per model and condition, mean over the SNRs, fixed/broken against the first
model) and writes WORK/hark-eval.json
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import domain  # noqa: E402


def score_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("score", os.path.join(domain.speech_dir(), "score.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recognise(hark, model, files, jobs, whole, more=()):
    """{clip id: hark's JSON line} for `files` decoded with `model` (see --whole-model) and the `more` arguments,
    split over `jobs`."""
    if model and whole:
        extra = ["--acoustic-model", model]
    else:
        extra = ["--noisy-means", os.path.join(model, "means") if model else "none"]
    return recognise_with(hark, extra + list(more), files, jobs)


def recognise_with(hark, extra, files, jobs):
    """{clip id: hark's JSON line} for `files`, `hark recognize --workspace Intents/barista.json --json` with the
    `extra` arguments, split over `jobs` processes (bench/speech_ns_webrtc.py passes none: Hark's defaults)."""
    parts = [files[i::jobs] for i in range(jobs)]

    def run(part):
        if not part:
            return []
        cmd = [hark, "recognize", "--workspace", os.path.join(ROOT, "Intents", "barista.json"), "--json"] + extra
        out = subprocess.run(cmd + part, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"hark_eval: {' '.join(cmd[:6])} … failed ({out.returncode}): {out.stderr[-2000:]}")
        return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]

    with ThreadPoolExecutor(jobs) as pool:
        rows = [row for part in pool.map(run, parts) for row in part]
    return {os.path.basename(row["file"])[:-4]: row for row in rows}


def scored(decoded, labels, score):
    """{clip id: {id, right, transcript, snr_db, noisy_decoding, decode_ms, audio_seconds, right_if_accepted, accepted,
    intent_confidence and the margins}}: each decoded clip scored by the upstream rule (score.py: the intent and every
    labelled slot right; rejected is wrong), and as if it had been accepted."""
    rows = {}
    for clip, row in decoded.items():
        label = labels[clip + ".wav"]
        intent, slots = score.result_of(row)
        right = intent == label["intent"] and all(
            slots.get(k) == score.norm(v) for k, v in (label.get("slots") or {}).items())
        intent, slots = score.result_of(dict(row, accepted=True))
        heard_right = intent == label["intent"] and all(
            slots.get(k) == score.norm(v) for k, v in (label.get("slots") or {}).items())
        rows[clip] = {"id": clip, "right": bool(right), "transcript": row.get("transcript"),
                      "snr_db": row.get("snr_db"), "noisy_decoding": row.get("noisy_decoding"),
                      "decode_ms": row.get("decode_ms"), "audio_seconds": row.get("audio_seconds"),
                      # what the rejection decided from, so that other rejection points can be scored from the same run
                      "right_if_accepted": bool(heard_right), "accepted": row.get("accepted"),
                      "intent_confidence": (row.get("intents") or [{}])[0].get("confidence", 0.0),
                      **{k: row[k] for k in ("acoustic_margin", "speech_margin", "near_margin") if k in row}}
    return rows


def cached(cache, decode, reuse=True):
    """The scored rows stored in `cache` (one JSON object per line) when it exists and `reuse`; else `decode()`'s,
    stored there first."""
    if reuse and os.path.exists(cache):
        return {json.loads(line)["id"]: json.loads(line) for line in open(cache)}
    rows = decode()
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache, "w") as f:
        f.writelines(json.dumps(rows[c]) + "\n" for c in sorted(rows))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", required=True, help="NAME=DIR (empty DIR: hark's default model)")
    ap.add_argument("--snr", nargs="+", default=["clean", "6", "9", "12", "15", "18", "21", "24"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--hark", default=os.path.join(ROOT, ".build", "release", "hark"))
    ap.add_argument("--work", default=os.path.join(ROOT, ".build", "adapt", "hark-eval"))
    ap.add_argument("--digits", default="4567")
    ap.add_argument("--whole-model", action="store_true",
                    help="give each model to both decoders (--acoustic-model) instead of the noisy-speech one only "
                         "(--noisy-means, as Hark ships it; an empty DIR is then --noisy-means none)")
    ap.add_argument("--hark-args", action="append", default=[], metavar="NAME=ARGS",
                    help="more `hark recognize` arguments for model NAME's runs, e.g. --hark-args='wide=--noisy-below 30' "
                         "(the same DIR may be given under two names to compare settings)")
    args = ap.parse_args()
    if not os.access(args.hark, os.X_OK):
        sys.exit(f"hark_eval: {args.hark}: no hark binary (swift build -c release, or --hark PATH)")
    models = []
    for spec in args.model:
        name, _, path = spec.partition("=")
        if not name:
            sys.exit(f"hark_eval: --model {spec!r}: expected NAME=DIR")
        if path and not os.path.isfile(os.path.join(path, "means")):
            sys.exit(f"hark_eval: --model {spec!r}: {path} holds no 'means' file")
        models.append((name, path))
    more = {}
    for spec in args.hark_args:
        name, _, rest = spec.partition("=")
        if name not in dict(models):
            sys.exit(f"hark_eval: --hark-args {spec!r}: no --model named {name!r}")
        more[name] = more.get(name, []) + shlex.split(rest)
    mix = os.path.join(args.work, "mix-20240601")
    if not os.path.exists(os.path.join(mix, ".done")):
        subprocess.run([sys.executable, os.path.join(domain.speech_dir(), "mix.py"), mix, "--half", "dev"], check=True,
                       stdout=subprocess.DEVNULL)
        open(os.path.join(mix, ".done"), "w").close()
    labels = domain.labels()
    score = score_module()
    results = {}
    for condition in args.snr:
        folder = os.path.join(mix, "clean" if condition == "clean" else f"{condition}db")
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f[0] in args.digits and f.endswith(".wav"))
        for name, path in models:
            # the runs are cached by name, condition and any --hark-args, so that changed settings are decoded again
            settings = "".join("-" + re.sub(r"[^A-Za-z0-9.]+", "_", a).strip("_") for a in more.get(name, ()))
            cache = os.path.join(args.work, "runs", f"{name}{settings}-{condition}.jsonl")
            rows = cached(cache, lambda: scored(recognise(args.hark, path, files, args.jobs, args.whole_model,
                                                                  more.get(name, ())), labels, score))
            missing = len(files) - len(rows)
            results[(name, condition)] = (rows, len(files), missing)
            print(f"hark_eval: {name} {condition}: {sum(r['right'] for r in rows.values())}/{len(files)}", file=sys.stderr)
    names = [n for n, _ in models]
    print("| model | " + " | ".join(args.snr) + " | mean of SNRs |")
    print("|---" * (len(args.snr) + 2) + "|")
    summary = {}
    for name in names:
        cells, noisy = [], []
        for condition in args.snr:
            rows, total, _ = results[(name, condition)]
            share = sum(r["right"] for r in rows.values()) / total
            cells.append(f"{share:.3f}")
            summary[f"{name} {condition}"] = share
            if condition != "clean":
                noisy.append(share)
        mean = sum(noisy) / len(noisy) if noisy else float("nan")
        print(f"| {name} | " + " | ".join(cells) + f" | {mean:.3f} |")
    if len(names) > 1:
        base = names[0]
        for name in names[1:]:
            cells = []
            for condition in args.snr:
                a, b = results[(base, condition)][0], results[(name, condition)][0]
                fixed = sum(1 for c in b if b[c]["right"] and not a.get(c, {}).get("right"))
                broken = sum(1 for c in a if a[c]["right"] and not b.get(c, {}).get("right"))
                cells.append(f"+{fixed}/-{broken}")
            print(f"| {name} vs {base} | " + " | ".join(cells) + " | |")
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "hark-eval.json"), "w") as f:
        json.dump({"models": dict(models), "hark_args": more, "digits": args.digits, "shares": summary}, f, indent=1)


if __name__ == "__main__":
    main()
