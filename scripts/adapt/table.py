#!/usr/bin/env python3
"""Print the within-dev table from RUNS/{stock,adapted}-<cond>.jsonl (decode.py outputs, dev clips 4-7).

usage: table.py RUNS_DIR
Per condition: acceptance by the upstream rule for the stock and the adapted model, and the paired change
(clips the adaptation fixed / broke), since the two columns decode the same clips.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import domain  # noqa: E402

CONDS = ["clean", "6db", "9db", "12db", "15db", "18db", "21db", "24db"]


def load(path):
    labels = domain.labels()
    out = {}
    for line in open(path):
        r = json.loads(line)
        clip = os.path.basename(r["file"])[:-4]
        out[clip] = domain.accepted(labels[clip + ".wav"], r["intent"], r["slots"])
    return out


def main():
    runs = sys.argv[1]
    print("| condition | clips | stock | adapted | fixed / broken |")
    print("|---|---|---|---|---|")
    noisy = {"stock": [], "adapted": []}
    for c in CONDS:
        paths = {m: os.path.join(runs, f"{m}-{c}.jsonl") for m in ("stock", "adapted")}
        if not all(os.path.exists(p) for p in paths.values()):
            continue
        s, a = load(paths["stock"]), load(paths["adapted"])
        n = len(s)
        fixed = sum(a[k] and not s[k] for k in s)
        broken = sum(s[k] and not a[k] for k in s)
        rs, ra = sum(s.values()) / n, sum(a.values()) / n
        if c != "clean":
            noisy["stock"].append(rs)
            noisy["adapted"].append(ra)
        print(f"| {c.replace('db', ' dB')} | {n} | {rs:.3f} | {ra:.3f} | +{fixed} / -{broken} |")
    if len(noisy["stock"]) == 7:
        print(f"| mean of the 7 SNRs | | {sum(noisy['stock']) / 7:.3f} | {sum(noisy['adapted']) / 7:.3f} | |")


if __name__ == "__main__":
    main()
