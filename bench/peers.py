#!/usr/bin/env python3
"""Time one text-intent peer on a JSONL case file, in-process, and count what it matches.

usage: peers.py {hassil|rhasspy-strict|rhasspy-fuzzy} --grammar FILE --cases CASES.jsonl
                [--warmup N] [--repeat N]
Run it with the peer's own virtualenv python (bench/.venv-hassil, bench/.venv-rhasspy); bench/speed.sh does.
Prints one JSON object: {"peer", "version", "cases", "matched", "correct", "parse_us": {"p50","p99","mean"},
"timings", "unmatched": [...], "wrong": [...]}.

Timing: every sentence is parsed --warmup times first (imports, caches, lazy compilation), then --repeat
rounds over all sentences; each parse is timed alone with time.perf_counter_ns, and the percentiles are over
all those single-parse times, so they compare directly with Hark's per-parse `parse_us`.
Only this file's stdlib and the peer's package are needed.
"""
import argparse
import json
import re
import statistics
import sys
import time


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list (the same rule for every engine in this benchmark)."""
    if not sorted_values:
        return None
    rank = max(1, min(len(sorted_values), round(q / 100 * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


def hassil_parser(grammar_path):
    import yaml  # hassil depends on PyYAML
    from importlib.metadata import version
    from hassil import Intents, recognize

    with open(grammar_path, encoding="utf-8") as f:
        intents = Intents.from_dict(yaml.safe_load(f))

    def parse(text):
        result = recognize(text, intents)
        return result.intent.name if result is not None else None

    return parse, version("hassil")


# What an ASR transcript looks like: lower case, no punctuation except apostrophes. rhasspy-nlu matches
# whitespace tokens exactly, so "hey," would never match "hey"; hassil normalises punctuation itself.
_PUNCT = re.compile(r"[^\w\s']")


def rhasspy_parser(grammar_path, fuzzy):
    from importlib.metadata import version
    import rhasspynlu

    with open(grammar_path, encoding="utf-8") as f:
        graph = rhasspynlu.intents_to_graph(rhasspynlu.parse_ini(f.read()))

    def parse(text):
        tokens = _PUNCT.sub(" ", text.lower()).split()
        recognitions = rhasspynlu.recognize(tokens, graph, fuzzy=fuzzy)
        return recognitions[0].intent.name if recognitions else None

    return parse, version("rhasspy-nlu")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peer", choices=["hassil", "rhasspy-strict", "rhasspy-fuzzy"])
    ap.add_argument("--grammar", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()

    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8") if line.strip()]
    if args.peer == "hassil":
        parse, peer_version = hassil_parser(args.grammar)
    else:
        parse, peer_version = rhasspy_parser(args.grammar, fuzzy=args.peer == "rhasspy-fuzzy")

    for _ in range(args.warmup):
        for case in cases:
            parse(case["text"])

    timings = []
    for _ in range(args.repeat):
        for case in cases:
            start = time.perf_counter_ns()
            parse(case["text"])
            timings.append(time.perf_counter_ns() - start)
    timings.sort()

    unmatched, wrong, correct = [], [], 0
    for case in cases:
        got = parse(case["text"])
        if got is None:
            unmatched.append(case["text"])
        elif got == case.get("intent"):
            correct += 1
        else:
            wrong.append({"text": case["text"], "expected": case.get("intent"), "predicted": got})

    us = [t / 1000 for t in timings]
    json.dump({
        "peer": args.peer,
        "version": peer_version,
        "python": sys.version.split()[0],
        "cases": len(cases),
        "matched": len(cases) - len(unmatched),
        "correct": correct,
        "parse_us": {"p50": percentile(us, 50), "p99": percentile(us, 99), "mean": statistics.fmean(us)},
        "timings": len(timings),
        "warmup": args.warmup,
        "unmatched": unmatched,
        "wrong": wrong,
    }, sys.stdout)
    print()


if __name__ == "__main__":
    main()
