"""The speech-to-intent domain for the adaptation scripts: grammars, slot reading and scoring.

Standard library + PyYAML only. Reads the benchmark's `domain/rhino-context.yaml` and `labels.json`; never the
test half's audio (clip names starting with 8-f): every function that lists clips takes an explicit set of
leading hex digits and refuses test digits.
"""
import itertools
import json
import os
import re
import sys

import yaml

SLOTS = ["size", "roast", "numberOfShots", "coffeeDrink", "milkAmount", "sugarAmount"]
MODIFIERS = ["numberOfShots", "roast", "size"]
TAILS = ["milkAmount", "sugarAmount"]
DEV_DIGITS = "01234567"


def die(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def find_benchmarks(start=None):
    """`shared/benchmarks`, from $HARK_BENCHMARKS or searched upward from this file."""
    env = os.environ.get("HARK_BENCHMARKS")
    if env:
        if not os.path.isdir(os.path.join(env, "speech-to-intent")):
            die(f"HARK_BENCHMARKS={env}: no speech-to-intent directory there")
        return env
    d = os.path.abspath(start or os.path.dirname(__file__))
    while True:
        cand = os.path.join(d, "shared", "benchmarks")
        if os.path.isdir(os.path.join(cand, "speech-to-intent")):
            return cand
        parent = os.path.dirname(d)
        if parent == d:
            die("no shared/benchmarks directory above this script; set HARK_BENCHMARKS")
        d = parent


def speech_dir():
    return os.path.join(find_benchmarks(), "speech-to-intent")


def load_domain():
    """(carriers, articles, slots) from rhino-context.yaml, lower case."""
    path = os.path.join(speech_dir(), "domain", "rhino-context.yaml")
    ctx = yaml.safe_load(open(path, encoding="utf-8"))["context"]
    first = ctx["expressions"]["orderDrink"][0]
    choices = re.findall(r"\[([^\]]*)\]", first)
    if len(choices) < 2:
        die(f"{path}: first expression has no carrier/article choice lists")
    carriers = [" ".join(c.split()).lower() for c in choices[0].split(",")]
    articles = [" ".join(c.split()).lower() for c in choices[1].split(",")]
    slots = {name: [" ".join(v.split()).lower() for v in values] for name, values in ctx["slots"].items()}
    return carriers, articles, slots


def labels():
    return json.load(open(os.path.join(speech_dir(), "labels.json"), encoding="utf-8"))


def norm(v):
    return " ".join(str(v).lower().split())


def clips(digits):
    """Clip ids (no extension) of the clean audio whose names start with one of `digits` (dev only)."""
    bad = set(digits.lower()) - set(DEV_DIGITS)
    if bad:
        die(f"refusing clip digits {''.join(sorted(bad))}: only the dev half (0-7) may be used")
    names = os.listdir(os.path.join(speech_dir(), "clean"))
    return sorted(n[:-5] for n in names if n.endswith(".flac") and n[0].lower() in digits)


def _alt(seqs):
    return " | ".join(" ".join(f"<{w}>" for w in s) for s in seqs)


def grammar(carriers, articles, slots, fixed=None):
    """A factored JSGF of the domain (carrier, article, any order of any subset of the modifiers, the drink,
    an optional milk/sugar tail in either order). With `fixed` (slot -> value), the slots are forced to exactly
    the labelled values and the labelled set (the carrier and article stay free): a forced alignment grammar."""
    def values(name):
        if fixed is not None:
            return [norm(fixed[name])]
        return slots[name]

    if fixed is None:
        mods = [p for r in range(1, 4) for c in itertools.combinations(MODIFIERS, r)
                for p in itertools.permutations(c)]
        tails = [("milkAmount",), ("sugarAmount",), ("milkAmount", "sugarAmount"), ("sugarAmount", "milkAmount")]
        mod_opt, tail_opt = True, True
    else:
        have = [m for m in MODIFIERS if m in fixed]
        mods = list(itertools.permutations(have)) if have else []
        t = [s for s in TAILS if s in fixed]
        tails = list(itertools.permutations(t)) if t else []
        mod_opt = tail_opt = False
    tail_rules = " | ".join(
        "with " + " and ".join(f"<{s}>" for s in seq) for seq in tails)
    body = "<carrier> <article> "
    if mods:
        body += ("[<modifiers>] " if mod_opt else "<modifiers> ")
    body += "<coffeeDrink>"
    if tails:
        body += (" [<tail>]" if tail_opt else " <tail>")
    lines = ["#JSGF V1.0;", "grammar barista;", "", f"public <order> = {body};",
             "<carrier> = " + " | ".join(carriers) + ";", "<article> = " + " | ".join(articles) + ";"]
    if mods:
        lines.append("<modifiers> = " + _alt(mods) + ";")
    if tails:
        lines.append("<tail> = " + tail_rules + ";")
    for name in SLOTS:
        if fixed is None or name in fixed:
            lines.append(f"<{name}> = " + " | ".join(values(name)) + ";")
    return "\n".join(lines) + "\n"


class SlotReader:
    """Slot values read off a hypothesis by longest match over whole words, left to right; the first value
    found for a slot wins (the benchmark peer's rule)."""

    def __init__(self, slots):
        self.phrases = sorted(((tuple(v.split()), name, v) for name, vs in slots.items() for v in vs),
                              key=lambda p: -len(p[0]))

    def read(self, text):
        words = text.lower().split()
        found, i = {}, 0
        while i < len(words):
            for phrase, name, value in self.phrases:
                if tuple(words[i:i + len(phrase)]) == phrase:
                    found.setdefault(name, value)
                    i += len(phrase)
                    break
            else:
                i += 1
        return found


def accepted(label, intent, slots):
    """The upstream rule (score.py): intent matches and every labelled slot matches exactly."""
    return intent == label["intent"] and all(norm(slots.get(k, "")) == norm(v) for k, v in label["slots"].items())
