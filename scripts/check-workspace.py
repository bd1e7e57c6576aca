#!/usr/bin/env python3
"""Check that workspaces are well-formed Watson Assistant v1 exports (the shape, not the behaviour).

usage: check-workspace.py WORKSPACE.json...
Checks the top-level fields, unique intent/entity/node names, that every sibling group is one
`previous_sibling` chain, that parents exist, that `#intent`/`@entity` references in conditions exist,
and that node actions are well-formed client actions. Exit 1 with one line per problem.
Standard library only; `make test` runs it on Intents/*.json.
"""
import json
import re
import sys

TOP = ["name", "description", "language", "metadata", "intents", "entities", "dialog_nodes",
       "counterexamples", "system_settings", "learning_opt_out"]
NODE_TYPES = {"standard", "frame", "slot", "event_handler", "response_condition", "folder"}
SPECIAL = {"anything_else", "conversation_start", "welcome", "irrelevant", "true", "false"}


def check(path):
    problems = []
    try:
        ws = json.load(open(path, encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        return [str(error)]
    problems += [f"missing top-level field {k!r}" for k in TOP if k not in ws]
    if not isinstance(ws.get("metadata", {}).get("api_version"), dict):
        problems.append("metadata.api_version missing")

    intents = [i["intent"] for i in ws.get("intents", [])]
    problems += [f"intent {n!r} defined twice" for n in sorted({n for n in intents if intents.count(n) > 1})]
    for intent in ws.get("intents", []):
        texts = [e["text"].lower() for e in intent.get("examples", [])]
        problems += [f"#{intent['intent']}: example {t!r} twice" for t in sorted({t for t in texts if texts.count(t) > 1})]
    entities = {e["entity"] for e in ws.get("entities", [])}

    nodes = ws.get("dialog_nodes", [])
    by_id = {}
    for node in nodes:
        node_id = node.get("dialog_node")
        if not node_id:
            problems.append(f"node without dialog_node: {node.get('title')!r}")
            continue
        if node_id in by_id:
            problems.append(f"node {node_id!r} defined twice")
        by_id[node_id] = node
        if node.get("type", "standard") not in NODE_TYPES:
            problems.append(f"node {node_id!r}: unknown type {node.get('type')!r}")
        for ref in re.findall(r"#([\w-]+)", node.get("conditions") or ""):
            if ref not in intents:
                problems.append(f"node {node_id!r}: condition uses unknown intent #{ref}")
        for ref in re.findall(r"@([\w-]+)", node.get("conditions") or ""):
            if ref not in entities:
                problems.append(f"node {node_id!r}: condition uses unknown entity @{ref}")
        for action in node.get("actions", []):
            if not action.get("name") or not action.get("result_variable"):
                problems.append(f"node {node_id!r}: action needs name and result_variable: {action}")
            if action.get("type", "client") != "client":
                problems.append(f"node {node_id!r}: action {action.get('name')!r} is not a client action")

    groups = {}
    for node in nodes:
        groups.setdefault(node.get("parent"), []).append(node)
        if node.get("parent") is not None and node["parent"] not in by_id:
            problems.append(f"node {node.get('dialog_node')!r}: parent {node['parent']!r} does not exist")
    for parent, siblings in groups.items():
        ids = {n["dialog_node"] for n in siblings}
        firsts = [n["dialog_node"] for n in siblings if n.get("previous_sibling") is None]
        if len(firsts) != 1:
            problems.append(f"siblings under {parent!r}: {len(firsts)} nodes without previous_sibling {firsts}")
        previous = [n.get("previous_sibling") for n in siblings if n.get("previous_sibling") is not None]
        for n in siblings:
            p = n.get("previous_sibling")
            if p is not None and p not in ids:
                problems.append(f"node {n['dialog_node']!r}: previous_sibling {p!r} is not a sibling")
        problems += [f"siblings under {parent!r}: {p!r} is previous_sibling of two nodes"
                     for p in sorted({p for p in previous if previous.count(p) > 1})]
    return problems


def main():
    status = 0
    for path in sys.argv[1:]:
        problems = check(path)
        for problem in problems:
            print(f"{path}: {problem}", file=sys.stderr)
        status |= bool(problems)
        if not problems:
            print(f"{path}: ok")
    return status


if __name__ == "__main__":
    sys.exit(main())
