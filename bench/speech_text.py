#!/usr/bin/env python3
"""The text path of the speech benchmark: does `hark parse` with Intents/barista.json give intent orderDrink
and exactly the right slot values for a perfect transcript?

usage: speech_text.py [--per-expression N] [--seed S] [--jobs 2] [--show N] [--json]

Sentences: the 432 training sentences (true slots found by longest match against the slot lists) and N
random fills of each of the 80 Rhino expressions (true slots known by construction; default 10, seed 2024).
A sentence passes when the top intent is orderDrink and, for every true slot, the FIRST entity of that name
in hark's output has the true value — the rule the upstream score.py applies to `hark recognize` lines.
Failures are grouped by cause (which slot, which wrong value, whether the wrong value came from a span
overlapping another slot's value).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402
import speechlib  # noqa: E402

BARISTA = os.path.join(speechlib.ROOT, "Intents", "barista.json")


def parse(hark, text):
    proc = subprocess.run([hark, "parse", "--workspace", BARISTA, "--json", text], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"hark parse {text!r}: exit {proc.returncode}: {proc.stderr.strip()[:200]}")
    return harklib.parse_report(proc.stdout, "hark parse")


def nested(result):
    """Entities whose span lies strictly inside another entity's span of a different type (e.g. size "medium"
    inside roast "medium roast"): harmless to score.py when no size is labelled, but a dialog that echoes
    @size would say it."""
    ents = result.get("entities") or []
    return [e["entity"] + "=" + e["value"] for e in ents
            if any(o is not e and o["entity"] != e["entity"] and o["location"][0] <= e["location"][0]
                   and e["location"][1] <= o["location"][1] and (o["location"][1] - o["location"][0]) >
                   (e["location"][1] - e["location"][0]) for o in ents)]


def judge(text, truth, result):
    """→ (ok, cause or None, first-entity slots)"""
    intents = result.get("intents") or []
    first = {}
    for e in result.get("entities") or []:
        first.setdefault(e["entity"], e["value"])
    if not intents:
        return False, "no intent", first
    if intents[0]["intent"] != "orderDrink":
        return False, f"intent {intents[0]['intent']}", first
    for slot, value in truth.items():
        got = first.get(slot)
        if got != value:
            if got is None:
                return False, f"{slot} missing", first
            # Is the wrong value a piece of another slot's value (an overlapping span)?
            spans = [e for e in result["entities"] if e["entity"] == slot and e["value"] == got]
            inside = any(o["entity"] != slot and o["location"][0] <= s["location"][0] and s["location"][1] <= o["location"][1]
                         for s in spans for o in result["entities"])
            return False, f"{slot}: {got!r} instead of {value!r}" + (" (inside another slot's span)" if inside else ""), first
    return True, None, first


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-expression", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    hark = harklib.hark_binary()
    if not os.path.exists(hark):
        speechlib.die(f"speech_text: {hark} missing: swift build -c release")

    expressions, slots = speechlib.domain()
    reader = speechlib.SlotReader(slots)
    training = [(s, reader.read(s)) for s in speechlib.training_sentences()]
    generated = speechlib.generate_sentences(expressions["orderDrink"], slots, args.per_expression, args.seed)

    report = {"seed": args.seed, "per_expression": args.per_expression}
    causes = collections.Counter()
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, cases in (("training", training), ("generated", generated)):
            results = list(pool.map(lambda c: parse(hark, c[0]), cases))
            ok = 0
            spurious = collections.Counter()
            for (text, truth), result in zip(cases, results):
                for n in nested(result):
                    spurious[n] += 1
                good, cause, first = judge(text, truth, result)
                if good:
                    ok += 1
                else:
                    causes[cause] += 1
                    failures.append({"set": name, "text": text, "want": truth, "got": first, "cause": cause})
            report[name] = {"ok": ok, "n": len(cases), "rate": ok / len(cases),
                            "nested_entities": dict(spurious.most_common())}
    report["causes"] = dict(causes.most_common())
    report["failures"] = failures[:200]
    if args.json:
        print(json.dumps(report))
        return
    for name in ("training", "generated"):
        r = report[name]
        print(f"{name}: {r['ok']}/{r['n']} = {r['rate']:.3f} with intent orderDrink and every slot right; "
              f"entities nested in another slot's span: {r['nested_entities'] or 'none'}")
    for cause, n in causes.most_common():
        print(f"  {n:4d}  {cause}")
    for f in failures[: args.show]:
        print(f"  [{f['set']}] {f['text']!r}: {f['cause']}")


if __name__ == "__main__":
    main()
