#!/usr/bin/env python3
"""When is the answer ready? Hark's result delay after the endpoint, and its decoding cost (issue 16 item 3).

Ways the appliance can decode an endpointed utterance (`UtteranceListener`, docs/speech.md):

* streaming (`--cmn stream`): decoded as the audio arrives, with the cepstral mean of its first second, the phone
  loop alongside; at the endpoint only the last blocks remain;
* during the silence (the batch mean, the default): the whole utterance is decoded as soon as 0.3 s of quiet has
  followed the last speech, while the endpointer waits out the rest of its 0.8 s, with the phone-loop pass on
  another thread alongside the grammar pass (`silence`) or after it on the same decoder (`silence-after`, Hark
  before 2026-12-05);
* at the endpoint (`--decoded-tail 0.8`, what Hark did first): its delay is the whole decoding, so that run is not
  paced.

This script measures each through `hark recognize --stream --json` (the file fed to the endpointer in 100 ms blocks
at real-time pace, as the microphone delivers it):

* result delay: milliseconds from the endpointer's decision to the transcript (`result_delay_ms`);
* real-time factor: processor seconds of decoding (both passes, `decode_cpu_ms`) per second of audio decoded;
* accuracy: the decoded audio and the mean differ, so each is scored, home commands by intent (accepted and
  right), barista orders by the benchmark's rule (score.py).

Inputs, none tuned on: home commands = the unseen home paraphrases (bench/data/home-paraphrases.jsonl) spoken
by flite's four voices; barista orders = clips of the speech-to-intent benchmark's chosen half. Each gets 0.5 s
of quiet before and 1.5 s after (a speaker stops; the room goes on), then the benchmark's kitchen noise by its
own rule (mix.py: frame-energy SNR, peak 0.5; seed 20240601), or nothing for "clean".

usage: python3 bench/speech_latency.py [--clips 30] [--snr clean 12 6] [--half test] [--hark PATH]
                                     [--modes streaming silence silence-after endpoint silence-english silence-topn32
                                       silence-topn12 silence-level]
writes bench/out/latency/latency.json and bench/out/latency/report.md
needs: a release build (swift build -c release), and bash scripts/setup-bench.sh (sox, flite, numpy)
"""
import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speechlib  # noqa: E402

ROOT = speechlib.ROOT
OUT = os.path.join(ROOT, "bench", "out", "latency")
VOICES = ["slt", "rms", "awb", "kal"]
LEAD, TRAIL = 0.5, 1.5


def log(message):
    print(f"speech_latency: {message}", file=sys.stderr, flush=True)


def spread(values, count):
    """`count` items spread evenly over `values` (all of them when there are fewer)."""
    if len(values) <= count:
        return list(values)
    step = len(values) / count
    return [values[int(i * step)] for i in range(count)]


def padded(pcm):
    return np.concatenate([np.zeros(int(LEAD * 16000)), pcm, np.zeros(int(TRAIL * 16000))])


def home_inputs(count, work):
    rows = [json.loads(line) for line in open(os.path.join(ROOT, "bench", "data", "home-paraphrases.jsonl"))]
    chosen = spread(rows, count)
    mixer = speechlib.upstream_mixer()
    items = []
    for i, row in enumerate(chosen):
        voice = VOICES[i % len(VOICES)]
        # The synthesised file is named by what it says: a run with another --clips picks other sentences for the
        # same index (until 2026-12-06 it was named by index alone, so such a run scored home clips 0-14 of a later
        # 30-clip run against the wrong sentences).
        said = hashlib.sha1(f"{voice}\n{row['text']}".encode()).hexdigest()[:10]
        raw = os.path.join(work, f"home-{i:03d}-{voice}.raw.wav")
        wav = os.path.join(work, f"home-{i:03d}-{said}.wav")
        if not os.path.exists(wav):
            subprocess.run(["flite", "-voice", voice, "-t", row["text"], "-o", raw], check=True)
            subprocess.run(["sox", "-D", raw, "-r", "16000", "-c", "1", "-b", "16", wav], check=True)
            os.remove(raw)
        items.append({"id": f"home-{i:03d}", "kind": "home", "text": row["text"], "intent": row["intent"],
                      "voice": voice, "pcm": padded(speechlib.read_wav_float(wav))})
    return items, mixer


def barista_inputs(count, half, mixer):
    clean = os.path.join(speechlib.speech_dir(), "clean")
    names = sorted(f[:-5] for f in os.listdir(clean) if f.endswith(".flac") and speechlib.in_half(f, half))
    items = []
    for name in spread(names, count):
        items.append({"id": name, "kind": "barista", "pcm": padded(mixer.read_flac(os.path.join(clean, name + ".flac")))})
    return items


def write_condition(items, condition, mixer, directory, seed):
    """Mixes every item at `condition` by the benchmark's rule into `directory`; returns {id: path}."""
    os.makedirs(directory, exist_ok=True)
    noise = mixer.read_flac(os.path.join(speechlib.speech_dir(), "noise", "kitchen.flac"))
    rng = np.random.default_rng(seed)
    paths = {}
    for item in items:
        speech = item["pcm"]
        start = int(rng.integers(0, noise.size - speech.size))
        if condition == "clean":
            mix = speech
        else:
            segment = noise[start: start + speech.size]
            snr = float(condition)
            scale = np.sqrt(mixer.max_frame_energy(speech) / (mixer.max_frame_energy(segment) * 10 ** (snr / 10.0)))
            mix = speech + scale * segment
            mix = mix / (2.0 * np.max(np.abs(mix)))
        path = os.path.join(directory, item["id"] + ".wav")
        mixer.write_wav(path, mix)
        paths[item["id"]] = path
    return paths


# mode: (label in the report, decoded tail, paced, extra arguments)
MODES = {
    "streaming": ("streaming (`--cmn stream`)", 0.3, True, ["--cmn", "stream"]),
    "silence": ("during the silence (batch mean)", 0.3, True, ["--cmn", "batch"]),
    "silence-after": ("during the silence, phone loop after the grammar (before 2026-12-05)", 0.3, True,
                      ["--cmn", "batch", "--phone-loop", "after"]),
    "endpoint": ("at the endpoint (batch mean)", 0.8, False, ["--cmn", "batch"]),
    "silence-topn32": ("during the silence, noisy-speech decoder with `-topn 32` (before 2026-12-05)", 0.3, True,
                       ["--cmn", "batch", "--noisy-decoder-args", "-topn 32"]),
    "silence-topn12": ("during the silence, noisy-speech decoder with `-topn 12` (an experiment)", 0.3, True,
                       ["--cmn", "batch", "--noisy-decoder-args", "-topn 12"]),
    "silence-level": ("during the silence, the endpointer judging by level alone (`--voicing off`, before 2026-12-06)", 0.3,
                      True, ["--cmn", "batch", "--voicing", "off"]),
    "silence-english": ("during the silence, with the judge against any English (`--any-english on`)", 0.3, True,
                        ["--cmn", "batch", "--any-english", "on"]),
    "silence-reading": ("during the silence, the second reading only checking (`--second-reading check`)", 0.3, True,
                        ["--cmn", "batch", "--second-reading", "check"]),
    "silence-unread": ("during the silence, without the second reading (`--second-reading off`, before 2026-12-07)", 0.3,
                       True, ["--cmn", "batch", "--second-reading", "off"]),
}


def recognize(hark, workspace, files, tail, paced, extra=()):
    argv = [hark, "recognize", "--workspace", workspace, "--stream", "--decoded-tail", str(tail), "--json", *extra]
    if not paced:
        argv.append("--unpaced")
    # Exit status 65 means some file had no speech: its line says so and is scored as a miss.
    done = subprocess.run(argv + files, cwd=ROOT, capture_output=True, text=True)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(rows) != len(files):
        sys.exit(f"speech_latency: {len(rows)} results for {len(files)} files; stderr: {done.stderr[-2000:]}")
    return {os.path.basename(row["file"])[:-4]: row for row in rows}


def right(item, row, labels, score):
    if "error" in row:
        return False
    if item["kind"] == "home":
        intents = row.get("intents") or []
        return bool(row.get("accepted")) and bool(intents) and intents[0]["intent"] == item["intent"]
    label = labels[item["id"] + ".wav"]
    intent, slots = score.result_of(row)
    want = {k: score.norm(v) for k, v in label.get("slots", {}).items()}
    return intent == label["intent"] and all(slots.get(k) == v for k, v in want.items())


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summarise(items, rows, labels, score, budget):
    # A clip in which the endpointer found no speech (loud noise drowning a quiet voice) has no result at all.
    heard = [rows[i["id"]] for i in items if "result_delay_ms" in rows[i["id"]]]
    delays = [row["result_delay_ms"] for row in heard] or [float("nan")]
    rtf = [row["decode_cpu_ms"] / 1000 / row["audio_seconds"] for row in heard] or [float("nan")]
    ends = [row.get("endpoint") for row in heard]
    return {
        "clips": len(items), "no_speech_found": len(items) - len(heard),
        "right": sum(right(i, rows[i["id"]], labels, score) for i in items),
        "delay_p50_ms": statistics.median(delays), "delay_p95_ms": percentile(delays, 95),
        "delay_max_ms": max(delays), "within_budget": sum(d <= budget for d in delays),
        "rtf_median": statistics.median(rtf), "rtf_max": max(rtf),
        "ended_by_silence": sum(e == "trailing_silence" for e in ends),
        "delays_ms": delays,
    }


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(), "load_before": [round(x, 2) for x in load]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=30, help="clips of each kind (default 30)")
    ap.add_argument("--snr", nargs="+", default=["clean", "12", "6"])
    ap.add_argument("--half", choices=["dev", "test"], default="test")
    ap.add_argument("--seed", type=int, default=speechlib.SEED)
    ap.add_argument("--hark", default=os.path.join(ROOT, ".build", "release", "hark"))
    ap.add_argument("--modes", nargs="+", choices=list(MODES), default=["silence", "silence-after", "endpoint"])
    args = ap.parse_args()
    if not os.access(args.hark, os.X_OK):
        sys.exit(f"speech_latency: no hark binary at {args.hark} (swift build -c release)")
    score_spec = __import__("importlib.util").util.spec_from_file_location("score", os.path.join(speechlib.speech_dir(), "score.py"))
    score = __import__("importlib.util").util.module_from_spec(score_spec)
    score_spec.loader.exec_module(score)
    labels = json.load(open(os.path.join(speechlib.speech_dir(), "labels.json")))

    work = os.path.join(OUT, "audio")
    os.makedirs(work, exist_ok=True)
    home, mixer = home_inputs(args.clips, work)
    barista = barista_inputs(args.clips, args.half, mixer)
    sets = [("home", home, os.path.join(ROOT, "Intents", "home.json"), 100),
            ("barista", barista, os.path.join(ROOT, "Intents", "barista.json"), 150)]
    results = {"machine": machine(), "clips": args.clips, "half": args.half, "seed": args.seed, "modes": args.modes,
               "conditions": {}}
    for condition in args.snr:
        for name, items, workspace, budget in sets:
            paths = write_condition(items, condition, mixer, os.path.join(work, name, condition), args.seed)
            files = [paths[i["id"]] for i in items]
            entry = {"set": name, "condition": condition, "budget_ms": budget, "rows": {}}
            for mode in args.modes:
                _, tail, paced, extra = MODES[mode]
                log(f"{name} {condition}: {len(files)} clips, {mode}{'' if paced else ' (not paced)'}")
                rows = recognize(args.hark, workspace, files, tail, paced, extra)
                entry[mode] = summarise(items, rows, labels, score, budget)
                entry["rows"][mode] = rows
            results["conditions"][f"{name} {condition}"] = entry
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    with open(os.path.join(OUT, "latency.json"), "w") as f:
        json.dump(results, f, indent=1)
    report = render(results)
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write(report)
    print(report)


def render(results):
    m = results["machine"]
    lines = [f"Machine: {m['cpu']}, {m['cores']} cores, load before {m['load_before']}, after {results['load_after']}; "
             f"{results['clips']} clips of each kind, barista from the {results['half']} half, seed {results['seed']}.", "",
             "| set | condition | decoding | right | no speech found | result delay p50 / p95 / max ms | within budget | RTF median / max |",
             "|---|---|---|---|---|---|---|---|"]
    for key, c in results["conditions"].items():
        for mode in results["modes"]:
            label, s = MODES[mode][0], c[mode]
            lines.append(f"| {c['set']} | {c['condition']} | {label} | {s['right']}/{s['clips']} | {s['no_speech_found']} | "
                         f"{s['delay_p50_ms']:.0f} / {s['delay_p95_ms']:.0f} / {s['delay_max_ms']:.0f} | "
                         f"{s['within_budget']}/{s['clips'] - s['no_speech_found']} (≤ {c['budget_ms']} ms) | {s['rtf_median']:.3f} / {s['rtf_max']:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
