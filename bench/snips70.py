#!/usr/bin/env python3
"""Snips 2017 at the published training size: 70 queries per intent, 3 seeded draws, mean intent accuracy.

The published Snips figures (intent recall 0.98) were trained on 70 queries per intent, mean of 3 runs.
This draws 70 examples per intent from bench/out/snips-train/workspace.json (made by bench/nlu.sh from
the train_*.json files) with seeds 1, 2, 3 and evaluates each on the 700 validate cases.
usage: python3 bench/snips70.py [HARK]
"""
import json, os, random, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
hark = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/release/hark")
src = os.path.join(root, "bench/out/snips-train")
ws = json.load(open(os.path.join(src, "workspace.json")))
results = []
for seed in (1, 2, 3):
    rng = random.Random(seed)
    sub = json.loads(json.dumps(ws))
    for intent in sub["intents"]:
        intent["examples"] = rng.sample(intent["examples"], 70)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(sub, f)
    out = subprocess.run([hark, "eval", "--json", "--workspace", f.name, os.path.join(src, "cases.jsonl")],
                         check=True, capture_output=True, text=True).stdout
    os.unlink(f.name)
    report = json.loads(out)
    results.append(report["accuracy"])
    print(f"seed {seed}: intent accuracy {report['accuracy']:.4f}")
print(f"mean of 3 (70 per intent): {sum(results) / 3:.4f}   published Snips 0.98")
