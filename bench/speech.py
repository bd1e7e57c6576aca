#!/usr/bin/env python3
"""Speech-to-intent benchmark: Hark (`hark recognize`) against plain PocketSphinx, in kitchen noise, plus
the false-acceptance rate on synthesised out-of-domain speech. Driven by bench/speech.sh.

Steps (everything under bench/out/speech/, cached where it is data):
  1. mix     upstream mix.py → mix/seed-<seed>/<snr>db/*.wav and clean/*.wav (always the whole set, so a
             clip's noise offset does not depend on which half is run; only missing SNRs are mixed)
  2. hark    `hark recognize --workspace Intents/barista.json --json FILES...` per condition
  3. peer    bench/speech_peer.py in bench/.venv-pocketsphinx per condition
  4. score   upstream score.py per condition and per half (dev, test, all)
  5. ood     bench/data/ood-sentences.txt synthesised with flite and espeak-ng, recognised against
             barista.json and home.json (and the peer's grammar): false-acceptance rate per voice family
  6. report  bench/out/speech/report.md and speech.json (written here): acceptance tables next to the published ones, real-time factor,
             latency, peak memory (/usr/bin/time -v), the text path's slot accuracy, machine and seed
Engines that are not available (no `hark recognize` yet, no peer venv) are reported and skipped.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402
import speechlib  # noqa: E402

ROOT = speechlib.ROOT
OUT = os.path.join(ROOT, "bench", "out", "speech")
BARISTA = os.path.join(ROOT, "Intents", "barista.json")
HOME = os.path.join(ROOT, "Intents", "home.json")
PEER_PY = os.path.join(ROOT, "bench", ".venv-pocketsphinx", "bin", "python")
GRAMMAR = os.path.join(ROOT, "bench", "peers", "barista.jsgf")
OOD = os.path.join(ROOT, "bench", "data", "ood-sentences.txt")
PUBLISHED = [  # upstream src/plot.py, kitchen noise, SNR 6 … 24 dB and mean (shared/benchmarks/README.md)
    ("Picovoice Rhino (published)", [.96, .97, .98, .99, .99, .99, .99], .981),
    ("Microsoft LUIS (published)", [.86, .89, .90, .91, .92, .93, .93], .906),
    ("IBM Watson STT + NLU (published)", [.72, .84, .89, .93, .95, .95, .96], .891),
    ("Amazon Lex (published)", [.80, .84, .85, .87, .87, .87, .88], .854),
    ("Google Dialogflow (published)", [.70, .78, .78, .80, .81, .82, .83], .789),
]
FLITE_VOICES = ["kal", "slt", "rms", "awb"]
ESPEAK_VOICES = ["en-us", "en-gb-x-rp+f3"]
ENGINE_NAMES = {"hark": "Hark (hark recognize, barista.json)",
                "hark-stock-means": "Hark with the stock means for noisy utterances too (--noisy-means none)",
                "hark-any-english": "Hark with the judge against any English (--any-english on)",
                "hark-kitchen": "Hark + kitchen adaptation (MAP means from dev-half audio, scripts/adapt-model.sh)",
                "pocketsphinx": "PocketSphinx 5.1.1 PyPI, JSGF"}
# The acoustic model adapted on dev-half clips in kitchen noise (docs/model-adaptation.md).
KITCHEN_MODEL = os.path.join(ROOT, ".build", "adapt", "en-us-kitchen")


def log(message):
    print(f"speech: {message}", file=sys.stderr, flush=True)


# --- 1. mixing ----------------------------------------------------------------------------------------------

def clip_ids(half):
    clean = os.path.join(speechlib.speech_dir(), "clean")
    return sorted(f[:-5] for f in os.listdir(clean) if f.endswith(".flac") and speechlib.in_half(f, half))


def conditions(snrs):
    return ["clean"] + [f"{s:g}db" for s in snrs]


def ensure_mix(mix_dir, snrs, seed):
    """Run upstream mix.py for the SNRs whose folder is incomplete (always on the whole set)."""
    everything = clip_ids("all")
    missing = [s for s in snrs if not all(os.path.exists(os.path.join(mix_dir, f"{s:g}db", i + ".wav")) for i in everything)]
    clean_missing = not all(os.path.exists(os.path.join(mix_dir, "clean", i + ".wav")) for i in everything)
    if not missing and not clean_missing:
        log(f"mix: cached in {os.path.relpath(mix_dir, ROOT)}")
        return
    for tool in ("sox",):
        if not shutil.which(tool):
            speechlib.die(f"speech: {tool} not found: run `bash scripts/setup-bench.sh` (it installs sox)")
    snr_args = missing or [snrs[0]]
    log(f"mix: {len(everything)} clips at {' '.join(f'{s:g}' for s in snr_args)} dB (+ clean), seed {seed} "
        f"→ {os.path.relpath(mix_dir, ROOT)}")
    cmd = [sys.executable, os.path.join(speechlib.speech_dir(), "mix.py"), mix_dir, "--seed", str(seed),
           "--half", "all", "--snr", *[f"{s:g}" for s in snr_args]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        speechlib.die(f"speech: mix.py failed: {proc.stderr.strip()[-800:]}")
    log("mix: " + proc.stdout.strip())


_durations = {}


def duration_ms(path):
    if path not in _durations:
        with wave.open(path, "rb") as w:
            _durations[path] = 1000.0 * w.getnframes() / w.getframerate()
    return _durations[path]


# --- running engines ----------------------------------------------------------------------------------------

def timed(argv, stdout_path, cwd=ROOT):
    """Run argv under /usr/bin/time -v (when present), stdout to a file. → (returncode, wall s, max RSS KiB, stderr)."""
    time_file = stdout_path + ".time"
    full = ["/usr/bin/time", "-v", "-o", time_file, *argv] if os.path.exists("/usr/bin/time") else argv
    t0 = time.perf_counter()
    with open(stdout_path, "w", encoding="utf-8") as out:
        proc = subprocess.run(full, stdout=out, stderr=subprocess.PIPE, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    rss = None
    if os.path.exists(time_file):
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(time_file).read())
        rss = int(m.group(1)) if m else None
    return proc.returncode, wall, rss, proc.stderr


def hark_available(hark):
    if not os.path.exists(hark):
        return f"{os.path.relpath(hark, ROOT)} does not exist (swift build -c release)"
    proc = subprocess.run([hark, "recognize", "--help"], capture_output=True, text=True)
    if proc.returncode != 0:
        first = ((proc.stderr or proc.stdout).strip().splitlines() or [""])[0]
        return f"`hark recognize` is not available in this build ({first[:120]})"
    return None


def peer_available():
    if not os.path.exists(PEER_PY):
        return "bench/.venv-pocketsphinx missing (bash scripts/setup-bench.sh)"
    proc = subprocess.run([PEER_PY, "-c", "import pocketsphinx"], capture_output=True, text=True)
    if proc.returncode != 0:
        return "pocketsphinx does not import in bench/.venv-pocketsphinx (bash scripts/setup-bench.sh)"
    return None


def check_grammar():
    """The committed grammar must be what the domain file gives today."""
    expressions, slots = speechlib.domain()
    want = speechlib.factored_jsgf(expressions["orderDrink"], slots)
    have = open(GRAMMAR, encoding="utf-8").read() if os.path.exists(GRAMMAR) else None
    if have != want:
        speechlib.die(f"speech: {os.path.relpath(GRAMMAR, ROOT)} is missing or out of date: regenerate it with "
                      f"`bench/.venv-pocketsphinx/bin/python bench/speech_peer.py --write-grammar {os.path.relpath(GRAMMAR, ROOT)}`")


def engine_argv(engine, workspace, files, list_path, out_path, hark):
    if engine == "hark":
        return [hark, "recognize", "--workspace", workspace, "--json", *files]
    if engine == "hark-kitchen":
        return [hark, "recognize", "--workspace", workspace, "--acoustic-model", KITCHEN_MODEL, "--json", *files]
    if engine == "hark-stock-means":
        return [hark, "recognize", "--workspace", workspace, "--noisy-means", "none", "--json", *files]
    if engine == "hark-any-english":
        return [hark, "recognize", "--workspace", workspace, "--any-english", "on", "--json", *files]
    with open(list_path, "w") as f:
        f.write("\n".join(files) + "\n")
    return [PEER_PY, os.path.join(ROOT, "bench", "speech_peer.py"), "--grammar", GRAMMAR, "--list", list_path,
            "--out", out_path]


def run_task(task, hark):
    """One engine over one list of files. Hark prints its lines; the peer writes --out itself."""
    engine, workspace, files, out_path = task
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    list_path = out_path + ".list"
    argv = engine_argv(engine, workspace, files, list_path, out_path, hark)
    stdout_path = out_path if engine.startswith("hark") else out_path + ".stdout"
    code, wall, rss, stderr = timed(argv, stdout_path)
    rows = []
    if os.path.exists(out_path):
        for line in open(out_path, encoding="utf-8"):
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    if code != 0:
        log(f"{engine} {os.path.relpath(out_path, ROOT)}: exited {code}: {stderr.strip()[-400:]}")
    meta = {"engine": engine, "out": out_path, "files": len(files), "lines": len(rows), "exit": code,
            "wall_s": round(wall, 2), "max_rss_kib": rss,
            "audio_ms": round(sum(duration_ms(f) for f in files), 1)}
    with open(out_path + ".meta.json", "w") as f:
        json.dump(meta, f)
    return meta, rows


def run_tasks(tasks, hark, jobs, reuse):
    """Run (engine, workspace, files, out) tasks `jobs` at a time; with --reuse a task whose output covers all
    its files is read back instead of run."""
    results = {}
    todo = []
    for task in tasks:
        out = task[3]
        if reuse and os.path.exists(out + ".meta.json"):
            meta = json.load(open(out + ".meta.json"))
            rows = [json.loads(l) for l in open(out, encoding="utf-8") if l.strip().startswith("{")]
            if meta.get("exit") == 0 and len(rows) >= len(task[2]):
                results[out] = (meta, rows)
                continue
        todo.append(task)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_task, t, hark): t for t in todo}
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            meta, rows = future.result()
            results[meta["out"]] = (meta, rows)
            log(f"[{n}/{len(todo)}] {meta['engine']} {os.path.relpath(meta['out'], OUT)}: {meta['lines']}/{meta['files']} "
                f"lines in {meta['wall_s']:.0f} s, max RSS {meta['max_rss_kib']} KiB")
    return results


# --- 4. scoring ---------------------------------------------------------------------------------------------

def score(results_path, half):
    proc = subprocess.run([sys.executable, os.path.join(speechlib.speech_dir(), "score.py"), results_path,
                           "--half", half], capture_output=True, text=True)
    m = re.search(r"accepted (\d+)/(\d+) = ([0-9.]+)\s+(\{.*\})", proc.stdout)
    if proc.returncode != 0 or not m:
        speechlib.die(f"speech: score.py {results_path} failed: {proc.stderr.strip()[-400:]}")
    kinds = json.loads(m.group(4).replace("'", '"'))
    return {"ok": int(m.group(1)), "n": int(m.group(2)), "rate": int(m.group(1)) / int(m.group(2)), "kinds": kinds}


def latency_of(row):
    """Latency from the end of the audio to the result: Hark may report it directly (streaming decoding);
    for whole-utterance decoding it is the decode time."""
    for key in ("latency_ms", "final_ms", "decode_ms"):
        if isinstance(row.get(key), (int, float)):
            return float(row[key])
    return None


def speed_summary(metas_rows):
    decode, audio, lat, wall, walled_audio, rss = 0.0, 0.0, [], 0.0, 0.0, []
    for meta, rows in metas_rows:
        wall += meta["wall_s"]
        walled_audio += meta["audio_ms"]
        if meta.get("max_rss_kib"):
            rss.append(meta["max_rss_kib"])
        for row in rows:
            d = row.get("decode_ms")
            f = row.get("file")
            if isinstance(d, (int, float)) and f and os.path.exists(f):
                decode += d
                audio += row.get("audio_ms") or duration_ms(f)
            latency = latency_of(row)
            if latency is not None:
                lat.append(latency)
    lat.sort()

    def pct(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))] if lat else None
    return {"rtf_decode": decode / audio if audio else None,
            "rtf_process": wall * 1000 / walled_audio if walled_audio else None,
            "latency_p50_ms": statistics.median(lat) if lat else None, "latency_p95_ms": pct(0.95),
            "latency_max_ms": lat[-1] if lat else None,
            "peak_rss_mib": max(rss) / 1024 if rss else None, "clips": len(lat)}


# --- 5. out-of-domain speech --------------------------------------------------------------------------------

def ood_sentences(path=OOD):
    return [" ".join(l.split()) for l in open(path, encoding="utf-8") if l.strip() and not l.startswith("#")]


def ood_problems(sentences, counterexamples=True):
    """An OOD sentence equal to a workspace example or counterexample would not be a held-out test. A tuning set's
    sentence may be a counterexample (`counterexamples=False`): those are non-commands too, and one tunes on them."""
    known = {}
    for path in (BARISTA, HOME):
        ws = json.load(open(path, encoding="utf-8"))
        for intent in ws["intents"]:
            for e in intent["examples"]:
                known[harklib.normalise(e["text"])] = f"{os.path.basename(path)} #{intent['intent']}"
        for c in ws.get("counterexamples", []) if counterexamples else []:
            known[harklib.normalise(c["text"])] = f"{os.path.basename(path)} counterexample"
    problems, seen = [], set()
    for s in sentences:
        key = harklib.normalise(s)
        if key in known:
            problems.append(f"{s!r} is in {known[key]}")
        if key in seen:
            problems.append(f"{s!r} appears twice")
        seen.add(key)
    return problems


def available_voices():
    voices = []
    if shutil.which("flite"):
        listed = subprocess.run(["flite", "-lv"], capture_output=True, text=True).stdout.split()
        voices += [("flite", v) for v in FLITE_VOICES if v in listed]
    if shutil.which("espeak-ng"):
        voices += [("espeak-ng", v) for v in ESPEAK_VOICES]
    return voices


def synthesise(sentences, ood_dir, voices):
    """16 kHz mono s16 WAVs, cached; 0.5 s of silence either side, as a recording would have."""
    if not shutil.which("sox"):
        speechlib.die("speech: sox not found: run `bash scripts/setup-bench.sh`")
    index_path = os.path.join(ood_dir, "sentences.json")
    if os.path.exists(index_path) and json.load(open(index_path)) != sentences:
        shutil.rmtree(ood_dir)  # the sentence file changed: numbering would no longer match
    os.makedirs(ood_dir, exist_ok=True)
    json.dump(sentences, open(index_path, "w"))
    files = {}

    def one(family, voice, n, text):
        out = os.path.join(ood_dir, f"{family}-{voice}", f"{n:03d}.wav")
        if os.path.exists(out):
            return out
        os.makedirs(os.path.dirname(out), exist_ok=True)
        raw = out + ".raw.wav"
        if family == "flite":
            cmd = ["flite", "-voice", voice, "-t", text, "-o", raw]
        else:
            cmd = ["espeak-ng", "-v", voice, "-w", raw, text]
        subprocess.run(cmd, check=True, capture_output=True)
        # -D: no dither. sox dithers with a random generator, so each synthesis differed in its last bit, and now and
        # then one utterance fell the other side of a rejection point from one run (or machine) to the next.
        subprocess.run(["sox", "-D", raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out,
                        "pad", "0.5", "0.5"], check=True, capture_output=True)
        os.remove(raw)
        return out

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for family, voice in voices:
            futures = [pool.submit(one, family, voice, n, s) for n, s in enumerate(sentences)]
            files[(family, voice)] = [f.result() for f in futures]
    return files


def accepted(row):
    """score.py's rule: a line is a result when it is not marked rejected and has an intent."""
    if row.get("accepted") is False:
        return False
    if isinstance(row.get("intent"), str):
        return True
    return bool(row.get("intents"))


# --- 6. report ----------------------------------------------------------------------------------------------

LOAD_AT_START = os.getloadavg()


def machine():
    model, cores = "unknown", os.cpu_count()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"Model name:\s*(.+)", out)
        model = m.group(1).strip() if m else model
    except OSError:
        pass
    return {"cpu": model, "cores": cores, "loadavg_start": [round(x, 2) for x in LOAD_AT_START],
            "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def cell(value):
    """Rates and factors with 3 decimals, milliseconds and MiB whole."""
    if isinstance(value, float) and value >= 10:
        return f"{value:.0f}"
    return harklib.fmt(value)


def md_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", choices=["dev", "test", "all"], default="all",
                    help="clips to run (default all; dev, test and all are scored from it)")
    ap.add_argument("--snr", type=float, nargs="+", default=speechlib.SNRS)
    ap.add_argument("--seed", type=int, default=speechlib.SEED)
    ap.add_argument("--engines", default="hark,hark-kitchen,pocketsphinx", help="comma-separated: hark, hark-stock-means, hark-any-english, hark-kitchen, pocketsphinx")
    ap.add_argument("--jobs", type=int, default=2, help="engine processes at a time (default 2)")
    ap.add_argument("--no-ood", action="store_true", help="skip the out-of-domain false-acceptance test")
    ap.add_argument("--no-text", action="store_true", help="skip the text-path slot check (speech_text.py)")
    ap.add_argument("--ood-voices", default=None,
                    help="comma-separated subset of the voices (flite: kal, slt, rms, awb; espeak-ng: en-us, en-gb-x-rp+f3)")
    ap.add_argument("--reuse", action="store_true", help="reuse complete results from an earlier run")
    args = ap.parse_args()

    hark = harklib.hark_binary()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = set(engines) - set(ENGINE_NAMES)
    if unknown:
        speechlib.die(f"speech: unknown engine(s) {sorted(unknown)}; use {', '.join(ENGINE_NAMES)}")
    skipped = {}
    for engine in ("hark", "hark-stock-means", "hark-any-english", "hark-kitchen"):
        if engine in engines:
            why = hark_available(hark)
            if engine == "hark-kitchen" and not why and not os.path.isdir(KITCHEN_MODEL):
                why = f"{os.path.relpath(KITCHEN_MODEL, ROOT)} missing (bash scripts/adapt-model.sh)"
            if why:
                skipped[engine] = why
    if "pocketsphinx" in engines:
        why = peer_available()
        if why:
            skipped["pocketsphinx"] = why
        else:
            check_grammar()
    for engine, why in skipped.items():
        log(f"skipping {engine}: {why}")
    engines = [e for e in engines if e not in skipped]
    if not os.path.exists(BARISTA):
        speechlib.die("speech: Intents/barista.json missing: python3 scripts/make-barista.py")

    snrs = list(args.snr)
    conds = conditions(snrs)
    mix_dir = os.path.join(OUT, "mix", f"seed-{args.seed}")
    if engines:
        ensure_mix(mix_dir, snrs, args.seed)
    ids = clip_ids(args.half)
    halves = ["dev", "test", "all"] if args.half == "all" else [args.half]

    # 2-3. engines over every condition; the clips are run in their halves (dev, test) so that a dev run's
    # results are reused (--reuse) by a later run of the whole set, and "all" is their concatenation.
    parts = ["dev", "test"] if args.half == "all" else [args.half]
    tasks = []
    for engine in engines:
        for cond in conds:
            for part in parts:
                files = [os.path.join(mix_dir, cond, i + ".wav") for i in clip_ids(part)]
                tasks.append((engine, BARISTA, files, os.path.join(OUT, engine, f"seed-{args.seed}", part, cond + ".jsonl")))
    results = run_tasks(tasks, hark, args.jobs, args.reuse)

    # 4. scores
    scores = {}
    for engine in engines:
        for cond in conds:
            path = os.path.join(OUT, engine, f"seed-{args.seed}", args.half, cond + ".jsonl")
            if args.half == "all":
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as joined:
                    for part in parts:
                        joined.write(open(os.path.join(OUT, engine, f"seed-{args.seed}", part, cond + ".jsonl"),
                                          encoding="utf-8").read())
            for half in halves:
                scores[(engine, half, cond)] = score(path, half)
    speed = {e: speed_summary([v for k, v in results.items() if v[0]["engine"] == e]) for e in engines}

    # 5. out of domain
    ood = {}
    ood_skipped = None
    if args.no_ood:
        ood_skipped = "--no-ood"
    else:
        sentences = ood_sentences()
        problems = ood_problems(sentences)
        if problems:
            speechlib.die("speech: bench/data/ood-sentences.txt is not held out:\n  " + "\n  ".join(problems))
        voices = available_voices()
        if args.ood_voices:
            wanted = {v.strip() for v in args.ood_voices.split(",")}
            unknown = wanted - set(FLITE_VOICES) - set(ESPEAK_VOICES)
            if unknown:
                speechlib.die(f"speech: unknown --ood-voices {sorted(unknown)}")
            voices = [fv for fv in voices if fv[1] in wanted]
        ood_engines = [e for e in engines]
        if not voices:
            ood_skipped = "neither flite nor espeak-ng is installed (bash scripts/setup-bench.sh)"
        elif not ood_engines:
            ood_skipped = "no engine available"
        else:
            log(f"ood: synthesising {len(sentences)} sentences × {len(voices)} voices")
            files = synthesise(sentences, os.path.join(OUT, "ood"), voices)
            ood_tasks = []
            for (family, voice), wavs in files.items():
                for engine in [e for e in ("hark", "hark-any-english") if e in engines]:
                    for ws_name, ws in (("barista", BARISTA), ("home", HOME)):
                        ood_tasks.append((engine, ws, wavs, os.path.join(OUT, engine, "ood", ws_name, f"{family}-{voice}.jsonl")))
                if "pocketsphinx" in engines:
                    ood_tasks.append(("pocketsphinx", BARISTA, wavs, os.path.join(OUT, "pocketsphinx", "ood", "barista", f"{family}-{voice}.jsonl")))
            ood_results = run_tasks(ood_tasks, hark, args.jobs, args.reuse)
            for (engine, ws, wavs, out) in ood_tasks:
                meta, rows = ood_results[out]
                ws_name = os.path.basename(os.path.dirname(out))
                voice = os.path.basename(out)[:-6]
                got = {os.path.basename(r.get("file", "")): r for r in rows}
                n_acc = sum(1 for w in wavs if accepted(got.get(os.path.basename(w), {"accepted": False})))
                examples = [got[os.path.basename(w)].get("transcript") for w in wavs
                            if accepted(got.get(os.path.basename(w), {"accepted": False}))][:3]
                ood[(engine, ws_name, voice)] = {"accepted": n_acc, "n": len(wavs), "examples": examples}
            if "hark" in engines:
                speed["hark_ood"] = speed_summary([v for k, v in ood_results.items() if v[0]["engine"] == "hark"])

    # text path
    text = None
    if not args.no_text and os.path.exists(hark):
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "speech_text.py"), "--json"],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            text = harklib.parse_report(proc.stdout, "speech_text.py")
        else:
            log(f"text check failed: {proc.stderr.strip()[-300:]}")

    report = render(args, engines, skipped, conds, halves, scores, speed, ood, ood_skipped, text, len(ids))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(ROOT, "bench/out/speech/report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    data = {"provenance": {**harklib.provenance(), **machine(), "seed": args.seed, "half": args.half},
            "skipped": skipped, "ood_skipped": ood_skipped,
            "scores": {f"{e}/{h}/{c}": v for (e, h, c), v in scores.items()},
            "speed": speed, "ood": {f"{e}/{w}/{v}": r for (e, w, v), r in ood.items()}, "text": text}
    harklib.write_json(os.path.join(OUT, "speech.json"), data)
    print(report)
    log("wrote bench/out/speech/report.md and speech.json")


def render(args, engines, skipped, conds, halves, scores, speed, ood, ood_skipped, text, n_clips):
    m = machine()
    prov = harklib.provenance()
    snr_conds = [c for c in conds if c != "clean"]
    out = [f"# Speech-to-intent benchmark ({prov['date']})", "",
           f"Commit {prov['commit']}{' (dirty)' if prov['dirty'] else ''}; machine: {m['cpu']}, {m['cores']} cores; "
           f"noise seed {args.seed} (upstream mix.py, kitchen noise, whole set mixed); clips run: {args.half} "
           f"({n_clips}); engine processes at a time: {args.jobs}. Load average (1, 5, 15 min) at start "
           f"{m['loadavg_start']}, at end {m['loadavg_end']}: other work on the machine slows the timings, not the "
           "accuracy.", ""]
    for engine, why in skipped.items():
        out.append(f"- **{engine} skipped**: {why}")
    if skipped:
        out.append("")
    headers = ["engine", "clean"] + [c.replace("db", " dB") for c in snr_conds] + ["mean (SNRs)"]
    for half in halves:
        rows = []
        for engine in engines:
            rates = [scores[(engine, half, c)]["rate"] for c in conds]
            snr_rates = [scores[(engine, half, c)]["rate"] for c in snr_conds]
            rows.append([ENGINE_NAMES[engine], *rates, sum(snr_rates) / len(snr_rates) if snr_rates else None])
        if [float(c[:-2]) for c in snr_conds] == [float(s) for s in speechlib.SNRS]:
            for name, values, mean in PUBLISHED:
                rows.append([name, None, *values, mean])
        n = scores[(engines[0], half, "clean")]["n"] if engines else 0
        out += [f"## Command acceptance, {half if half == 'all' else half + ' half'} ({n} clips)", "", md_table(headers, rows), ""]
        for engine in engines:
            kinds = {c: scores[(engine, half, c)]["kinds"] for c in ("clean", snr_conds[0] if snr_conds else "clean")}
            out.append(f"- {engine} errors: " + "; ".join(
                f"{c}: " + ", ".join(f"{k} {v}" for k, v in k_.items() if k != "ok") for c, k_ in kinds.items()))
        out.append("")
    if engines:
        out += ["## Cost", "",
                "Real-time factor = decode time / audio duration (from each line's `decode_ms`); \"process\" also "
                "counts start-up and model loading (wall clock of each engine process / its audio). Latency = time "
                "from the end of the audio to the result; for whole-utterance decoding that is `decode_ms`. Peak "
                "memory = the largest max RSS (`/usr/bin/time -v`) of any engine process.", ""]
        rows = []
        for engine in engines:
            s = speed[engine]
            rows.append([ENGINE_NAMES[engine], s["rtf_decode"], s["rtf_process"], s["latency_p50_ms"],
                         s["latency_p95_ms"], s["latency_max_ms"], s["peak_rss_mib"], s["clips"]])
        out += [md_table(["engine", "RTF decode", "RTF process", "latency p50 ms", "p95 ms", "max ms",
                          "peak RSS MiB", "clips"], rows), ""]
    out += ["## Out-of-domain false acceptance", ""]
    if ood_skipped:
        out += [f"Skipped: {ood_skipped}.", ""]
    elif ood:
        out += [f"{len(ood_sentences())} sentences of `bench/data/ood-sentences.txt` (none a coffee order or a "
                "home.json command), synthesised per voice, 16 kHz, 0.5 s silence either side. A clip is falsely "
                "accepted when the engine returns an intent and does not mark it rejected (score.py's rule). "
                "The PocketSphinx peer has no rejection: its grammar forces every clip into an order.", ""]
        rows = []
        keys = sorted({(e, w) for e, w, _ in ood})
        voices = sorted({v for _, _, v in ood})
        families = sorted({v.split("-")[0] if v.startswith("flite") else "espeak-ng" for v in voices})
        for e, w in keys:
            per_voice = [ood.get((e, w, v)) for v in voices]
            fam = []
            for family in families:
                rs = [ood[(e, w, v)] for v in voices if (e, w, v) in ood and v.startswith(family)]
                fam.append(sum(r["accepted"] for r in rs) / sum(r["n"] for r in rs) if rs else None)
            total = [r for r in per_voice if r]
            rows.append([f"{e}, {w}", *fam, sum(r["accepted"] for r in total) / sum(r["n"] for r in total),
                         *[f"{r['accepted']}/{r['n']}" if r else "-" for r in per_voice]])
        out += [md_table(["engine, workspace", *families, "all voices", *voices], rows), ""]
    if text:
        out += ["## Text path (`hark parse`, barista.json)", "",
                f"- training sentences: {text['training']['ok']}/{text['training']['n']} with intent orderDrink and "
                f"every slot right ({text['training']['rate']:.3f}); generated from the expressions "
                f"(seed {text['seed']}): {text['generated']['ok']}/{text['generated']['n']} ({text['generated']['rate']:.3f})",
                "- failures by cause: " + (", ".join(f"{k} {v}" for k, v in text["causes"].items()) or "none"),
                "- entities nested inside another slot's span (reported in addition to the right one): training "
                f"{text['training']['nested_entities'] or 'none'}; generated {text['generated']['nested_entities'] or 'none'}", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
