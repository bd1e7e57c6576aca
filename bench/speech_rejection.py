"""What Hark's acoustic rejection costs on the speech-to-intent benchmark: scores the same result lines twice,
as `hark recognize` returned them and with the `accepted` flag ignored (every transcript's intent and slots
taken as the answer). Run after `bash bench/speech.sh`.

usage: python3 bench/speech_rejection.py [--seed N] [--engine hark] [--half test ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import speechlib  # noqa: E402

CONDS = ["clean", "6db", "9db", "12db", "15db", "18db", "21db", "24db"]


def score(path, half):
    out = subprocess.run([sys.executable, os.path.join(speechlib.speech_dir(), "score.py"), path, "--half", half],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split("=")[1].split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", default="20240601")
    ap.add_argument("--engine", default="hark")
    ap.add_argument("--half", action="append", choices=["dev", "test", "all"],
                    help="halves to score (repeatable; default dev, test and all)")
    args = ap.parse_args()
    base = os.path.join(ROOT, "bench", "out", "speech", args.engine, f"seed-{args.seed}")
    print(f"| {args.engine} | half | " + " | ".join(CONDS) + " | mean of SNRs |")
    print("|---|---|" + "---|" * (len(CONDS) + 1))
    for half in args.half or ["dev", "test", "all"]:
        for mode in ("as returned", "rejection ignored"):
            rates = []
            for cond in CONDS:
                parts = ["dev", "test"] if half == "all" else [half]
                lines = []
                for part in parts:
                    lines += [json.loads(l) for l in open(os.path.join(base, part, cond + ".jsonl")) if l.startswith("{")]
                if mode == "rejection ignored":
                    for row in lines:
                        row.pop("accepted", None)
                with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                    f.write("\n".join(json.dumps(r) for r in lines) + "\n")
                rates.append(score(f.name, half))
                os.unlink(f.name)
            mean = sum(rates[1:]) / len(rates[1:])
            print(f"| {mode} | {half} | " + " | ".join(f"{r:.3f}" for r in rates) + f" | {mean:.3f} |")


if __name__ == "__main__":
    main()
