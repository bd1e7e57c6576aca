"""Shared helpers for the speech-to-intent benchmark (bench/speech.py, speech_peer.py, speech_text.py).

Standard library only, so that the PocketSphinx peer's venv can import it too.
The domain is read with the same code that builds Intents/barista.json (scripts/make-barista.py), so the
workspace, the peer's grammar and the text check agree on slot values and span finding.
"""
import importlib.util
import itertools
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOTS = ["size", "roast", "numberOfShots", "coffeeDrink", "milkAmount", "sugarAmount"]
SNRS = [6, 9, 12, 15, 18, 21, 24]
SEED = 20240601


def _load_make_barista():
    spec = importlib.util.spec_from_file_location("make_barista", os.path.join(ROOT, "scripts", "make-barista.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_barista = _load_make_barista()


def find_benchmarks():
    """`shared/benchmarks`, searched upward from the repository root ($HARK_BENCHMARKS overrides)."""
    return make_barista.find_benchmarks()


def speech_dir():
    return os.path.join(find_benchmarks(), "speech-to-intent")


def domain():
    """(expressions, slots) of rhino-context.yaml."""
    return make_barista.read_rhino_context(os.path.join(speech_dir(), "domain", "rhino-context.yaml"))


def training_sentences():
    path = os.path.join(speech_dir(), "domain", "training-sentences.txt")
    return [" ".join(line.split()) for line in open(path, encoding="utf-8") if line.strip()]


class SlotReader:
    """Slot values read off a transcript by longest match over whole words (the same rule that marks the
    workspace's mentions)."""

    def __init__(self, slots):
        self.index = make_barista.value_index(slots)

    def read(self, text):
        found = {}
        for m in make_barista.mentions_of(text, self.index):
            found.setdefault(m["entity"], m["value"])
        return found


def in_half(name, half):
    first = os.path.basename(name)[0].lower()
    if half == "dev":
        return first in "01234567"
    if half == "test":
        return first in "89abcdef"
    return True


# --- Rhino expressions ------------------------------------------------------------------------------------

_CHOICE = re.compile(r"\[([^\]]*)\]")
_SLOT = re.compile(r"\$(\w+):(\w+)")


def parse_expression(expression):
    """A Rhino expression → list of parts: ("choice", [phrases]), ("slot", name) or ("word", w)."""
    parts, pos = [], 0
    for token in re.finditer(r"\[[^\]]*\]|\$\w+:\w+|[^\s\[\]$]+", expression):
        text = token.group(0)
        if text.startswith("["):
            parts.append(("choice", [" ".join(p.split()) for p in text[1:-1].split(",")]))
        elif text.startswith("$"):
            parts.append(("slot", _SLOT.fullmatch(text).group(1)))
        else:
            parts.append(("word", text))
        pos = token.end()
    return parts


def slot_sequence(parts):
    """The expression with choices abstracted away: a tuple of slot names and literal words."""
    return tuple(("$" + v) if k == "slot" else (v if k == "word" else "[]") for k, v in parts)


def generate_sentences(expressions, slots, per_expression, seed):
    """Sentences from the grammar with their true slots: `per_expression` random fills of every expression
    (fixed seed), article and carrier chosen at random too."""
    rng = random.Random(seed)
    out = []
    for expression in expressions:
        parts = parse_expression(expression)
        for _ in range(per_expression):
            words, truth = [], {}
            for kind, value in parts:
                if kind == "choice":
                    words.append(rng.choice(value))
                elif kind == "slot":
                    v = rng.choice(slots[value])
                    words.append(v)
                    truth[value] = v
                else:
                    words.append(value)
            out.append((" ".join(words), truth))
    return out


# --- JSGF for the peer ------------------------------------------------------------------------------------

def factored_jsgf(expressions, slots):
    """A JSGF grammar with the same language as the Rhino expressions, written factored: carrier, article,
    any order of the optional modifiers, the drink, the optional milk/sugar tail. Verifies that the expression
    set really is that product (and raises otherwise), so the grammar never drifts from the domain file."""
    parsed = [parse_expression(e) for e in expressions]
    carriers = {tuple(p[0][1]) for p in parsed}
    articles = {tuple(p[1][1]) for p in parsed}
    if len(carriers) != 1 or len(articles) != 1 or any(p[0][0] != "choice" or p[1][0] != "choice" for p in parsed):
        raise ValueError("expressions do not share one carrier list and one article list")
    modifiers, tails, sequences = set(), set(), set()
    for p in parsed:
        rest = slot_sequence(p[2:])
        sequences.add(rest)
        i = rest.index("$coffeeDrink")
        modifiers.add(rest[:i])
        tails.add(rest[i + 1:])
    if {m + ("$coffeeDrink",) + t for m in modifiers for t in tails} != sequences:
        raise ValueError("expressions are not a product of modifier orders and tails; write the grammar flat")

    def alt(seqs):
        return " | ".join(" ".join(f"<{w[1:]}>" if w.startswith("$") else w for w in s) for s in seqs)

    def values(name):
        return " | ".join(v.lower() for v in slots[name])

    mods = sorted((m for m in modifiers if m), key=lambda m: (len(m), m))
    tail = sorted((t for t in tails if t), key=lambda t: (len(t), t))
    lines = [
        "#JSGF V1.0;",
        "// Generated by bench/speech_peer.py --write-grammar from rhino-context.yaml (the speech-to-intent",
        "// benchmark's domain). Same language as its 80 expressions, factored: the flat form needs 107k",
        "// search nodes in PocketSphinx, this one ~4.6k, for the same result (docs/measurements.md).",
        "grammar barista;",
        "",
        "public <order> = <carrier> <article> [<modifiers>] <coffeeDrink> [<tail>];",
        "<carrier> = " + " | ".join(c.lower() for c in next(iter(carriers))) + ";",
        "<article> = " + " | ".join(next(iter(articles))) + ";",
        "<modifiers> = " + alt(mods) + ";",
        "<tail> = " + alt(tail) + ";",
    ]
    for name in SLOTS:
        lines.append(f"<{name}> = {values(name)};")
    return "\n".join(lines) + "\n"


def check_permutations_complete(expressions):
    """True when every order of every subset of the modifiers appears (used by the text check's report)."""
    parsed = [slot_sequence(parse_expression(e)[2:]) for e in expressions]
    mods = {s[: s.index("$coffeeDrink")] for s in parsed}
    names = {w for m in mods for w in m}
    want = {p for r in range(len(names) + 1) for c in itertools.combinations(sorted(names), r)
            for p in itertools.permutations(c)}
    return want == mods


def die(message):
    print(message, file=sys.stderr)
    sys.exit(1)


# --- mixing by the benchmark's own rule (numpy, imported here only: the peer's venv never calls these) ------


def upstream_mixer():
    """The benchmark's own mix.py as a module: its FLAC reader, frame-energy rule and WAV writer."""
    spec = importlib.util.spec_from_file_location("upstream_mix", os.path.join(speech_dir(), "mix.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_wav_float(path):
    """A 16 kHz mono 16-bit WAV as floats in -1…1; anything else stops with the file's name."""
    import wave
    import numpy as np
    with wave.open(path) as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            die(f"{path}: expected 16 kHz mono s16")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768.0

