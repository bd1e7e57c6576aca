#!/usr/bin/env python3
"""Parse-speed benchmark: p50/p99 time per parse on one core, Hark against hassil and rhasspy-nlu.

usage: python3 bench/speed.py [--repeat N] [--warmup N] [--car-sample N]
  Hark: `taskset -c 0 hark eval --json` reports its own in-process per-parse times (`parse_us`) for
    - Intents/home.json on bench/data/home-paraphrases.jsonl, and
    - car-dashboard.json (25 intents, 2,506 examples) on a fixed sample of its own example sentences
      (seed 2017, bench/out/car-sample.jsonl): a bigger workspace, timing only.
  Peers: the SAME home paraphrases through hassil and rhasspy-nlu (strict and fuzzy), each in its own
    venv (scripts/setup-bench.sh), pinned to the same core, timed in-process by bench/peers.py with
    time.perf_counter_ns after a warm-up; their grammars are bench/peers/home_hassil.yaml and home_rhasspy.ini.
  Ratio = peer p50 / Hark p50 on the same sentences (above 1: Hark is faster).
  Coverage = how many paraphrases each peer matches at all, and how many with the right intent.
Writes bench/out/speed.json and prints a table. $HARK overrides the binary (default .build/release/hark).
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402

BENCH = os.path.join(harklib.ROOT, "bench")
CAR_WORKSPACE = os.path.join(harklib.SHARED, "watson-workspaces", "car-dashboard.json")
CAR_SEED = 2017

PEERS = [
    # name, venv, grammar
    ("hassil", os.path.join(BENCH, ".venv-hassil"), os.path.join(BENCH, "peers", "home_hassil.yaml")),
    ("rhasspy-strict", os.path.join(BENCH, ".venv-rhasspy"), os.path.join(BENCH, "peers", "home_rhasspy.ini")),
    ("rhasspy-fuzzy", os.path.join(BENCH, ".venv-rhasspy"), os.path.join(BENCH, "peers", "home_rhasspy.ini")),
]


def car_sample(size, out_dir):
    """A fixed sample of car-dashboard's own example sentences (same seed, same sample on every run)."""
    workspace = json.load(open(CAR_WORKSPACE, encoding="utf-8"))
    rows = [{"text": e["text"], "intent": i["intent"]} for i in workspace["intents"] for e in i["examples"]]
    if size and size < len(rows):
        rows = random.Random(CAR_SEED).sample(rows, size)
    path = os.path.join(out_dir, "car-sample.jsonl")
    harklib.write_jsonl(path, rows)
    return path, len(rows)


def hark_speed(workspace, cases):
    report = harklib.hark_eval(workspace, cases, one_core=True)
    in_scope = report.get("in_scope") or {}
    return {"cases": report.get("cases"), "parse_us": report.get("parse_us"), "accuracy": report.get("accuracy"),
            "accepted": in_scope.get("accepted"), "correct": in_scope.get("correct")}


def peer_speed(name, venv, grammar, args):
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        failed = venv + ".failed"
        reason = open(failed).read().strip() if os.path.exists(failed) else "venv missing: run scripts/setup-bench.sh"
        return {"available": False, "reason": reason}
    argv = harklib.pin_to_one_core([python, os.path.join(BENCH, "peers.py"), name, "--grammar", grammar,
                                    "--cases", harklib.PARAPHRASES, "--warmup", str(args.warmup),
                                    "--repeat", str(args.repeat)])
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=harklib.ROOT)
    if proc.returncode != 0:
        return {"available": False, "reason": f"peers.py {name} exited {proc.returncode}: {proc.stderr.strip()[-500:]}"}
    result = json.loads(proc.stdout)
    result["available"] = True
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20, help="timed rounds over the sentences for each peer")
    ap.add_argument("--warmup", type=int, default=3, help="untimed rounds before timing, for each peer")
    ap.add_argument("--car-sample", type=int, default=200, help="car-dashboard sentences (0 = all 2,506)")
    ap.add_argument("--out", default=os.path.join(harklib.OUT, "speed.json"))
    args = ap.parse_args()
    out_dir = os.path.dirname(os.path.abspath(args.out))

    problems = harklib.paraphrase_problems()
    if problems:
        print("speed: the paraphrase set is not held out from Intents/home.json:", *problems, sep="\n  ",
              file=sys.stderr)
        return 1

    results = {"provenance": harklib.provenance(), "pinned": "taskset -c 0", "errors": {},
               "settings": {"repeat": args.repeat, "warmup": args.warmup, "car_sample": args.car_sample,
                            "car_seed": CAR_SEED}}
    car_cases, car_n = car_sample(args.car_sample, out_dir)
    hark = {}
    for key, workspace, cases in [("home", harklib.HOME_WORKSPACE, harklib.PARAPHRASES),
                                  ("car-dashboard", CAR_WORKSPACE, car_cases)]:
        try:
            hark[key] = hark_speed(workspace, cases)
        except harklib.HarkError as error:
            results["errors"][f"hark {key}"] = str(error)
    results["hark"] = hark
    hark_p50 = ((hark.get("home") or {}).get("parse_us") or {}).get("p50")

    peers = {}
    for name, venv, grammar in PEERS:
        result = peer_speed(name, venv, grammar, args)
        p50 = (result.get("parse_us") or {}).get("p50")
        result["ratio_p50_vs_hark"] = p50 / hark_p50 if p50 and hark_p50 else None
        peers[name] = result
    results["peers"] = peers
    harklib.write_json(args.out, results)

    n = len(harklib.read_jsonl(harklib.PARAPHRASES))
    rows = []
    for key, sentences in [("home", n), ("car-dashboard", car_n)]:
        r = hark.get(key) or {}
        us = r.get("parse_us") or {}
        home = key == "home" and r.get("accepted") is not None
        rows.append([f"Hark ({key})", sentences, us.get("p50"), us.get("p99"), "1.00" if key == "home" and us.get("p50") else "-",
                     f"{r['accepted']}/{sentences}" if home else "-",
                     f"{r['correct']}/{sentences}" if home else "-"])
    for name, r in peers.items():
        if not r.get("available"):
            rows.append([name, n, "unavailable", "", "", "", r.get("reason", "")[:60]])
            continue
        us = r["parse_us"]
        rows.append([f"{name} {r['version']}", n, us["p50"], us["p99"],
                     f"{r['ratio_p50_vs_hark']:.2f}" if r["ratio_p50_vs_hark"] else "-",
                     f"{r['matched']}/{r['cases']}", f"{r['correct']}/{r['cases']}"])
    harklib.print_table(["engine (one core)", "sentences", "p50 µs", "p99 µs", "p50 vs Hark", "matched",
                         "correct"], rows)
    for step, error in results["errors"].items():
        print(f"speed: {step}: {error}", file=sys.stderr)
    print(f"speed: wrote {os.path.relpath(args.out, harklib.ROOT)}")
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
