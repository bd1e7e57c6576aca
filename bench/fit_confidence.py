#!/usr/bin/env python3
"""Fit the matcher's confidence model (Sources/HarkCore/Matcher/ConfidenceModel.swift) across many workspaces.

usage: python3 bench/fit_confidence.py [--seed N] [--out bench/out/fit]
Needs numpy (Debian's python3-numpy). $HARK overrides the binary (default .build/release/hark).

The confidence of the top intent should be the probability that it is right, for a workspace of any size and
for sentences it was and was not built for. So the model is fitted on many workspaces at once, each asked
its own held-out sentences (right or wrong, by what the classifier picked) and sentences of other domains
(always wrong):
  - Snips 2017 *training* files: 4 of the 7 intents with 5, 10, 20 or 50 examples each (the held-out 3
    intents' sentences are out of scope), and all 7 with 300 examples asked sentences of the `full` files
    that are not among the 300. The `validate` files, which bench/fewshot.py reports on, are never read.
  - The three Watson exports (../shared/benchmarks/watson-workspaces) and Intents/home.json: 5-fold held-out
    examples, and draws of 4 intents with 5 or 10 examples each (other intents' examples are out of scope).
  - Cross-domain sentences: Snips training sentences for the Watson and home workspaces, Watson and home
    examples for the Snips ones.
Each workspace weighs the same in the fit, its in-scope and out-of-scope halves equally: no one data set decides.
The fit is an L2-regularised logistic regression (Newton's method) on ConfidenceEvidence.features, which
`hark eval --cases-out` writes with each case (names and order as Swift has them); it prints the coefficients as
the Swift literal to paste, and the fit data's ECE and reliability table.
"""
import argparse
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harklib  # noqa: E402
import fewshotlib as fs  # noqa: E402

def tasks(seed):
    """Yield (tag, workspace, cases) for every fitting workspace."""
    rng = random.Random(seed)
    train = fs.snips("train")
    full = fs.snips("full")
    home = json.load(open(harklib.HOME_WORKSPACE, encoding="utf-8"))
    watsons = {n: fs.watson(n) for n in ("car-dashboard", "bank-simple", "serverless-home-automation")}
    other_domain = []  # Watson and home examples: out of scope for Snips workspaces
    for ws in [home, *watsons.values()]:
        for texts in fs.watson_examples(ws).values():
            other_domain += texts
    snips_sentences = [t for texts in train.values() for t in texts]

    for per_intent in (5, 10, 20, 50):
        for d in range(8):
            chosen, held_out, examples = fs.draw(rng, train, 4, per_intent)
            used = {harklib.normalise(t) for texts in examples.values() for t in texts}
            cases = []
            for i in chosen:
                rest = [t for t in train[i] if harklib.normalise(t) not in used]
                cases += [{"text": t, "intent": i} for t in rng.sample(rest, 30)]
            for i in held_out:
                cases += [{"text": t, "intent": None} for t in rng.sample(train[i], 30)]
            cases += [{"text": t, "intent": None} for t in rng.sample(other_domain, 40)]
            yield f"snips-{per_intent}-{d}", fs.workspace(f"snips {per_intent}/{d}", examples), cases

    used = {harklib.normalise(t) for texts in train.values() for t in texts}
    cases = []
    for i in fs.SNIPS_INTENTS:
        rest = [t for t in full[i] if harklib.normalise(t) not in used]
        cases += [{"text": t, "intent": i} for t in rng.sample(rest, 60)]
    cases += [{"text": t, "intent": None} for t in rng.sample(other_domain, 200)]
    yield "snips-300", fs.workspace("snips 300", train), cases

    for name, ws in [("home", home), *watsons.items()]:
        examples = fs.watson_examples(ws)
        for k, (kept, held) in enumerate(fs.kfold(examples, 5, seed)):
            w = dict(ws)
            w["intents"] = [{"intent": i, "examples": [{"text": t} for t in texts]} for i, texts in kept.items()]
            w["counterexamples"] = ws.get("counterexamples", [])
            cases = held + [{"text": t, "intent": None} for t in rng.sample(snips_sentences, 60)]
            yield f"{name}-fold{k}", w, cases
        pools = {i: t for i, t in examples.items() if len(t) >= 8}
        if len(pools) >= 6:
            for per_intent in (5, 10):
                for d in range(3):
                    chosen, held_out, ex = fs.draw(rng, pools, 4, per_intent)
                    used = {harklib.normalise(t) for texts in ex.values() for t in texts}
                    cases = [{"text": t, "intent": i} for i in chosen for t in pools[i] if harklib.normalise(t) not in used]
                    others = [t for i in held_out for t in pools[i]]
                    cases += [{"text": t, "intent": None} for t in rng.sample(others, min(len(others), 60))]
                    cases += [{"text": t, "intent": None} for t in rng.sample(snips_sentences, 30)]
                    w = fs.workspace(f"{name} {per_intent}/{d}", ex, entities=ws.get("entities", []))
                    yield f"{name}-{per_intent}-{d}", w, cases


# The share of each workspace's weight on its in-scope sentences. Half would treat a missed command and a
# false accept as equally bad; a voice appliance that ignores real commands is worse, and large workspaces
# (Snips 300 an intent) must keep accepting sentences full of names.
IN_SCOPE_SHARE = 0.75


def collect(seed, out):
    rows = []  # (features, right, weight, tag, in_scope)
    names = None
    for tag, w, cases in tasks(seed):
        _, outcomes = fs.run_eval(w, cases, out, tag, outcomes=True)
        n_in = sum(1 for o in outcomes if o["expected"] is not None)
        n_out = len(outcomes) - n_in
        for o in outcomes:
            in_scope = o["expected"] is not None
            weight = (IN_SCOPE_SHARE / n_in) if in_scope else ((1 - IN_SCOPE_SHARE) / n_out)
            if names is None:
                names = list(o["features"])
            rows.append(([o["features"][n] for n in names], 1.0 if in_scope and o["top"] == o["expected"] else 0.0, weight, tag, in_scope))
        print(f"fit: {tag}: {n_in} in scope, {n_out} out of scope", file=sys.stderr)
    return names, rows


def fit(rows, l2):
    import numpy as np
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    w = w / w.sum() * len(rows)
    beta = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], l2)
    reg[0] = 0
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ beta))
        g = x.T @ (w * (p - y)) + reg * beta * len(rows)
        h = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(reg * len(rows))
        step = np.linalg.solve(h, g)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return beta


def reliability(conf, right):
    bins = [[0, 0.0, 0] for _ in range(10)]
    for c, r in zip(conf, right):
        b = bins[min(9, int(c * 10))]
        b[0] += 1
        b[1] += c
        b[2] += r
    n = len(conf)
    ece = sum(b[0] / n * abs(b[2] / b[0] - b[1] / b[0]) for b in bins if b[0])
    return ece, bins


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--out", default=os.path.join(harklib.OUT, "fit"))
    args = parser.parse_args()
    names, rows = collect(args.seed, args.out)
    beta = fit(rows, args.l2)
    conf = [1 / (1 + math.exp(-sum(b * f for b, f in zip(beta, r[0])))) for r in rows]
    for name, b in zip(names, beta):
        print(f"  {name:26s} {b:+.4f}")
    print("static let coefficients: [Double] = [" + ", ".join(f"{b:.4f}" for b in beta) + "]")
    for label, keep in (("in scope", lambda r: r[4]), ("all", lambda r: True)):
        idx = [k for k, r in enumerate(rows) if keep(r)]
        ece, bins = reliability([conf[k] for k in idx], [rows[k][1] for k in idx])
        print(f"fit data, {label}: {len(idx)} cases, ECE {ece:.4f}")
        for k, b in enumerate(bins):
            if b[0]:
                print(f"  {k / 10:.1f}-{(k + 1) / 10:.1f}  {b[0]:6d}  conf {b[1] / b[0]:.3f}  acc {b[2] / b[0]:.3f}")
    harklib.write_json(os.path.join(args.out, "coefficients.json"),
                       {"features": names, "coefficients": list(beta), "seed": args.seed, "l2": args.l2,
                        "cases": len(rows), "provenance": harklib.provenance()})


if __name__ == "__main__":
    main()
