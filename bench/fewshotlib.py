"""Small workspaces drawn from public data, shared by the few-shot benchmark (bench/fewshot.py) and the fit of
the confidence model (bench/fit_confidence.py). Standard library only.

Snips 2017 (`../shared/benchmarks/nlu-snips-2017`): 7 intents; `train` has 300 sentences an intent, `validate`
100, `full` about 2,000 (a superset of `train`). The fit draws from `train` and `full` only; the benchmark
reports on `validate`.
"""
import json
import os
import random

import harklib

SNIPS = os.path.join(harklib.SHARED, "nlu-snips-2017")
WATSON = os.path.join(harklib.SHARED, "watson-workspaces")
SNIPS_INTENTS = ["AddToPlaylist", "BookRestaurant", "GetWeather", "PlayMusic", "RateBook", "SearchCreativeWork",
                 "SearchScreeningEvent"]


def snips(split):
    """{intent: [sentence, ...]} for split train | validate | full, in file order, deduplicated."""
    out = {}
    for intent in SNIPS_INTENTS:
        suffix = {"train": f"train_{intent}.json", "validate": f"validate_{intent}.json",
                  "full": f"train_{intent}_full.json"}[split]
        path = os.path.join(SNIPS, intent, suffix)
        raw = open(path, "rb").read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        seen, rows = set(), []
        for item in json.loads(text)[intent]:
            sentence = " ".join("".join(part["text"] for part in item["data"]).split())
            key = harklib.normalise(sentence)
            if sentence and key not in seen:
                seen.add(key)
                rows.append(sentence)
        out[intent] = rows
    return out


def watson(name):
    with open(os.path.join(WATSON, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def watson_examples(workspace):
    """{intent: [example text, ...]} of a Watson export."""
    return {i["intent"]: [e["text"] for e in i.get("examples", [])] for i in workspace.get("intents", [])}


def workspace(name, examples, entities=None):
    """A minimal Watson v1 workspace: intents with these examples, optional entities, no dialog."""
    return {
        "name": name, "language": "en", "description": "drawn by bench/fewshotlib.py",
        "intents": [{"intent": i, "examples": [{"text": t} for t in texts]} for i, texts in examples.items()],
        "entities": entities or [], "dialog_nodes": [], "counterexamples": [],
        "metadata": {"api_version": {"major_version": "v1", "minor_version": "2018-09-20"}},
    }


def draw(rng, pools, n_intents, per_intent):
    """Pick n_intents of the pools' intents and per_intent examples of each; returns (chosen, held_out, examples)."""
    names = sorted(pools)
    chosen = sorted(rng.sample(names, n_intents))
    held_out = [n for n in names if n not in chosen]
    examples = {i: rng.sample(pools[i], min(per_intent, len(pools[i]))) for i in chosen}
    return chosen, held_out, examples


def kfold(examples, folds, seed):
    """Split each intent's examples into `folds` parts; yields (train examples, held-out cases)."""
    rng = random.Random(seed)
    parts = {}
    for intent, texts in examples.items():
        shuffled = texts[:]
        rng.shuffle(shuffled)
        parts[intent] = [shuffled[k::folds] for k in range(folds)]
    for k in range(folds):
        train = {i: [t for j, p in enumerate(ps) if j != k for t in p] for i, ps in parts.items()}
        train = {i: t for i, t in train.items() if t}
        cases = [{"text": t, "intent": i} for i, ps in parts.items() for t in ps[k] if i in train]
        yield train, cases


def run_eval(workspace_dict, cases, directory, tag, binary=None, outcomes=False):
    """Write the workspace and cases under directory, run `hark eval --json`; returns (report, outcomes or None)."""
    os.makedirs(directory, exist_ok=True)
    ws_path = os.path.join(directory, f"{tag}.workspace.json")
    cases_path = os.path.join(directory, f"{tag}.cases.jsonl")
    with open(ws_path, "w", encoding="utf-8") as f:
        json.dump(workspace_dict, f, ensure_ascii=False)
    harklib.write_jsonl(cases_path, cases)
    out_path = os.path.join(directory, f"{tag}.outcomes.jsonl") if outcomes else None
    saved = os.environ.get("HARK")
    if binary:
        os.environ["HARK"] = binary
    try:
        report = harklib.hark_eval(ws_path, cases_path, extra=["--cases-out", out_path] if out_path else [])
    finally:
        if binary:
            if saved is None:
                os.environ.pop("HARK", None)
            else:
                os.environ["HARK"] = saved
    return report, (harklib.read_jsonl(out_path) if out_path else None)


def metrics(report):
    """The few-shot figures of one eval report: top-intent accuracy, (a), (b), ECE in scope and over all cases."""
    cal = report["calibration"]
    n = cal["cases"]
    correct = sum(b["correct"] for b in cal["bins"])
    ins = report["in_scope"]
    oos = report["out_of_scope"]
    return {
        "top_accuracy": correct / n if n else None,
        "confident": ins["confident"] / ins["cases"] if ins["cases"] else None,
        "rejected": oos["rejection_rate"] if oos["cases"] else None,
        "ece": cal["ece"] if n else None,
        "ece_all": report["calibration_all"]["ece"],
    }
