#!/usr/bin/env python3
"""Compare two `hark run --events` logs (x86 and arm64) event by event; exit 1 on any difference.

Compared: each event's kind, turn and text, and every other field except what differs between two runs of the
same binary (id, time, the decoding's wall and CPU milliseconds and the result delay, the picture's file name
and size, the data directory's path). Numbers
(confidences, snr_db) must agree within a small tolerance: the two builds run the same float code on different
CPUs. Usage: compare-events.py X86.jsonl ARM64.jsonl
"""
import json
import re
import sys

# Fields that change from run to run on one machine.
VOLATILE = {"id", "time", "decode_ms", "decode_cpu_ms", "result_delay_ms", "path", "bytes"}
# Per-field tolerance for numbers (absolute). Anything not listed must be equal.
TOLERANCE = {"acoustic_confidence": 0.01, "confidence": 0.01, "snr_db": 0.5, "audio_seconds": 0.01}
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z")


def load(path):
    events = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"compare-events: {path}:{n}: not JSON ({e}): {line[:120]}")
            if not isinstance(event, dict) or "kind" not in event:
                sys.exit(f"compare-events: {path}:{n}: not an event object: {line[:120]}")
            events.append(event)
    if not events:
        sys.exit(f"compare-events: {path}: no events")
    return events


def normal(value, data_dirs):
    """The value with file-name time stamps and the run's data directory taken out."""
    if isinstance(value, str):
        for d in data_dirs:
            value = value.replace(d, "<data>")
        return STAMP.sub("<stamp>", value)
    if isinstance(value, list):
        return [normal(v, data_dirs) for v in value]
    if isinstance(value, dict):
        return {k: normal(v, data_dirs) for k, v in value.items() if k not in VOLATILE}
    return value


def differences(a, b, where, key=None):
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if type(a) is not type(b):
            return [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'x86' if k in a else 'arm64'}")
            else:
                out += differences(a[k], b[k], f"{where}.{k}", k)
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]", key)]
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        if abs(a - b) > TOLERANCE.get(key, 0):
            return [f"{where}: {a} != {b}"]
        return []
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare-events.py X86.jsonl ARM64.jsonl")
    x86, arm = load(sys.argv[1]), load(sys.argv[2])
    dirs = [e.get("path", "").rsplit("/pictures/", 1)[0] for e in x86 + arm if e.get("kind") == "picture"]
    dirs = sorted({d for d in dirs if d}, key=len, reverse=True)
    problems = []
    if len(x86) != len(arm):
        problems.append(f"{len(x86)} events on x86, {len(arm)} on arm64")
    for i, (a, b) in enumerate(zip(x86, arm)):
        problems += differences(normal(a, dirs), normal(b, dirs), f"event {i + 1} ({a.get('kind')})")
    exact = sum(1 for a, b in zip(x86, arm) if normal(a, dirs) == normal(b, dirs))
    if problems:
        print("compare-events: x86 and arm64 differ:", *problems[:40], sep="\n  ")
        return 1
    kinds = " ".join(e["kind"] for e in x86)
    alike = "all identical" if exact == len(x86) else f"{exact} identical, the rest within the tolerance"
    print(f"compare-events: the same {len(x86)} events ({alike} but for times and ids): {kinds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
