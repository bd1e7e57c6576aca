"""Rejection of out-of-domain speech in noise (issue 16, item 2): which features of a decoded utterance tell a
command from a non-command when the room is loud, and where should the rejection point sit?

Everything here is tuning data, kept apart from what the reports quote:
  - non-commands: bench/data/ood-tuning-sentences.txt (not bench/data/ood-sentences.txt, the reported set),
    synthesised with flite's slt and rms voices (the report uses kal and eSpeak NG);
  - commands: the speech-to-intent benchmark's DEV half (the first --dev clips by name) for barista.json, and
    home.json examples synthesised with flite slt / rms / awb;
  - noise: generated here, never the benchmark's kitchen recording: pink noise plus babble made of flite awb
    reading the tuning sentences, seeded, mixed by the benchmark's own rule (mix.py: max 2048-sample frame
    energy of speech over noise = 10^(SNR/10), peak 0.5).
A tuning non-command may equal a workspace's counterexample (those are non-commands too); none may equal an
example, nor a sentence of the reported set.

usage: python3 bench/speech_rejection_snr.py [--snr 6 12] [--dev 60] [--home 40] [--jobs 2] [--hark PATH] [--noise WAV]
       python3 bench/speech_rejection_snr.py --fit [--noise WAV]    (the rule search over the features of the last run)
       python3 bench/speech_rejection_snr.py --separation [--noise WAV]    (how well each feature alone separates)
       python3 bench/speech_rejection_snr.py --general clean 12db [--general-args "-beam 1e-40 …"]    (the margin against any English)
needs: flite, sox, numpy; a release build of hark
writes: bench/out/speech/rejection-snr/ (WAVs, one JSONL of `hark recognize --json` per set, workspace and SNR)
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import speechlib  # noqa: E402

OUT = os.path.join(ROOT, "bench", "out", "speech", "rejection-snr")
WORKSPACES = {"barista": os.path.join(ROOT, "Intents", "barista.json"), "home": os.path.join(ROOT, "Intents", "home.json")}
RATE = 16000


def words(text):
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def read_lines(path):
    return [l.strip() for l in open(path, encoding="utf-8") if l.strip() and not l.startswith("#")]


def workspace_examples(path):
    ws = json.load(open(path))
    return [e["text"] for i in ws.get("intents", []) for e in i.get("examples", [])]


def check_tuning_sentences(tuning):
    reported = {words(s) for s in read_lines(os.path.join(ROOT, "bench", "data", "ood-sentences.txt"))}
    examples = {words(t) for p in WORKSPACES.values() for t in workspace_examples(p)}
    problems = [s for s in tuning if words(s) in reported or words(s) in examples]
    if problems:
        speechlib.die(f"bench/data/ood-tuning-sentences.txt: in the reported set or a workspace's examples: {problems}")


def write_wav(path, x):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def synthesise(text, voice, out):
    """flite → 16 kHz mono s16 with 0.5 s of silence either side (as bench/speech.py does), cached."""
    if os.path.exists(out):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    raw = out + ".raw.wav"
    subprocess.run(["flite", "-voice", voice, "-t", text, "-o", raw], check=True, capture_output=True)
    subprocess.run(["sox", "-D", raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out, "pad", "0.5", "0.5"],
                   check=True, capture_output=True)
    os.remove(raw)
    return out


def pink(n, rng):
    """1/f noise by shaping white noise's spectrum."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(spectrum.size)
    spectrum[1:] /= np.sqrt(f[1:])
    spectrum[0] = 0
    x = np.fft.irfft(spectrum, n)
    return x / np.abs(x).max()


def tuning_noise(sentences, seed):
    """60 s of pink noise plus four-talker babble (flite awb reading the tuning sentences in shuffled orders)."""
    path = os.path.join(OUT, "noise", f"tuning-{seed}.wav")
    if os.path.exists(path):
        return speechlib.read_wav_float(path)
    rng = np.random.default_rng(seed)
    clips = [speechlib.read_wav_float(synthesise(s, "awb", os.path.join(OUT, "babble", f"{i:03d}.wav"))) for i, s in enumerate(sentences)]
    n = 60 * RATE
    babble = np.zeros(n)
    for _talker in range(4):
        stream = np.concatenate([clips[i] for i in rng.permutation(len(clips))])
        start = int(rng.integers(0, stream.size - n))
        babble += stream[start:start + n]
    noise = pink(n, rng) / 4 + babble / np.abs(babble).max()
    noise /= np.abs(noise).max()
    write_wav(path, noise * 0.5)
    # What the file holds (16-bit), so a run from the cached file mixes exactly what the first run did.
    return speechlib.read_wav_float(path)


def mix_set(name, clean_files, noise, snrs, seed):
    """{condition: [files]}: "clean" and each SNR, mixed by the upstream rule with a seeded noise offset."""
    upstream = speechlib.upstream_mixer()
    rng = np.random.default_rng(seed)
    sets = {"clean": clean_files}
    for snr in snrs:
        sets[f"{snr:g}db"] = []
    for path in clean_files:
        speech = speechlib.read_wav_float(path)
        start = int(rng.integers(0, noise.size - speech.size))
        segment = noise[start:start + speech.size]
        for snr in snrs:
            out = os.path.join(OUT, "mix", name, f"{snr:g}db", os.path.basename(path))
            if not os.path.exists(out):
                scale = np.sqrt(upstream.max_frame_energy(speech) / (upstream.max_frame_energy(segment) * 10 ** (snr / 10.0)))
                mixed = speech + scale * segment
                write_wav(out, mixed * 0.5 / max(np.abs(mixed).max(), 1e-9))
            sets[f"{snr:g}db"].append(out)
    return sets


def recognise(hark, workspace, files, result, jobs):
    """`hark recognize --json` over files in `jobs` processes; cached in `result` (a JSONL)."""
    if os.path.exists(result) and sum(1 for _ in open(result)) == len(files):
        return [json.loads(l) for l in open(result)]
    parts = [files[i::jobs] for i in range(jobs)]

    def run(part):
        done = subprocess.run(["nice", hark, "recognize", "--workspace", WORKSPACES[workspace], "--json", *part],
                              capture_output=True, text=True)
        return [json.loads(l) for l in done.stdout.splitlines() if l.startswith("{")]

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = [r for part in pool.map(run, parts) for r in part]
    os.makedirs(os.path.dirname(result), exist_ok=True)
    with open(result, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return rows


def coverage(row):
    """Fraction of the utterance's loud frames (25 ms, above the midpoint between its 10th and 90th percentile
    power in dB) that lie inside a recognised word: a grammar path forced onto other speech covers part of it
    with silence and fillers."""
    x = speechlib.read_wav_float(row["file"])
    frame = RATE // 40
    n = x.size // frame
    if n < 4:
        return 1.0
    power = 10 * np.log10(np.mean(x[:n * frame].reshape(n, frame) ** 2, axis=1) + 1e-10)
    lo, hi = np.percentile(power, 10), np.percentile(power, 90)
    loud = power > (lo + hi) / 2
    inside = np.zeros(n, dtype=bool)
    for w in row.get("words", []):
        inside[int(w["start"] * 40):int(np.ceil(w["end"] * 40))] = True
    return float((loud & inside).sum() / max(loud.sum(), 1))


def features(row):
    intent = (row.get("intents") or [{}])[0].get("confidence", 0.0)
    return {
        "margin": row.get("acoustic_margin", -99.0),
        "snr": row.get("snr_db", 60.0),
        "coverage": coverage(row) if row.get("transcript") else 0.0,
        "intent": intent,
        "heard": bool(row.get("transcript")),
        "accepted": bool(row.get("accepted")),
    }


def current_rule(f):
    """What Hark does today: the decision `hark recognize` made (acoustic confidence, from the margin with the
    rejection point of the decoder that decoded it, and an intent confidence of 0.2)."""
    return f["accepted"]


def make_rule(knee, slope, cap, min_coverage):
    """The rejection point rises by `slope` per dB of estimated SNR below `knee` (up to `cap`), and a transcript
    must cover `min_coverage` of the utterance's loud frames."""
    def rule(f):
        point = min(cap, -3.0 + slope * max(0.0, knee - f["snr"]))
        return f["heard"] and f["intent"] >= 0.2 and f["margin"] >= point and f["coverage"] >= min_coverage
    return rule


def rates(table, rule):
    """{(kind, workspace, condition): (accepted, total)}"""
    out = {}
    for f in table:
        key = (f["kind"], f["workspace"], f["condition"])
        a, n = out.get(key, (0, 0))
        out[key] = (a + (1 if rule(f) else 0), n + 1)
    return out


def fit(table):
    """The rule that rejects the most tuning non-commands while no command condition loses more than one
    point of acceptance against today's rule (every condition, dev barista and synthesised home apart)."""
    base = rates(table, current_rule)
    best = None
    for knee in (14, 16, 18, 20, 22, 25, 30):
        for slope in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4):
            for cap in (-2.5, -2.0, -1.5, -1.0):
                for cov in (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
                    r = rates(table, make_rule(knee, slope, cap, cov))
                    ok = all(r[k][0] >= base[k][0] - 0.01 * base[k][1] for k in r if k[0] != "ood")
                    if not ok:
                        continue
                    false = sum(v[0] for k, v in r.items() if k[0] == "ood")
                    kept = sum(v[0] for k, v in r.items() if k[0] != "ood")
                    key = (false, -kept, slope, -cov)
                    if best is None or key < best[0]:
                        best = (key, (knee, slope, cap, cov), r)
    return base, best


def print_rates(title, r):
    print(title)
    for k in sorted(r):
        a, n = r[k]
        print(f"  {k[0]:5} {k[1]:8} {k[2]:6} {a:3}/{n:3} = {a / n:.3f}")


def main_fit():
    table = [json.loads(l) for l in open(os.path.join(OUT, "features.jsonl"))]
    base, best = fit(table)
    print_rates("today's rule (hark recognize's own decisions):", base)
    if best is None:
        print("no rule keeps every command condition within one point")
        return
    (false, kept, *_), (knee, slope, cap, cov), r = best
    print(f"best: knee {knee} dB, slope {slope}/dB, cap {cap}, coverage >= {cov}: {false} non-commands accepted")
    print_rates("with it:", r)


def auc(positives, negatives):
    """Area under the ROC curve: the chance that a random positive scores above a random negative (ties half)."""
    p, n = np.asarray(positives)[:, None], np.asarray(negatives)[None, :]
    return float((p > n).mean() + 0.5 * (p == n).mean())


def separation():
    """How well each number alone tells the commands from the non-commands that got a transcript, per workspace
    and condition (bench/README.md, "Nor does the weakest word's margin"): the utterance margin, the margin over the
    words alone (`speech_margin`), the weakest word's margin, the intent confidence, and the words' frames' margin
    minus the rest's (the background)."""
    def numbers(row):
        frames = row["audio_seconds"] * 100
        words = [(w["margin"], (w["end"] - w["start"]) * 100) for w in row["words"] if w.get("margin") is not None]
        inside = sum(d for _, d in words)
        on_words = sum(m * d for m, d in words) / max(inside, 1)
        background = (row["acoustic_margin"] * frames - on_words * inside) / max(frames - inside, 1)
        return {"margin": row["acoustic_margin"], "speech margin": row.get("speech_margin", -99.0),
                "weakest word": min((m for m, _ in words), default=-99.0),
                "intent": (row.get("intents") or [{}])[0].get("confidence", 0.0), "words - background": on_words - background,
                "background": background}
    decoded, rows = {}, {}
    for name in sorted(os.listdir(os.path.join(OUT, "results"))):
        kind, ws, condition = name[:-len(".jsonl")].split("-")
        decoded[(kind, ws, condition)] = [json.loads(l) for l in open(os.path.join(OUT, "results", name))]
        rows[(kind, ws, condition)] = [numbers(r) for r in decoded[(kind, ws, condition)]
                                       if r.get("transcript") and r.get("acoustic_margin") is not None]
    for ws, kind in (("barista", "dev"), ("home", "home")):
        for condition in sorted({k[2] for k in rows}):
            commands, others = rows.get((kind, ws, condition), []), rows.get(("ood", ws, condition), [])
            if commands and others:
                print(f"{ws} {condition}: " + ", ".join(
                    f"{key} {auc([c[key] for c in commands], [o[key] for o in others]):.3f}" for key in commands[0]
                    if key != "background") + f"; commands' background median {np.median([c['background'] for c in commands]):.2f}")
    # Accepted with the noisy-speech decoder's rejection point moved (the usual decoder keeps -3.0; intent >= 0.2).
    for point in (-2.0, -2.5, -3.0, -3.5, -4.0):
        counts = []
        for key in sorted(k for k in decoded if k[2] != "clean"):
            kept = sum(1 for r in decoded[key] if r.get("transcript") and r.get("acoustic_margin") is not None
                       and (r.get("intents") or [{}])[0].get("confidence", 0.0) >= 0.2
                       and r["acoustic_margin"] >= (point if r.get("noisy_decoding") else -3.0))
            counts.append(f"{'/'.join(key)} {kept}/{len(decoded[key])}")
        print(f"noisy-speech point {point}: " + ", ".join(counts))
    # The same with the margin over the words alone (`speech_margin`), one point for both decoders.
    for point in (-2.5, -3.0, -3.25, -3.5, -3.75, -4.0):
        counts = []
        for key in sorted(decoded):
            kept = sum(1 for r in decoded[key] if r.get("transcript") and r.get("speech_margin") is not None
                       and (r.get("intents") or [{}])[0].get("confidence", 0.0) >= 0.2 and r["speech_margin"] >= point)
            counts.append(f"{'/'.join(key)} {kept}/{len(decoded[key])}")
        print(f"speech margin point {point}: " + ", ".join(counts))


def general_reference(hark, conditions, jobs, decoder_args=None):
    """The margin against any English (docs/speech.md, "Any English as the reference"): each file of the last run
    decoded again by `hark transcribe --general --json` (PocketSphinx's general en-us language model), and the
    grammar's utterance margin minus that decoding's — how much better the workspace's sentences fit the audio than
    the best English words do. Prints its area under the ROC curve beside the utterance margin's, the commands and
    non-commands accepted today that it would keep at a few points, and the general decoding's real-time factor.
    `decoder_args` (--general-args) go to the general decoding as `--decoder-args`, cached apart (e.g. narrower beams)."""
    folder = "general" + ("-" + re.sub(r"[^A-Za-z0-9.]+", "_", decoder_args).strip("_") if decoder_args else "")
    extra = ["--decoder-args", decoder_args] if decoder_args else []
    for ws, kind in (("barista", "dev"), ("home", "home")):
        for condition in conditions:
            grammar = {}
            for k in (kind, "ood"):
                name = os.path.join(OUT, "results", f"{k}-{ws}-{condition}.jsonl")
                if not os.path.exists(name):
                    sys.exit(f"speech_rejection_snr: {name} is missing: run without --general first")
                grammar[k] = [json.loads(l) for l in open(name)]
            general = {}
            for k, rows in grammar.items():
                cache = os.path.join(OUT, folder, f"{k}-{condition}.jsonl")
                files = [r["file"] for r in rows]
                if not (os.path.exists(cache) and sum(1 for _ in open(cache)) == len(files)):
                    parts = [files[i::jobs] for i in range(jobs)]

                    def run(part):
                        done = subprocess.run(["nice", hark, "transcribe", "--general", "--json", *extra, *part],
                                              capture_output=True, text=True)
                        return [l for l in done.stdout.splitlines() if l.startswith("{")]

                    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                        lines = [l for part in pool.map(run, parts) for l in part]
                    os.makedirs(os.path.dirname(cache), exist_ok=True)
                    with open(cache, "w") as f:
                        f.writelines(l + "\n" for l in lines)
                general.update({os.path.abspath(r["file"]): r for r in map(json.loads, open(cache))})

            def judged(rows):
                out = []
                for r in rows:
                    g = general.get(os.path.abspath(r["file"]), {})
                    if r.get("acoustic_margin") is None or g.get("acoustic_margin") is None:
                        continue
                    accepted = bool(r.get("accepted")) and bool(r.get("intents"))
                    out.append((r["acoustic_margin"], r["acoustic_margin"] - g["acoustic_margin"], accepted,
                                g["decode_cpu_ms"] / 1000 / g["audio_seconds"]))
                return out
            commands, others = judged(grammar[kind]), judged(grammar["ood"])
            if not commands or not others:
                continue
            print(f"{ws} {condition}: AUC utterance margin {auc([c[0] for c in commands], [o[0] for o in others]):.3f}, "
                  f"against any English {auc([c[1] for c in commands], [o[1] for o in others]):.3f}; accepted today: "
                  f"commands {sum(c[2] for c in commands)}/{len(commands)}, non-commands {sum(o[2] for o in others)}/{len(others)}; "
                  f"general decoding RTF median {np.median([c[3] for c in commands + others]):.2f}")
            for point in (-1.0, -0.75, -0.5, -0.25, 0.0):
                print(f"  and against any English >= {point}: commands {sum(c[2] and c[1] >= point for c in commands)}, "
                      f"non-commands {sum(o[2] and o[1] >= point for o in others)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snr", type=float, nargs="+", default=[6, 12])
    ap.add_argument("--dev", type=int, default=60, help="dev-half clips for barista.json's commands")
    ap.add_argument("--home", type=int, default=40, help="home.json examples synthesised as its commands")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--hark", default=os.environ.get("HARK", os.path.join(ROOT, ".build", "release", "hark")))
    ap.add_argument("--noise", metavar="WAV", help="mix with this 16 kHz noise instead of the generated pink noise and "
                    "babble (e.g. a type from scripts/adapt/general_noise.py's bank); its own folder of results")
    ap.add_argument("--fit", action="store_true", help="the rule search over the features of the last run (with --noise: of that noise's run)")
    ap.add_argument("--separation", action="store_true", help="area under the ROC curve of each feature of the last run (with --noise: of that noise's run)")
    ap.add_argument("--general", nargs="+", metavar="CONDITION", help="the margin against any English (general language "
                    "model) over the last run's files in these conditions (clean, 12db, 6db); slow: RTF about 0.5 clean, 2 in noise")
    ap.add_argument("--general-args", metavar="ARGS", help="with --general: PocketSphinx settings for the general decoding, "
                    "e.g. \"-beam 1e-40 -wbeam 1e-25 -pbeam 1e-35 -fwdflat no\"")
    args = ap.parse_args()
    global OUT
    if args.noise:
        OUT = f"{OUT}-{os.path.splitext(os.path.basename(args.noise))[0]}"
    if args.fit:
        return main_fit()
    if args.separation:
        return separation()
    if args.general:
        return general_reference(args.hark, args.general, args.jobs, args.general_args)

    tuning = read_lines(os.path.join(ROOT, "bench", "data", "ood-tuning-sentences.txt"))
    check_tuning_sentences(tuning)
    # The cached WAVs, mixes and results are numbered, not named by their text: start again when a list changes.
    index = os.path.join(OUT, "inputs.json")
    inputs = {"tuning": tuning, "dev": args.dev, "home": args.home, "seed": args.seed, "snr": args.snr, "noise": args.noise}
    if os.path.exists(index) and json.load(open(index)) != inputs:
        import shutil
        shutil.rmtree(OUT)
    os.makedirs(OUT, exist_ok=True)
    json.dump(inputs, open(index, "w"))
    voices = ["slt", "rms"]
    ood = [synthesise(s, voices[i % 2], os.path.join(OUT, "ood", f"{i:03d}.wav")) for i, s in enumerate(tuning)]
    home_examples = sorted(set(workspace_examples(WORKSPACES["home"])))
    pick = np.random.default_rng(args.seed).permutation(len(home_examples))[:args.home]
    home = [synthesise(home_examples[i], ["slt", "rms", "awb"][k % 3], os.path.join(OUT, "home", f"{k:03d}.wav"))
            for k, i in enumerate(sorted(pick))]
    clean_dir = os.path.join(speechlib.speech_dir(), "clean")
    dev_names = sorted(n for n in os.listdir(clean_dir) if n.endswith(".flac") and speechlib.in_half(n, "dev"))[:args.dev]
    dev = []
    for n in dev_names:
        out = os.path.join(OUT, "dev", n.replace(".flac", ".wav"))
        if not os.path.exists(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run(["sox", "-D", os.path.join(clean_dir, n), "-r", "16000", "-c", "1", "-b", "16", out], check=True)
        dev.append(out)

    noise = speechlib.read_wav_float(args.noise) if args.noise else tuning_noise(tuning, args.seed)
    ood_mixes = mix_set("ood", ood, noise, args.snr, args.seed + 1)  # the same clips go to both workspaces
    sets = {
        ("ood", "barista"): ood_mixes,
        ("ood", "home"): ood_mixes,
        ("dev", "barista"): mix_set("dev", dev, noise, args.snr, args.seed + 2),
        ("home", "home"): mix_set("home", home, noise, args.snr, args.seed + 3),
    }
    table = []
    for (kind, ws), conditions in sets.items():
        for condition, files in conditions.items():
            rows = recognise(args.hark, ws, files, os.path.join(OUT, "results", f"{kind}-{ws}-{condition}.jsonl"), args.jobs)
            for r in rows:
                f = features(r)
                f.update(kind=kind, workspace=ws, condition=condition, file=os.path.basename(r["file"]))
                table.append(f)
            print(f"{kind}/{ws}/{condition}: {len(rows)} decoded", flush=True)
    with open(os.path.join(OUT, "features.jsonl"), "w") as f:
        for t in table:
            f.write(json.dumps(t) + "\n")
    print(f"features of {len(table)} utterances in {os.path.join(OUT, 'features.jsonl')}")


if __name__ == "__main__":
    main()
