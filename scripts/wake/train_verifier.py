#!/usr/bin/env python3
"""Train the wake verifier (Sources/HarkSpeech/Wake/WakeVerifier.swift) and write Models/wake-verifier.json.

Data: keyphrase hits on the training streams (make_train.py: voices, sentences and noise the test half never
uses), decoded by WakeEvaluation with `record_features` (each hit's WakeFeatures spectrogram and second-pass
numbers). A hit whose end is within 0.25 s of a phrase's end is the phrase; one outside every positive clip is
not; hits on a positive clip's command (after the phrase) are left out. The inputs are computed as
WakeVerifier.inputs does; crops of the spectrogram 1 and 3 frames either side of the one the spotter uses are
training examples (an end misplaced by up to 60 ms), which the verifier thereby learns to forgive.

The model: ENSEMBLE networks with one hidden layer of HIDDEN tanh units, Adam on minibatches of the log loss (each
class weighing half), L2 on the weights; the streams of every fourth voice are held out to choose the number of
epochs (the lowest held-out loss, checked after each up to MAX_EPOCHS), then the networks are refitted on all voices
for that many epochs, each from its own seed. Deterministic for a seed. The spectrogram enters frame by frame
(`--pool 1`, the default) or averaged over runs of `--pool` frames.

usage: train_verifier.py --data TRUTH RESULTS RUN [--data ...] [--out Models/wake-verifier.json] [--seed 7] [--pool 1]
       train_verifier.py --score --data TRUTH RESULTS RUN --model Models/wake-verifier.json   (writes the run's
       streams and every hit with features, its probability added as `verifier`, to stdout: score.py reads it as it
       is, for choosing the thresholds on dev)
"""
import argparse
import json
import math
import sys

import numpy as np

BANDS, FRAMES_ALL, FRAMES, OFFSET = 24, 56, 50, 3
HIDDEN, ENSEMBLE = 32, 3
L2, RATE, BATCH = 1e-2, 1e-3, 256
SHIFTS = (-3, -1, 1, 3)
MAX_EPOCHS = 20


def inputs(features, word_margin, seconds, kws, pool, offset=OFFSET):
    spec = np.asarray(features, dtype=np.float64).reshape(FRAMES_ALL, BANDS)[offset:offset + FRAMES]
    spec = (spec - spec.mean(axis=0, keepdims=True)).reshape(FRAMES // pool, pool, BANDS).mean(axis=1)
    wm = -20.0 if word_margin is None else min(10.0, max(-20.0, word_margin))
    return np.concatenate([spec.reshape(-1), [wm, min(1.5, max(0.0, seconds)), min(20.0, max(-60.0, kws))]])


def hits_with_labels(truth_path, results_path, run):
    with open(truth_path) as handle:
        truth = {s["path"]: s for s in json.load(handle)["streams"]}
    rows = []
    with open(results_path) as handle:
        for line in handle:
            row = json.loads(line)
            if row["run"] != run or row["type"] != "hit" or "features" not in row:
                continue
            positives = [i for i in truth[row["stream"]]["items"] if i["kind"] == "positive"]
            label = None
            if any(abs(row["end"] - p["phrase_end"]) <= 0.25 for p in positives):
                label = 1
            elif not any(p["start"] - 0.3 <= row["end"] <= p["end"] + 0.3 for p in positives):
                label = 0
            row["label"] = label
            rows.append(row)
    return truth, rows


def fit(x, y, w, epochs, seed, l2=L2, rate=RATE, check=None):
    """One network, Adam on minibatches of BATCH examples in a fresh order each epoch (the seed fixes every draw);
    with `check` = (x, y, w), also the held-out loss after each epoch."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    params = [rng.normal(0, 1 / math.sqrt(d), (d, HIDDEN)).astype(np.float32), np.zeros(HIDDEN, np.float32),
              rng.normal(0, 1 / math.sqrt(HIDDEN), HIDDEN).astype(np.float32), np.zeros(1, np.float32)]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    weights = w / w.sum()
    losses, step = [], 0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        for first in range(0, n, BATCH):
            batch = order[first:first + BATCH]
            xb, yb = x[batch], y[batch]
            wb = weights[batch] * (n / len(batch))  # each batch's weights sum to about 1, as the whole set's do
            w1, b1, w2, b2 = params
            h = np.tanh(xb @ w1 + b1)
            p = 1 / (1 + np.exp(-(h @ w2 + b2[0])))
            g = ((p - yb) * wb).astype(np.float32)  # d loss / d z, weighted
            gh = np.outer(g, w2) * (1 - h ** 2)
            step += 1
            for i, grad in enumerate((xb.T @ gh + l2 * w1, gh.sum(axis=0), h.T @ g + l2 * w2, np.array([g.sum()], np.float32))):
                moments[i] = 0.9 * moments[i] + 0.1 * grad
                squares[i] = 0.999 * squares[i] + 0.001 * grad ** 2
                params[i] = params[i] - rate * (moments[i] / (1 - 0.9 ** step)) / (np.sqrt(squares[i] / (1 - 0.999 ** step)) + 1e-8)
        if check:
            losses.append((weighted_loss([params], *check), epoch))
    return (params, losses) if check else params


def logits(models, x):
    return np.mean([np.tanh(x @ w1 + b1) @ w2 + b2[0] for w1, b1, w2, b2 in models], axis=0)


def weighted_loss(models, x, y, w):
    p = 1 / (1 + np.exp(-logits(models, x)))
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return float(-(w * (y * np.log(p) + (1 - y) * np.log(1 - p))).sum())


def class_weights(y):
    w = np.where(y == 1, 0.5 / max(1, (y == 1).sum()), 0.5 / max(1, (y == 0).sum()))
    return w


def dataset(rows, shifts, pool):
    xs, ys, groups = [], [], []
    for row in rows:
        for shift in shifts:
            xs.append(inputs(row["features"], row.get("word_margin"), row["end"] - row["start"], row["kws"], pool, OFFSET + shift))
            ys.append(row["label"])
            groups.append(row["voice_number"])
    return np.array(xs), np.array(ys, dtype=np.float64), np.array(groups)


def train(args):
    rows, voices = [], []
    for truth_path, results_path, run in args.data:
        truth, these = hits_with_labels(truth_path, results_path, run)
        names = sorted({truth[r["stream"]]["voice"] for r in these})
        for row in these:
            row["voice_number"] = len(voices) + names.index(truth[row["stream"]]["voice"])
        voices += names
        rows += [r for r in these if r["label"] is not None]
    positives = sum(r["label"] for r in rows)
    print(f"{len(rows)} labelled hits ({positives} phrases, {len(rows) - positives} other) from {len(voices)} voices", file=sys.stderr)
    x, y, g = dataset(rows, SHIFTS, args.pool)
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
    xs = ((x - mean) / std).astype(np.float32)
    held = g % 4 == 3
    fit_x, fit_y = xs[~held], y[~held]
    val_x, val_y = xs[held], y[held]
    _, losses = fit(fit_x, fit_y, class_weights(fit_y), MAX_EPOCHS, args.seed, check=(val_x, val_y, class_weights(val_y)))
    for loss, epoch in losses:
        print(f"epoch {epoch}: held-out voices' loss {loss:.4f}", file=sys.stderr)
    best_epochs = min(losses)[1]
    print(f"refitting on every voice for {best_epochs} epochs", file=sys.stderr)
    models = [fit(xs, y, class_weights(y), best_epochs, args.seed + k) for k in range(ENSEMBLE)]

    def numbers(values):
        return [float(f"{v:.5g}") for v in np.asarray(values).reshape(-1)]

    document = {
        "_comment": ("Wake verifier (Sources/HarkSpeech/Wake/WakeVerifier.swift), made by scripts/wake/train_verifier.py "
                     f"(seed {args.seed}, pool {args.pool}, {best_epochs} epochs, {len(rows)} hits of {len(voices)} training voices; "
                     "docs/wake-phrase.md, 'The verifier')."),
        "phrase": "hey hark", "bands": BANDS, "frames": FRAMES, "pool": args.pool,
        "mean": numbers(mean), "std": numbers(std),
        "networks": [{"hidden_weights": [numbers(w1[:, j]) for j in range(HIDDEN)], "hidden_bias": numbers(b1),
                      "output_weights": numbers(w2), "output_bias": float(f"{b2[0]:.5g}")} for w1, b1, w2, b2 in models],
    }
    with open(args.out, "w") as handle:
        json.dump(document, handle, separators=(",", ":"))
        handle.write("\n")
    print(f"wrote {args.out}", file=sys.stderr)


def load_model(path):
    with open(path) as handle:
        doc = json.load(handle)
    models = [(np.array(n["hidden_weights"]).T, np.array(n["hidden_bias"]), np.array(n["output_weights"]), np.array([n["output_bias"]]))
              for n in doc["networks"]]
    return np.array(doc["mean"]), np.array(doc["std"]), models, doc["pool"]


def score(args):
    mean, std, models, pool = load_model(args.model)
    _, results, run = args.data[0]
    with open(results) as handle:
        for line in handle:
            row = json.loads(line)
            if row["run"] != run:
                continue
            if row["type"] != "hit":
                print(json.dumps(row))  # the stream's own line: score.py needs its length and processing time
                continue
            if "features" not in row:
                continue
            x = (inputs(row["features"], row.get("word_margin"), row["end"] - row["start"], row["kws"], pool) - mean) / std
            p = float(1 / (1 + np.exp(-logits(models, x[None, :])[0])))
            del row["features"]
            row["verifier"] = p
            print(json.dumps(row))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs=3, action="append", required=True, metavar=("TRUTH", "RESULTS", "RUN"),
                        help="make_train.py's truth.json, WakeEvaluation's results (with record_features) and the run's name")
    parser.add_argument("--out", default="Models/wake-verifier.json")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pool", type=int, default=1, choices=[1, 2, 5, 10], help="spectrogram frames averaged into one step")
    parser.add_argument("--score", action="store_true")
    parser.add_argument("--model")
    args = parser.parse_args()
    score(args) if args.score else train(args)


if __name__ == "__main__":
    main()
