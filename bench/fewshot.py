#!/usr/bin/env python3
"""Few-shot benchmark: tutorial-size workspaces drawn from Snips 2017, and the Watson exports by k-fold.

usage: python3 bench/fewshot.py [--draws N] [--seed N] [--before PATH_TO_OLD_HARK]
  Snips draws: 4 of the 7 intents, 5 (and 10) training sentences each, drawn with a fixed seed from the
  *train* files; scored on the *validate* sentences: the 4 intents' 400 (in scope) and the 3 held-out
  intents' 300 (out of scope). Per draw:
    top-intent accuracy   the top intent is the right one (in scope), whatever its confidence
    (a) confident         right top intent with confidence > 0.9 (the tutorial app's rule), share of in scope
    (b) rejected          out-of-scope sentences whose top confidence is < 0.2 (no intent reported)
    ECE                   expected calibration error, 10 bins, top confidence vs right, in-scope sentences;
                          ECE (all) counts out-of-scope sentences as wrong whatever their top intent
  Watson exports: each of the three, 5-fold, its own examples held out (in scope only).
  Medians and the spread (min-max) over draws; the reliability table pools every draw's sentences.
  --before runs an older binary (one with `hark eval`'s calibration report) on the same draws, side by side.
Writes bench/out/fewshot/report.json. $HARK overrides the binary (default .build/release/hark).
"""
import argparse
import json
import os
import random
import re
import subprocess
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402
import fewshotlib as fs  # noqa: E402

KEYS = ["top_accuracy", "confident", "rejected", "ece", "ece_all"]


def snips_draws(draws, seed, per_intent):
    train = fs.snips("train")
    validate = fs.snips("validate")
    rng = random.Random(seed * 100 + per_intent)
    for d in range(draws):
        chosen, held_out, examples = fs.draw(rng, train, 4, per_intent)
        cases = [{"text": t, "intent": i} for i in chosen for t in validate[i]]
        cases += [{"text": t, "intent": None} for i in held_out for t in validate[i]]
        yield f"snips-{per_intent}-{d}", fs.workspace(f"snips {per_intent}/{d}", examples), cases, examples


def watson_folds(seed):
    for name in ("serverless-home-automation", "bank-simple", "car-dashboard"):
        ws = fs.watson(name)
        for k, (kept, held) in enumerate(fs.kfold(fs.watson_examples(ws), 5, seed)):
            w = dict(ws)
            w["intents"] = [{"intent": i, "examples": [{"text": t} for t in texts]} for i, texts in kept.items()]
            yield name, f"{name}-fold{k}", w, held


_TEMPLATE_SPECIALS = re.compile(r"[\[\](){}<>|]")
_RHASSPY_DROP = re.compile(r"[^\w\s']")


def peer_grammar(peer, examples, path):
    """The draw's examples as a peer's grammar, each sentence literally: what a user who ports the same few
    examples to hassil or rhasspy-nlu gets. hassil normalises case and punctuation itself; rhasspy-nlu matches
    lower-case whitespace tokens, as peers.py feeds it."""
    if peer == "hassil":
        lines = ["language: en", "intents:"]
        for intent, texts in examples.items():
            lines += [f"  {intent}:", "    data:", "      - sentences:"]
            # Punctuation out of the template too: hassil drops it from the input, and a template's "." would
            # then never match (a 5-example draw matched 55% of its own examples with it; 10-example draws
            # match 97.5-100% of theirs without).
            lines += ["          - " + json.dumps(" ".join(_RHASSPY_DROP.sub(" ", _TEMPLATE_SPECIALS.sub(" ", t)).split())) for t in texts]
    else:
        lines = []
        for intent, texts in examples.items():
            lines.append(f"[{intent}]")
            lines += [" ".join(_RHASSPY_DROP.sub(" ", t.lower()).split()) for t in texts]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def peer_run(peer, examples, cases, directory, tag):
    """Top-intent accuracy on the in-scope cases and rejection of the out-of-scope ones for one peer, or None
    when its virtualenv is missing (scripts/setup-bench.sh makes it)."""
    venv = os.path.join(harklib.ROOT, "bench", ".venv-hassil" if peer == "hassil" else ".venv-rhasspy")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        return None
    os.makedirs(directory, exist_ok=True)
    grammar = os.path.join(directory, f"{tag}.{'yaml' if peer == 'hassil' else 'ini'}")
    peer_grammar(peer, examples, grammar)
    cases_path = os.path.join(directory, f"{tag}.cases.jsonl")
    harklib.write_jsonl(cases_path, cases)
    proc = subprocess.run([python, os.path.join(harklib.ROOT, "bench", "peers.py"), peer, "--grammar", grammar,
                           "--cases", cases_path, "--warmup", "0", "--repeat", "1"],
                          capture_output=True, text=True, cwd=harklib.ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"peers.py {peer} on {tag} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    result = json.loads(proc.stdout)
    unmatched = set(result["unmatched"])
    wrong = {w["text"] for w in result["wrong"]}
    inside = [c for c in cases if c["intent"] is not None]
    outside = [c for c in cases if c["intent"] is None]
    right = sum(1 for c in inside if c["text"] not in unmatched and c["text"] not in wrong)
    rejected = sum(1 for c in outside if c["text"] in unmatched)
    return {"top_accuracy": right / len(inside), "rejected": rejected / len(outside) if outside else None}


def summarise(rows):
    out = {}
    for key in KEYS:
        values = [r[key] for r in rows if r.get(key) is not None]
        if values:
            out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def pooled(reports):
    bins = [[0, 0.0, 0] for _ in range(10)]
    for r in reports:
        for k, b in enumerate(r["calibration"]["bins"]):
            bins[k][0] += b["count"]
            bins[k][1] += b["confidence"] * b["count"]
            bins[k][2] += b["correct"]
    n = sum(b[0] for b in bins)
    ece = sum(b[0] / n * abs(b[2] / b[0] - b[1] / b[0]) for b in bins if b[0]) if n else None
    return {"ece": ece, "bins": [{"range": f"{k / 10:.1f}-{(k + 1) / 10:.1f}", "count": b[0],
                                  "confidence": b[1] / b[0] if b[0] else None,
                                  "accuracy": b[2] / b[0] if b[0] else None} for k, b in enumerate(bins)]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=12)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--before", help="an older hark binary to run on the same draws")
    parser.add_argument("--no-peers", dest="peers", action="store_false",
                        help="skip hassil and rhasspy-nlu (strict), which otherwise run on the Snips draws when their "
                             "virtualenvs exist (scripts/setup-bench.sh), each example a literal sentence")
    parser.add_argument("--out", default=os.path.join(harklib.OUT, "fewshot"))
    args = parser.parse_args()
    engines = {"hark": None}
    if args.before:
        engines["before"] = os.path.abspath(args.before)
    result = {"provenance": harklib.provenance(), "seed": args.seed, "draws": args.draws, "snips": {}, "watson": {}}
    for per_intent in (5, 10):
        entry = {}
        tasks = list(snips_draws(args.draws, args.seed, per_intent))
        for engine, binary in engines.items():
            rows, reports = [], []
            for tag, w, cases, _ in tasks:
                report, _ = fs.run_eval(w, cases, os.path.join(args.out, engine), tag, binary=binary)
                reports.append(report)
                rows.append(fs.metrics(report))
            entry[engine] = {"summary": summarise(rows), "per_draw": rows, "reliability": pooled(reports)}
        if args.peers:
            for peer in ("hassil", "rhasspy-strict"):
                rows = []
                for tag, _, cases, examples in tasks:
                    row = peer_run(peer, examples, cases, os.path.join(args.out, peer), tag)
                    if row is None:
                        break
                    rows.append(row)
                if rows:
                    entry[peer] = {"summary": summarise(rows), "per_draw": rows}
        result["snips"][str(per_intent)] = entry
    for engine, binary in engines.items():
        by_name = {}
        for name, tag, w, cases in watson_folds(args.seed):
            report, _ = fs.run_eval(w, cases, os.path.join(args.out, engine), tag, binary=binary)
            by_name.setdefault(name, []).append((fs.metrics(report), report))
        for name, items in by_name.items():
            result["watson"].setdefault(name, {})[engine] = {
                "summary": summarise([m for m, _ in items]), "reliability": pooled([r for _, r in items])}

    headers = ["set", "engine", "top acc", "(a) >0.9", "(b) <0.2", "ECE", "ECE (all)"]
    table = []
    for per_intent, entry in result["snips"].items():
        for engine, e in entry.items():
            s = e["summary"]
            cell = lambda k: (f"{s[k]['median']:.3f} [{s[k]['min']:.2f}-{s[k]['max']:.2f}]" if k in s else "-")
            table.append([f"Snips 4 intents x {per_intent}", engine, *[cell(k) for k in KEYS]])
    for name, entry in result["watson"].items():
        for engine, e in entry.items():
            s = e["summary"]
            cell = lambda k: (f"{s[k]['median']:.3f}" if k in s else "-")
            table.append([f"{name} 5-fold", engine, *[cell(k) for k in KEYS]])
    print(f"medians over {args.draws} draws [min-max], seed {args.seed}")
    harklib.print_table(headers, table)
    for per_intent, entry in result["snips"].items():
        for engine, e in entry.items():
            rel = e.get("reliability")
            if not rel:
                continue
            print(f"\nreliability, Snips 4 x {per_intent}, {engine}, in scope, pooled (ECE {rel['ece']:.4f}):")
            for b in rel["bins"]:
                if b["count"]:
                    print(f"  {b['range']}  {b['count']:5d}  conf {b['confidence']:.3f}  acc {b['accuracy']:.3f}")
    harklib.write_json(os.path.join(args.out, "report.json"), result)


if __name__ == "__main__":
    main()
