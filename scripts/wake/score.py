#!/usr/bin/env python3
"""Score the wake-phrase evaluation: hit rate and false wakes per hour, keyphrase pass alone and confirmed.

Reads truth.json (make_eval.py) and the results the Swift side wrote (WakeEvaluation: one line per keyphrase
hit with its keyphrase score `kws` (log10) and second-pass `margin`, one line per stream). A hit whose phrase
end falls between the start of a positive clip and 0.6 s after the phrase's estimated end is a detection of
that clip; every other hit is a false wake. False wakes are counted per hour of audio without the phrase
(the streams less the positive clips).

Because the Swift run records every hit above its own (loose) threshold, with its margin, stricter
thresholds are scored by filtering: exact for the confirmation threshold (a rejected and an accepted hit
change the stream alike), and a close approximation for the keyphrase threshold (a loose hit restarts the
search a little earlier than a strict run would).

usage: score.py TRUTH RESULTS --run NAME [--kws -20 -25 ...] [--margin -2 -1.5 ...] [--measure word_margin]
               [--duration-weight W] [--verifier P ...]
With --verifier, a confirmed hit must also have a verifier probability (`verifier`, written by the spotter when it
has a verifier, or by train_verifier.py --score) of at least P; with --at, the first P is the one tabled.
"""
import argparse
import json
import statistics
from collections import defaultdict

TOLERANCE_AFTER = 0.6
TOLERANCE_BEFORE = 0.2


def load(truth_path, results_path, run):
    with open(truth_path) as handle:
        truth = {s["path"]: s for s in json.load(handle)["streams"]}
    hits, seconds = defaultdict(list), {}
    with open(results_path) as handle:
        for line in handle:
            row = json.loads(line)
            if row["run"] != run:
                continue
            if row["type"] == "hit":
                hits[row["stream"]].append(row)
            else:
                seconds[row["stream"]] = (row["seconds"], row["processing_seconds"])
    return {path: truth[path] for path in seconds}, hits, seconds


def group_of(stream):
    if stream["voice"] == "real":
        return stream["condition"]
    return f"{stream['source']} {stream['condition']}"


# The spotter credits a hit's length up to this many seconds (WakePhraseSpotter.durationCreditSeconds).
DURATION_CREDIT_SECONDS = 0.7


def value(hit, measure, duration_weight):
    """The second pass's score of a hit: `measure` plus `duration_weight` × the hit's length in seconds (at most
    DURATION_CREDIT_SECONDS of it)."""
    if hit.get(measure) is None:
        return None
    return hit[measure] + duration_weight * min(hit["end"] - hit["start"], DURATION_CREDIT_SECONDS)


def score(streams, hits, kws, margin, measure="margin", duration_weight=0.0, verifier=None):
    """Per group: positives, detected, false wakes, negative hours, timing errors (margin None = pass alone)."""
    groups = defaultdict(lambda: {"positives": 0, "detected": 0, "false": 0, "hours": 0.0, "timing": [], "false_list": []})
    for path, stream in streams.items():
        g = groups[group_of(stream)]
        positives = [item for item in stream["items"] if item["kind"] == "positive"]
        g["positives"] += len(positives)
        g["hours"] += (stream["seconds"] - sum(i["end"] - i["start"] for i in positives)) / 3600
        found = set()
        for hit in hits.get(path, []):
            if hit["kws"] < kws:
                continue
            if margin is not None:
                second = value(hit, measure, duration_weight)
                if second is None or second < margin or hit["rejection"] == "longer than maximum_phrase_seconds":
                    continue
                if verifier is not None and hit.get("verifier", -1) < verifier:
                    continue
            match = next((n for n, item in enumerate(positives)
                          if item["start"] - TOLERANCE_BEFORE <= hit["end"] <= item["phrase_end"] + TOLERANCE_AFTER), None)
            if match is None:
                g["false"] += 1
                text = next((i["text"] for i in stream["items"] if i["start"] <= hit["end"] <= i["end"] + 0.3), "(gap)")
                g["false_list"].append(f"{stream['voice']}: {text} @{hit['end']:.2f} kws {hit['kws']:.1f} margin {hit.get('margin', float('nan')):.2f}")
            elif match not in found:
                found.add(match)
                g["timing"].append(hit["end"] - positives[match]["phrase_end"])
        g["detected"] += len(found)
    return groups


def totals(groups):
    positives = sum(g["positives"] for g in groups.values())
    detected = sum(g["detected"] for g in groups.values())
    false = sum(g["false"] for g in groups.values())
    hours = sum(g["hours"] for g in groups.values())
    return positives, detected, false, hours


def row(name, g):
    rate = f"{g['detected']}/{g['positives']} ({100 * g['detected'] / g['positives']:.0f}%)" if g["positives"] else "–"
    per_hour = g["false"] / g["hours"] if g["hours"] else 0
    return f"| {name} | {rate} | {g['false']} | {g['hours'] * 60:.1f} | {per_hour:.1f} |"


def table(groups, title):
    lines = [f"**{title}**", "", "| audio | hit rate | false wakes | minutes without the phrase | false wakes / hour |",
             "|---|---|---|---|---|"]
    for name in sorted(groups):
        lines.append(row(name, groups[name]))
    positives, detected, false, hours = totals(groups)
    lines.append(row("**all**", {"positives": positives, "detected": detected, "false": false, "hours": hours}))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("truth")
    parser.add_argument("results")
    parser.add_argument("--run", required=True)
    parser.add_argument("--kws", type=float, nargs="*", default=[-10, -15, -20, -25, -30, -35, -40])
    parser.add_argument("--margin", type=float, nargs="*", default=[-3, -2.5, -2, -1.75, -1.5, -1.25, -1, -0.75, -0.5])
    parser.add_argument("--at", type=float, nargs=2, metavar=("KWS", "MARGIN"), help="print full tables at these thresholds")
    parser.add_argument("--false", action="store_true", help="list the false wakes at --at")
    parser.add_argument("--measure", choices=["margin", "word_margin"], default="margin",
                        help="the second pass's score: over the whole window (the spotter's) or its weakest word")
    parser.add_argument("--duration-weight", type=float, default=0.0,
                        help="added to the measure per second of the hit's length (the spotter's confirmation_duration_weight)")
    parser.add_argument("--verifier", type=float, nargs="*", default=[None],
                        help="also require the hit's verifier probability (`verifier`) to reach each of these")
    args = parser.parse_args()
    streams, hits, seconds = load(args.truth, args.results, args.run)
    audio = sum(s for s, _ in seconds.values())
    work = sum(p for _, p in seconds.values())
    print(f"run {args.run}: {len(streams)} streams, {audio / 3600:.2f} h of audio, real-time factor {work / audio:.4f} "
          f"(both passes, this machine)\n")
    print("| kws threshold (log10) | confirmation margin | verifier | hit rate | false wakes | false wakes / hour |")
    print("|---|---|---|---|---|---|")
    for kws in args.kws:
        for margin in [None] + args.margin:
            for verifier in (args.verifier if margin is not None else [None]):
                positives, detected, false, hours = totals(score(streams, hits, kws, margin, args.measure, args.duration_weight, verifier))
                name = "– (pass alone)" if margin is None else f"{margin:g}"
                shown = "–" if verifier is None else f"{verifier:g}"
                print(f"| {kws:g} | {name} | {shown} | {detected}/{positives} ({100 * detected / max(1, positives):.1f}%) | {false} | "
                      f"{false / hours:.2f} |")
    if args.at:
        kws, margin = args.at
        for title, m in ((f"keyphrase pass alone, kws ≥ 1e{kws:g}", None),
                         (f"with confirmation, kws ≥ 1e{kws:g}, margin ≥ {margin:g}", margin)):
            groups = score(streams, hits, kws, m, args.measure, args.duration_weight, args.verifier[0] if m is not None else None)
            print("\n" + table(groups, title))
            timing = [t for g in groups.values() for t in g["timing"]]
            if timing:
                print(f"\nphrase end found {statistics.median(timing):+.2f} s from the estimate (median), "
                      f"90% within {sorted(abs(t) for t in timing)[int(0.9 * (len(timing) - 1))]:.2f} s")
            if args.false:
                for g in groups.values():
                    for line in g["false_list"]:
                        print("  false:", line)


if __name__ == "__main__":
    main()
