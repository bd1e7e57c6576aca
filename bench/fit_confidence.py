#!/usr/bin/env python3
"""Fit the matcher's confidence model (Sources/HarkCore/Matcher/ConfidenceModel.swift) across many workspaces.

usage: python3 bench/fit_confidence.py [--seed N] [--l2 X] [--write] [--reuse] [--in-scope-share X]
                                      [--large-in-scope-share X] [--out bench/out/fit]
Needs numpy (Debian's python3-numpy). $HARK overrides the binary (default .build/release/hark). About 8 minutes
on two cores, most of it the networks' training.

The confidence of the top intent should be the probability that it is right, for a workspace of any size and
for sentences it was and was not built for. So the model is fitted on many workspaces at once, each asked
its own held-out sentences (right or wrong, by what the classifier picked) and sentences of other domains
(always wrong):
  - Snips 2017 *training* files: 4 of the 7 intents with 5, 10, 20 or 50 examples each (the held-out 3
    intents' sentences are out of scope); all 7 with 50 to 300 examples, asked sentences of the `full` files
    they were not given; the same with entities and mentions (the benchmark's convert.py workspace of the
    train files, drawn down). The `validate` files, which bench/fewshot.py reports on, are never read.
  - The three Watson exports (../shared/benchmarks/watson-workspaces) and Intents/home.json: 5-fold held-out
    examples, and tutorial-size command sets drawn from them (3, 4 or 6 intents, 5 or 10 examples each, no
    counterexamples; the other intents' examples are out of scope).
  - Cross-domain sentences: Snips training sentences, the other exports' examples and the coffee-order
    training sentences for the Watson and home workspaces; Watson and home examples for the Snips ones.
Each small workspace weighs the same, its in-scope sentences IN_SCOPE_SHARE of it; a large one weighs
LARGE_WEIGHT small ones, its in-scope sentences LARGE_IN_SCOPE_SHARE of it. The model is ENSEMBLE networks of
HIDDEN tanh units on ConfidenceEvidence.features, which `hark eval --cases-out` writes with each case (names and
order as Swift has them), trained by full-batch Adam on the weighted log loss. --write writes them to
Sources/HarkCore/Matcher/ConfidenceModel+Parameters.swift; the fit data's ECE and reliability table are printed.
"""
import argparse
import json
import math
import os
import random
import subprocess
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

    # Large workspaces: all 7 intents with 50 to 300 examples each, asked `full` sentences they were not given.
    for per_intent, copies in ((50, 2), (100, 2), (200, 2), (300, 1)):
        for d in range(copies):
            examples = {i: (train[i] if per_intent >= len(train[i]) else rng.sample(train[i], per_intent)) for i in fs.SNIPS_INTENTS}
            used = {harklib.normalise(t) for texts in examples.values() for t in texts}
            cases = []
            for i in fs.SNIPS_INTENTS:
                rest = [t for t in full[i] if harklib.normalise(t) not in used]
                cases += [{"text": t, "intent": i} for t in rng.sample(rest, 60)]
            cases += [{"text": t, "intent": None} for t in rng.sample(other_domain, 200)]
            yield f"snips-7x{per_intent}-{d}", fs.workspace(f"snips 7x{per_intent}/{d}", examples), cases

    # The same with entities, as a user who annotates writes them: convert.py's workspace of the train files
    # (one dictionary entity per Snips slot, examples with mentions), its examples drawn down.
    converted = os.path.join(harklib.OUT, "fit-snips-train")
    subprocess.run([sys.executable, os.path.join(fs.SNIPS, "convert.py"), converted, "--train", "train"], check=True,
                   stdout=subprocess.DEVNULL)
    annotated = json.load(open(os.path.join(converted, "workspace.json"), encoding="utf-8"))
    by_intent = {i["intent"]: i["examples"] for i in annotated["intents"]}
    for n_intents, per_intent, copies in ((7, 50, 1), (7, 100, 1), (7, 200, 1), (7, 300, 2), (4, 10, 4), (4, 20, 2)):
        for d in range(copies):
            chosen = sorted(rng.sample(fs.SNIPS_INTENTS, n_intents))
            examples = {i: (by_intent[i] if per_intent >= len(by_intent[i]) else rng.sample(by_intent[i], per_intent)) for i in chosen}
            used = {harklib.normalise(e["text"]) for ex in examples.values() for e in ex}
            cases = []
            for i in chosen:
                rest = [t for t in full[i] if harklib.normalise(t) not in used]
                cases += [{"text": t, "intent": i} for t in rng.sample(rest, 60 if n_intents == 7 else 30)]
            for i in fs.SNIPS_INTENTS:
                if i not in chosen:
                    cases += [{"text": t, "intent": None} for t in rng.sample(train[i], 30)]
            cases += [{"text": t, "intent": None} for t in rng.sample(other_domain, 200 if n_intents == 7 else 40)]
            w = dict(annotated)
            w["intents"] = [{"intent": i, "examples": ex} for i, ex in examples.items()]
            yield f"snips-entities-{n_intents}x{per_intent}-{d}", w, cases

    coffee = [line.strip() for line in open(os.path.join(harklib.SHARED, "speech-to-intent", "domain", "training-sentences.txt"), encoding="utf-8") if line.strip()]
    sources = [("home", home), *watsons.items()]
    for name, ws in sources:
        examples = fs.watson_examples(ws)
        # Sentences of other command sets and questions: the other exports' examples and coffee orders.
        elsewhere = coffee + [t for other, ows in sources if other != name for texts in fs.watson_examples(ows).values() for t in texts]
        for k, (kept, held) in enumerate(fs.kfold(examples, 5, seed)):
            w = dict(ws)
            w["intents"] = [{"intent": i, "examples": [{"text": t} for t in texts]} for i, texts in kept.items()]
            w["counterexamples"] = ws.get("counterexamples", [])
            cases = held + [{"text": t, "intent": None} for t in rng.sample(snips_sentences, 60)]
            cases += [{"text": t, "intent": None} for t in rng.sample(elsewhere, 60)]
            yield f"{name}-fold{k}", w, cases
        # Tutorial-size command sets: 3, 4 or 6 of the intents, 5 or 10 examples each, no counterexamples.
        pools = {i: t for i, t in examples.items() if len(t) >= 8}
        for n_intents in (3, 4, 6):
            if len(pools) < n_intents + 2:
                continue
            for per_intent in (5, 10):
                for d in range(4):
                    chosen, held_out, ex = fs.draw(rng, pools, n_intents, per_intent)
                    used = {harklib.normalise(t) for texts in ex.values() for t in texts}
                    cases = [{"text": t, "intent": i} for i in chosen for t in pools[i] if harklib.normalise(t) not in used]
                    others = [t for i in held_out for t in pools[i]]
                    cases += [{"text": t, "intent": None} for t in rng.sample(others, min(len(others), 40))]
                    cases += [{"text": t, "intent": None} for t in rng.sample(snips_sentences, 30)]
                    cases += [{"text": t, "intent": None} for t in rng.sample(elsewhere, 40)]
                    w = fs.workspace(f"{name} {n_intents}x{per_intent}/{d}", ex, entities=ws.get("entities", []))
                    yield f"{name}-{n_intents}x{per_intent}-{d}", w, cases


# The share of each workspace's weight on its in-scope sentences. Half would treat a missed command and a
# false accept as equally bad; a voice appliance that ignores real commands is worse, and large workspaces
# (Snips 300 an intent) must keep accepting sentences full of names.
IN_SCOPE_SHARE = 0.7
# Large workspaces (Snips with 50-300 examples an intent, the full exports by 5-fold) are few among the fitting
# workspaces but are what most users with a real workspace run; each weighs this many small draws.
LARGE_WEIGHT = 10.0
# A large workspace's own sentences carry titles and names of every kind that its examples never saw; a user who
# wrote 300 examples an intent expects them accepted, so its in-scope half weighs more than a small draw's.
LARGE_IN_SCOPE_SHARE = 0.85


def is_large(tag):
    return tag.startswith("snips-7x") or tag.startswith("snips-entities-7x") or "-fold" in tag


def weighted(rows, in_scope_share=IN_SCOPE_SHARE, large_in_scope_share=LARGE_IN_SCOPE_SHARE):
    """The same cases, each weighted so that a workspace's in-scope sentences carry `in_scope_share` of its weight
    (`large_in_scope_share` for a large one, which also weighs LARGE_WEIGHT small ones) and its other sentences the rest."""
    counts = {}
    for r in rows:
        counts.setdefault(r[3], [0, 0])[0 if r[4] else 1] += 1
    out = []
    for features, right, _, tag, in_scope in rows:
        large = is_large(tag)
        share = large_in_scope_share if large else in_scope_share
        n_in, n_out = counts[tag]
        weight = (share / n_in) if in_scope else ((1 - share) / n_out)
        if large:
            weight *= LARGE_WEIGHT
        out.append((features, right, weight, tag, in_scope))
    return out


def collect(seed, out):
    rows = []  # (features, right, weight (0 here: main() weighs them with weighted()), tag, in_scope)
    names = None
    for tag, w, cases in tasks(seed):
        _, outcomes = fs.run_eval(w, cases, out, tag, outcomes=True)
        n_in = sum(1 for o in outcomes if o["expected"] is not None)
        n_out = len(outcomes) - n_in
        for o in outcomes:
            in_scope = o["expected"] is not None
            if names is None:
                names = list(o["features"])
            rows.append(([o["features"][n] for n in names], 1.0 if in_scope and o["top"] == o["expected"] else 0.0, 0.0, tag, in_scope))
        print(f"fit: {tag}: {n_in} in scope, {n_out} out of scope", file=sys.stderr)
    return names, rows


HIDDEN = 16
EPOCHS = 3000
# The confidence is the mean log-odds of this many networks trained from different random starts: one network's
# answer on a kind of workspace the fit saw little of depends on its start; the mean much less.
ENSEMBLE = 4


def fit(rows, l2, seed):
    """A one-hidden-layer network (tanh units, logistic output) on standardised features, trained full-batch with
    Adam on the weighted log loss plus an L2 penalty on the weights. Deterministic for a seed."""
    import numpy as np
    x = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    w = w / w.sum()
    mean = x.mean(0)
    scale = x.std(0)
    scale[scale < 1e-9] = 1
    xn = (x - mean) / scale
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 0.5, (x.shape[1], HIDDEN)), np.zeros(HIDDEN), rng.normal(0, 0.5, HIDDEN), np.zeros(1)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr = 0.05
    for t in range(1, EPOCHS + 1):
        hidden = np.tanh(xn @ params[0] + params[1])
        p = 1 / (1 + np.exp(-(hidden @ params[2] + params[3][0])))
        dz = w * (p - y)
        dh = np.outer(dz, params[2]) * (1 - hidden ** 2)
        grads = [xn.T @ dh + l2 * params[0], dh.sum(0), hidden.T @ dz + l2 * params[2], np.array([dz.sum()])]
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            params[i] -= lr * (m[i] / (1 - 0.9 ** t)) / (np.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-8)
    return {"input_mean": mean.tolist(), "input_scale": scale.tolist(), "hidden_weights": params[0].T.tolist(),
            "hidden_bias": params[1].tolist(), "output_weights": params[2].tolist(), "output_bias": float(params[3][0])}


def predict(models, features):
    total = 0.0
    for model in models:
        z = model["output_bias"]
        for row, b, out in zip(model["hidden_weights"], model["hidden_bias"], model["output_weights"]):
            a = b + sum(wi * (x - mu) / sd for wi, x, mu, sd in zip(row, features, model["input_mean"], model["input_scale"]))
            z += out * math.tanh(a)
        total += z
    return 1 / (1 + math.exp(-total / len(models)))


SWIFT_PATH = os.path.join(harklib.ROOT, "Sources", "HarkCore", "Matcher", "ConfidenceModel+Parameters.swift")


def write_swift(models, names, seed, l2, cases):
    # Every network standardises with the fit data's statistics, so Swift keeps them once.
    assert all(m["input_mean"] == models[0]["input_mean"] and m["input_scale"] == models[0]["input_scale"] for m in models)
    def numbers(values):
        return ", ".join(f"{v:.6g}" for v in values)
    lines = [
        "// Written by bench/fit_confidence.py: do not edit by hand; run `python3 bench/fit_confidence.py --write` instead.",
        f"// Fitted on {cases} cases (seed {seed}, L2 {l2}, {len(models)} networks of {HIDDEN} hidden units, {EPOCHS} epochs).",
        "",
        "extension ConfidenceModel {",
        "    /// The fitted networks. Features are in the order of `ConfidenceEvidence.featureNames`: " + ", ".join(names) + ".",
        "    /// How each input is standardised before the networks see it (the fit data's mean and standard deviation).",
        f"    static let inputMean: [Double] = [{numbers(models[0]['input_mean'])}]",
        f"    static let inputScale: [Double] = [{numbers(models[0]['input_scale'])}]",
        "    static let networks: [Network] = [",
    ]
    for model in models:
        lines += [
            "        Network(",
            "            hiddenWeights: [",
            *[f"                [{numbers(row)}]," for row in model["hidden_weights"]],
            "            ],",
            f"            hiddenBias: [{numbers(model['hidden_bias'])}],",
            f"            outputWeights: [{numbers(model['output_weights'])}],",
            f"            outputBias: {model['output_bias']:.6g}",
            "        ),",
        ]
    lines += ["    ]", "}", ""]
    with open(SWIFT_PATH, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


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
    parser.add_argument("--l2", type=float, default=1e-4)
    parser.add_argument("--write", action="store_true", help=f"write the fitted parameters to {os.path.relpath(SWIFT_PATH, harklib.ROOT)}")
    parser.add_argument("--out", default=os.path.join(harklib.OUT, "fit"))
    parser.add_argument("--reuse", action="store_true", help="refit on the cases the last run collected (OUT/rows.json)")
    parser.add_argument("--in-scope-share", type=float, default=IN_SCOPE_SHARE,
                        help=f"a small workspace's weight on its in-scope sentences (default {IN_SCOPE_SHARE}); an experiment, "
                             "docs/language-engine.md has what 0.5 and 0.6 did")
    parser.add_argument("--large-in-scope-share", type=float, default=LARGE_IN_SCOPE_SHARE,
                        help=f"the same for a large workspace (default {LARGE_IN_SCOPE_SHARE}); an experiment too")
    args = parser.parse_args()
    for flag, value in (("--in-scope-share", args.in_scope_share), ("--large-in-scope-share", args.large_in_scope_share)):
        if not 0 < value < 1:
            parser.error(f"{flag} {value}: must be between 0 and 1")
    cache = os.path.join(args.out, "rows.json")
    if args.reuse and os.path.exists(cache):
        names, rows = json.load(open(cache))
    else:
        names, rows = collect(args.seed, args.out)
        harklib.write_json(cache, [names, rows])
    rows = weighted(rows, args.in_scope_share, args.large_in_scope_share)
    model = [fit(rows, args.l2, args.seed * 100 + k) for k in range(ENSEMBLE)]
    conf = [predict(model, r[0]) for r in rows]
    if args.write:
        write_swift(model, names, args.seed, args.l2, len(rows))
        print(f"wrote {os.path.relpath(SWIFT_PATH, harklib.ROOT)}")
    for label, keep in (("in scope", lambda r: r[4]), ("all", lambda r: True)):
        idx = [k for k, r in enumerate(rows) if keep(r)]
        ece, bins = reliability([conf[k] for k in idx], [rows[k][1] for k in idx])
        print(f"fit data, {label}: {len(idx)} cases, ECE {ece:.4f}")
        for k, b in enumerate(bins):
            if b[0]:
                print(f"  {k / 10:.1f}-{(k + 1) / 10:.1f}  {b[0]:6d}  conf {b[1] / b[0]:.3f}  acc {b[2] / b[0]:.3f}")
    harklib.write_json(os.path.join(args.out, "coefficients.json"),
                       {"features": names, "model": model, "seed": args.seed, "l2": args.l2,
                        "cases": len(rows), "provenance": harklib.provenance()})


if __name__ == "__main__":
    main()
