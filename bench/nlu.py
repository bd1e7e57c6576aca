#!/usr/bin/env python3
"""NLU benchmark: Snips 2017 intent accuracy and slot F1, out-of-scope rejection, paraphrase acceptance.

usage: python3 bench/nlu.py [--snips-train train|full] [--strict]
  (a) ../shared/benchmarks/nlu-snips-2017/convert.py makes a Watson workspace from the Snips training
      files and 700 validate cases; `hark eval` on them gives intent accuracy and slot F1.
  (b) the same 700 validate sentences with "intent": null, evaluated against Intents/home.json: none of them
      is a home command, so every one should be rejected (rejection rate).
  (c) bench/data/home-paraphrases.jsonl against Intents/home.json: fresh paraphrases of home commands,
      none of them among home.json's examples (checked first; the run fails if one is).
Writes bench/out/nlu.json and prints a table. $HARK overrides the binary (default .build/release/hark).
Exit status: 1 if a step could not run or the paraphrase check fails; with --strict also if a target is missed.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402

SNIPS = os.path.join(harklib.SHARED, "nlu-snips-2017")

# Targets, and the published figure each one comes from.
TARGETS = {
    "snips_intent_accuracy": (0.98, "Snips NLU 0.98 intent recall (70 train queries/intent; 0.99 with full)"),
    "snips_slot_f1": (None, "Snips NLU 0.77 macro slot F1 (70 train queries/intent; 0.92 with full)"),
    "oos_rejection_rate": (0.95, "project target"),
    "paraphrase_accuracy": (0.95, "project target"),
}
PUBLISHED = {"snips_intent_accuracy": "Snips 0.98", "snips_slot_f1": "Snips 0.77", "oos_rejection_rate": "-",
             "paraphrase_accuracy": "-"}


def snips_step(out_dir, train):
    """(a) Convert Snips and evaluate; returns (summary, raw report, cases path)."""
    snips_dir = os.path.join(out_dir, f"snips-{train}")
    subprocess.run([sys.executable, os.path.join(SNIPS, "convert.py"), snips_dir, "--train", train],
                   check=True, cwd=harklib.ROOT)
    cases = os.path.join(snips_dir, "cases.jsonl")
    report = harklib.hark_eval(os.path.join(snips_dir, "workspace.json"), cases)
    summary = {
        "train": train,
        "cases": report.get("cases"),
        "intent_accuracy": report.get("accuracy"),
        "slot_f1": (report.get("slots") or {}).get("f1"),
        "parse_us": report.get("parse_us"),
    }
    return summary, report, cases


def oos_step(out_dir, snips_cases):
    """(b) Every Snips validate sentence is out of scope for the home assistant."""
    rows = [{"text": case["text"], "intent": None} for case in harklib.read_jsonl(snips_cases)]
    cases = os.path.join(out_dir, "oos-cases.jsonl")
    harklib.write_jsonl(cases, rows)
    report = harklib.hark_eval(harklib.HOME_WORKSPACE, cases)
    oos = report.get("out_of_scope") or {}
    summary = {
        "cases": oos.get("cases", len(rows)),
        "rejected": oos.get("rejected"),
        "rejection_rate": oos.get("rejection_rate"),
        "false_accept_rate": oos.get("false_accept_rate"),
        "threshold": report.get("threshold"),
    }
    return summary, report


def paraphrase_step():
    """(c) In-domain paraphrases: accepted with the right intent."""
    report = harklib.hark_eval(harklib.HOME_WORKSPACE, harklib.PARAPHRASES)
    in_scope = report.get("in_scope") or {}
    cases = in_scope.get("cases") or report.get("cases")
    accepted = in_scope.get("accepted")
    summary = {
        "cases": cases,
        "accepted": accepted,
        "acceptance_rate": accepted / cases if accepted is not None and cases else None,
        "correct": in_scope.get("correct"),
        "accuracy": in_scope.get("accuracy", report.get("accuracy")),
        "threshold": report.get("threshold"),
        "confusions": report.get("confusions", []),
    }
    return summary, report


def status(value, target):
    if target is None:
        return "info"
    if value is None:
        return "n/a"
    return "ok" if value >= target else "BELOW"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snips-train", choices=["train", "full"], default="train",
                    help="Snips training split given to convert.py (default: train)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a result misses its target")
    ap.add_argument("--out", default=os.path.join(harklib.OUT, "nlu.json"))
    args = ap.parse_args()
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)

    problems = harklib.paraphrase_problems()
    if problems:
        print("nlu: the paraphrase set is not held out from Intents/home.json:", file=sys.stderr)
        for problem in problems:
            print("  " + problem, file=sys.stderr)
        return 1

    results = {"provenance": harklib.provenance(), "errors": {}, "raw": {}}
    snips_cases = None
    try:
        results["snips"], results["raw"]["snips"], snips_cases = snips_step(out_dir, args.snips_train)
    except (harklib.HarkError, subprocess.CalledProcessError) as error:
        results["errors"]["snips"] = str(error)
    if snips_cases is None and os.path.exists(os.path.join(out_dir, f"snips-{args.snips_train}", "cases.jsonl")):
        snips_cases = os.path.join(out_dir, f"snips-{args.snips_train}", "cases.jsonl")
    if snips_cases:
        try:
            results["oos"], results["raw"]["oos"] = oos_step(out_dir, snips_cases)
        except harklib.HarkError as error:
            results["errors"]["oos"] = str(error)
    else:
        results["errors"]["oos"] = "no Snips cases (convert.py failed)"
    try:
        results["paraphrases"], results["raw"]["paraphrases"] = paraphrase_step()
    except harklib.HarkError as error:
        results["errors"]["paraphrases"] = str(error)

    measured = {
        "snips_intent_accuracy": results.get("snips", {}).get("intent_accuracy"),
        "snips_slot_f1": results.get("snips", {}).get("slot_f1"),
        "oos_rejection_rate": results.get("oos", {}).get("rejection_rate"),
        "paraphrase_accuracy": results.get("paraphrases", {}).get("accuracy"),
    }
    results["targets"] = {name: {"target": target, "source": source, "result": measured[name],
                                 "status": status(measured[name], target)}
                          for name, (target, source) in TARGETS.items()}
    harklib.write_json(args.out, results)

    labels = {
        "snips_intent_accuracy": f"Snips 2017 intent accuracy ({args.snips_train}, 700 validate)",
        "snips_slot_f1": "Snips 2017 slot F1",
        "oos_rejection_rate": "out-of-scope rejection (700 Snips sentences vs home.json)",
        "paraphrase_accuracy": f"home paraphrases accepted + correct ({results.get('paraphrases', {}).get('cases', '?')})",
    }
    rows = [[labels[name], row["result"], row["target"] if row["target"] is not None else "-", PUBLISHED[name],
             row["status"]] for name, row in results["targets"].items()]
    harklib.print_table(["benchmark", "result", "target", "published", "status"], rows)
    for step, error in results["errors"].items():
        print(f"nlu: {step}: {error}", file=sys.stderr)
    print(f"nlu: wrote {os.path.relpath(args.out, harklib.ROOT)}")

    if results["errors"]:
        return 1
    if args.strict and any(row["status"] in ("BELOW", "n/a") for row in results["targets"].values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
