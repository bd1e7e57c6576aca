#!/usr/bin/env python3
"""Build Intents/barista.json, the Watson Assistant v1 workspace for the speech-to-intent coffee domain.

usage: make-barista.py [--domain DIR] [--out Intents/barista.json]

Reads ONLY the domain definition in ../shared/benchmarks/speech-to-intent/domain/ (never the audio, never
labels.json, so the benchmark stays a held-out test):
  - rhino-context.yaml       the slot value lists (one dictionary entity per slot, values verbatim, so an
                              entity's `value` is exactly the string the benchmark expects for that slot);
  - training-sentences.txt   the 431 sentences given to the Watson pipeline (intent orderDrink's examples,
                              each with `mentions` marking its slot spans, found by longest match);
  - luis-app.json             cross-check only: its utterances must be the same sentences and its closed
                              lists the same values (the script stops if the three files disagree).
Adds a few counterexamples (requests a café assistant must not take as orders) and a tiny dialog.
The output is deterministic: running it twice gives the same bytes. Standard library only.
"""
import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOTS = ["size", "roast", "numberOfShots", "coffeeDrink", "milkAmount", "sugarAmount"]
DESCRIPTIONS = {
    "size": "Cup size",
    "roast": "Roast of the beans",
    "numberOfShots": "Number of espresso shots",
    "coffeeDrink": "The drink",
    "milkAmount": "Milk or cream, and how much",
    "sugarAmount": "Sugar or sweetener, and how much",
}
# Written for this workspace, not taken from any test set: things people say to a kiosk that are not orders.
COUNTEREXAMPLES = [
    "what's the weather like today",
    "tell me a joke",
    "what time is it",
    "turn on the lights",
    "play some music",
    "how much does a latte cost",
    "where is the bathroom",
    "do you have wifi here",
    "what are your opening hours",
    "can I pay by card",
    "set an alarm for seven",
    "who won the game last night",
    "call me a taxi",
    "is the coffee fair trade",
    "I'm just looking thanks",
    "cancel my order",
]


def find_benchmarks():
    """`shared/benchmarks` searched upward from the repository root (works from a worktree under /work/wt/)."""
    if os.environ.get("HARK_BENCHMARKS"):
        return os.environ["HARK_BENCHMARKS"]
    d = ROOT
    while True:
        candidate = os.path.join(d, "shared", "benchmarks")
        if os.path.isdir(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            sys.exit("make-barista: no shared/benchmarks directory above " + ROOT + " (set HARK_BENCHMARKS)")
        d = parent


def read_rhino_context(path):
    """The slot lists and expressions of rhino-context.yaml. The file is a fixed, simple YAML shape
    (context → expressions → intent → list of quoted strings; context → slots → slot → list), read here
    without a YAML library so the script needs nothing but the standard library."""
    expressions, slots = {}, {}
    section = intent = slot = None
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.strip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        text = line.strip()
        if indent == 2 and text in ("expressions:", "slots:"):
            section = text[:-1]
        elif indent == 4 and text.endswith(":"):
            if section == "expressions":
                intent = text[:-1]
                expressions[intent] = []
            elif section == "slots":
                slot = text[:-1]
                slots[slot] = []
        elif indent == 6 and text.startswith("- "):
            value = text[2:].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            if section == "expressions" and intent:
                expressions[intent].append(value)
            elif section == "slots" and slot:
                slots[slot].append(value)
            else:
                sys.exit(f"make-barista: {path}:{number}: list item outside a known section")
        elif indent > 0 or text != "context:":
            sys.exit(f"make-barista: {path}:{number}: unexpected line {text!r}")
    return expressions, slots


def value_index(slots):
    """(value words, slot, value) for every slot value, longest first, for longest-match span finding."""
    entries = [(tuple(v.lower().split()), slot, v) for slot, values in slots.items() for v in values]
    return sorted(entries, key=lambda e: -len(e[0]))


def mentions_of(text, index):
    """Slot spans of a sentence by longest match, left to right, over whole words; zero-based character
    offsets [start, end) into `text`, as Watson's `mentions[].location`."""
    words = [(m.group(0).lower(), m.start(), m.end()) for m in re.finditer(r"[A-Za-z']+", text)]
    found, i = [], 0
    while i < len(words):
        for value_words, slot, value in index:
            n = len(value_words)
            if tuple(w for w, _, _ in words[i:i + n]) == value_words:
                found.append({"entity": slot, "location": [words[i][1], words[i + n - 1][2]], "value": value})
                i += n
                break
        else:
            i += 1
    return found


def expression_sentences(expression, slots, serial):
    """Every sentence shape one Rhino expression allows: each choice of its optional `[a, b]` groups
    (including none), with slot references `$slot:name` filled by slot values taken in turn (`serial`
    advances through each slot's list), so the grammar generated from the examples covers every order of
    slots the domain allows and the matcher sees every value. → [(text, mentions)]."""
    parts = re.findall(r"\[[^\]]*\]|\$\w+:\w+|[^\s\[\]$]+", expression)
    shapes = [[]]
    for part in parts:
        if part.startswith("["):
            choices = [c.strip() for c in part[1:-1].split(",")] + [""]
            shapes = [shape + ([c] if c else []) for shape in shapes for c in choices]
        else:
            shapes = [shape + [part] for shape in shapes]
    out = []
    for shape in shapes:
        text, mentions = "", []
        for part in shape:
            if text:
                text += " "
            if part.startswith("$"):
                slot = part[1:].split(":")[0]
                values = slots[slot]
                value = values[serial[slot] % len(values)].strip()
                serial[slot] += 1
                mentions.append({"entity": slot, "location": [len(text), len(text) + len(value)]})
                text += value
            else:
                text += part
        out.append((text, mentions))
    return out


def check_luis(luis, sentences, slots):
    problems = []
    utterances = {u["text"].strip().lower() for u in luis.get("utterances", []) if u.get("intent") == "orderDrink"}
    ours = {s.lower() for s in sentences}
    if ours - utterances:
        problems.append(f"{len(ours - utterances)} training sentences are not LUIS utterances")
    for closed in luis.get("closedLists", []):
        lv = sorted(s["canonicalForm"] for s in closed["subLists"])
        if closed["name"] in slots and lv != sorted(slots[closed["name"]]):
            problems.append(f"LUIS closed list {closed['name']} differs from rhino-context.yaml")
    return problems


def text_response(*texts, policy="sequential"):
    return {"generic": [{"response_type": "text", "values": [{"text": t} for t in texts], "selection_policy": policy}]}


def dialog():
    """Welcome; an order echoed back (drink, then milk/sugar through response conditions so no dangling
    "with"); an order without a drink asks for one; anything else says what the assistant does."""
    nodes = [
        {"type": "standard", "title": "Welcome", "conditions": "welcome",
         "output": text_response("Hi, I'm the Hark barista. What can I get you?"),
         "metadata": {}, "dialog_node": "welcome"},
        {"type": "standard", "title": "Order without a drink", "previous_sibling": "welcome",
         "conditions": "#orderDrink && !@coffeeDrink",
         "output": text_response("Sure. Which drink would you like: a latte, a mocha, an americano, an espresso, "
                                 "a cappuccino or a coffee?"),
         "metadata": {}, "dialog_node": "order_no_drink"},
        {"type": "standard", "title": "Order", "previous_sibling": "order_no_drink", "conditions": "#orderDrink",
         "context": {"order": {"size": "@size", "roast": "@roast", "shots": "@numberOfShots",
                               "drink": "@coffeeDrink", "milk": "@milkAmount", "sugar": "@sugarAmount"}},
         "output": {}, "metadata": {}, "dialog_node": "order"},
        {"type": "standard", "title": "Anything else", "previous_sibling": "order", "conditions": "anything_else",
         "output": text_response(
             "Sorry, I only take coffee orders. Try \"a large latte with soy milk\".",
             "I didn't get that. You can say something like \"can I get a small mocha with sugar\".",
             "I'm a barista: tell me the drink, and if you like the size, roast, shots, milk and sugar."),
         "metadata": {}, "dialog_node": "anything_else"},
    ]
    # Response conditions of the order node: the confirmation names every slot that was heard, in the order
    # people say them, and the milk/sugar tail only when there is one.
    head = "One " + "".join(f"<? @{slot} ? @{slot} + ' ' : '' ?>" for slot in ("size", "roast", "numberOfShots")) \
        + "@coffeeDrink"
    cases = [
        ("order_milk_sugar", "@milkAmount && @sugarAmount", head + " with @milkAmount and @sugarAmount, coming up."),
        ("order_milk", "@milkAmount", head + " with @milkAmount, coming up."),
        ("order_sugar", "@sugarAmount", head + " with @sugarAmount, coming up."),
        ("order_plain", "true", head + ", coming up."),
    ]
    previous = None
    for node_id, condition, text in cases:
        node = {"type": "response_condition", "parent": "order", "conditions": condition,
                "output": text_response(text), "metadata": {}, "dialog_node": node_id}
        if previous:
            node["previous_sibling"] = previous
        nodes.append(node)
        previous = node_id
    return nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", default=None, help="the domain/ folder (default: found under shared/benchmarks)")
    ap.add_argument("--out", default=os.path.join(ROOT, "Intents", "barista.json"))
    args = ap.parse_args()
    domain = args.domain or os.path.join(find_benchmarks(), "speech-to-intent", "domain")

    expressions, slots = read_rhino_context(os.path.join(domain, "rhino-context.yaml"))
    if sorted(slots) != sorted(SLOTS) or list(expressions) != ["orderDrink"]:
        sys.exit(f"make-barista: rhino-context.yaml has slots {sorted(slots)} and intents {list(expressions)}; "
                 f"expected {SLOTS} and orderDrink")
    sentences = [" ".join(line.split()) for line in open(os.path.join(domain, "training-sentences.txt"),
                                                          encoding="utf-8") if line.strip()]
    luis = json.load(open(os.path.join(domain, "luis-app.json"), encoding="utf-8"))
    problems = check_luis(luis, sentences, slots)
    if problems:
        sys.exit("make-barista: the domain files disagree: " + "; ".join(problems))

    index = value_index(slots)
    examples, seen = [], set()
    for text in sentences:
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        mentions = mentions_of(text, index)
        if not any(m["entity"] == "coffeeDrink" for m in mentions):
            sys.exit(f"make-barista: no drink found in training sentence {text!r}")
        examples.append({"text": text,
                         "mentions": [{"entity": m["entity"], "location": m["location"]} for m in mentions]})

    # The expressions of rhino-context.yaml are the domain's definition of what an order may look like; the
    # training sentences cover only some of their slot orders ("a single shot medium roast espresso" is
    # missing), and the speech grammar is generated from the examples.
    serial = {slot: 0 for slot in SLOTS}
    for expression in expressions["orderDrink"]:
        for text, mentions in expression_sentences(expression, slots, serial):
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            examples.append({"text": text, "mentions": mentions})

    entities = [{"entity": slot, "description": DESCRIPTIONS[slot], "fuzzy_match": False,
                 "values": [{"type": "synonyms", "value": v, "synonyms": []} for v in slots[slot]]}
                for slot in SLOTS]
    workspace = {
        "name": "Hark barista",
        "description": "Coffee orders, the domain of the speech-to-intent benchmark (Picovoice). Generated by "
                       "scripts/make-barista.py from the benchmark's domain files only: rhino-context.yaml "
                       "(slot values) and training-sentences.txt (examples); never from its audio or labels.",
        "language": "en",
        "metadata": {"api_version": {"major_version": "v1", "minor_version": "2018-07-10"}},
        "intents": [{"intent": "orderDrink", "description": "Order a coffee drink", "examples": examples}],
        "entities": entities,
        "dialog_nodes": dialog(),
        "counterexamples": [{"text": t} for t in COUNTEREXAMPLES],
        "system_settings": {"disambiguation": {"prompt": "Did you mean:", "none_of_the_above_prompt": "None of the above"}},
        "learning_opt_out": True,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(workspace, f, indent=2, ensure_ascii=False)
        f.write("\n")
    n_mentions = sum(len(e["mentions"]) for e in examples)
    print(f"make-barista: {os.path.relpath(args.out)}: 1 intent, {len(examples)} examples ({n_mentions} mentions), "
          f"{len(entities)} entities ({sum(len(v) for v in slots.values())} values), "
          f"{len(COUNTEREXAMPLES)} counterexamples, {len(workspace['dialog_nodes'])} dialog nodes")


if __name__ == "__main__":
    main()
